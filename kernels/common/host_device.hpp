// DISTANCIES_HD marks what host and device code share: __host__ __device__ under nvcc, nothing
// for the host compiler (these headers are included from both).
#pragma once

#if defined(__CUDACC__)
#define DISTANCIES_HD __host__ __device__
#else
#define DISTANCIES_HD
#endif
