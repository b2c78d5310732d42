// Built with DISTANCIES_DEBUG_SYNC=1 whatever the build's option: the synchronising
// CUDA_CHECK_LAUNCH compiles, and says so through kDebugSync. (Run: exits 0 when it does.)
#include "runtime/cuda_check.hpp"

static_assert(distancies::kDebugSync, "DISTANCIES_DEBUG_SYNC=1 must turn kDebugSync on");

// Never called: it only has to compile.
void after_a_launch() { CUDA_CHECK_LAUNCH(); }

int main() { return distancies::kDebugSync ? 0 : 1; }
