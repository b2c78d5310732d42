// Registers every fixture from the registry tables (docs/methodology.md lists them).
#pragma once

namespace distancies::bench {

// gpu: register the GPU fixtures (else only the CPU ones).
void register_fixtures(bool gpu);

// The batched pipelines' families (batch_fixtures.cu).
void register_batch_fixtures();

// The one-block list selections (list_fixtures.cu).
void register_list_fixtures();

// The column-moments study (moments_fixtures.cu).
void register_moments_fixtures();
void register_load_fixtures();
void register_matmul_fixtures();  // matmul_fixtures.cu: the tiled matmul study (docs/matmul.md)  // load_fixtures.cu:
                                  // the model from file to GPU, against its floors
// The posting-list study's families (intersect_fixtures.cu); gpu: also its GPU rows.
void register_intersect_fixtures(bool gpu);
void register_scale_fixtures();  // scale_fixtures.cu: streamed and sharded search (docs/scale.md)
void release_scale_fixtures();   // their communicator, shards and page-locked models, before exit

}  // namespace distancies::bench
