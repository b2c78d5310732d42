// What the layers must reject: device code that reaches up into the runtime.
#include "runtime/error.hpp"
