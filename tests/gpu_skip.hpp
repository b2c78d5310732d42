// GPU tests skip, visibly and with the reason, where there is no usable GPU.
#pragma once
#include <gtest/gtest.h>

#include "runtime/device.hpp"

#define DISTANCIES_REQUIRE_GPU()                                                             \
  do {                                                                                       \
    if (!::distancies::device_status().available)                                            \
      GTEST_SKIP() << "no usable CUDA GPU (" << ::distancies::device_status().reason << ")"; \
  } while (0)
