// The embeddings study's fixture registrar (cmake/studies.cmake): the one-query families, then the
// batched, load and scale ones (their files are in harness/bench/).
#include "harness/bench/fixtures.hpp"

namespace distancies::bench {

void register_embeddings_fixtures(bool gpu) {
  register_one_query_fixtures(gpu);
  if (!gpu) return;
  register_batch_fixtures();
  register_load_fixtures();
  register_scale_fixtures();
  register_copy_fixtures();
}

}  // namespace distancies::bench
