// The JSON context block: which GPU, driver, clocks, build and model produced the numbers.
#pragma once

namespace distancies::bench {

void add_context();

}  // namespace distancies::bench
