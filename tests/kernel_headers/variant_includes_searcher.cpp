// What the layers must reject: a study registry that reaches up into a searcher.
#include "variants/embeddings/registry.hpp"
#include "harness/gpu_search.hpp"
