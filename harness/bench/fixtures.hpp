// Registers every fixture from the registry tables (docs/methodology.md lists them).
#pragma once

namespace distancies::bench {

// gpu: register the GPU fixtures (else only the CPU ones): every study's registrar in the order
// of cmake/studies.cmake (register_study_fixtures, generated from the studies' folders).
void register_fixtures(bool gpu);
void register_study_fixtures(bool gpu);

// The embeddings study's families (harness/embeddings/; its registrar, embeddings_fixtures.cu, calls them):
void register_one_query_fixtures(bool gpu);  // one_query_fixtures.cu: floors, dots, stages, pipelines, sequences
void register_batch_fixtures();              // batch_fixtures.cu: the batched pipelines
void register_list_fixtures();               // list_fixtures.cu: the one-block list selections
void register_load_fixtures();               // load_fixtures.cu: the model from file to GPU, against its floors
void register_scale_fixtures();              // scale_fixtures.cu: streamed and sharded search (docs/scale.md)
void register_copy_fixtures();               // copy_fixtures.cu: making each model copy
void release_scale_fixtures();               // their communicator, shards and page-locked models, before exit

}  // namespace distancies::bench
