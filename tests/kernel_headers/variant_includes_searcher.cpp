// What the layers must reject: a study registry that reaches up into a searcher.
#include "harness/embeddings/gpu_search.hpp"
#include "variants/embeddings/registry.hpp"
