// Host work over [0, n) split into slices on threads of their own where each slice is large enough
// to pay for a thread (min_per_slice items), else done on the calling thread: a large batch's
// staging copy and its answers (docs/methodology.md, "Event spans and wall clocks").
#pragma once
#include <algorithm>
#include <cstddef>
#include <thread>
#include <vector>

namespace distancies {

// fn(lo, hi) over consecutive slices covering [0, n); the calling thread takes the first slice.
template <class F>
void split_host_work(std::size_t n, std::size_t min_per_slice, F&& fn) {
  const std::size_t most = std::max<std::size_t>(1, std::min<std::size_t>(8, std::thread::hardware_concurrency()));
  const std::size_t slices = std::max<std::size_t>(1, std::min(most, n / std::max<std::size_t>(min_per_slice, 1)));
  if (slices == 1) {
    fn(std::size_t(0), n);
    return;
  }
  const std::size_t per = (n + slices - 1) / slices;
  std::vector<std::thread> helpers;
  for (std::size_t s = 1; s < slices; ++s) {
    const std::size_t lo = s * per, hi = std::min(n, lo + per);
    if (lo < hi) helpers.emplace_back([&fn, lo, hi] { fn(lo, hi); });
  }
  fn(std::size_t(0), std::min(n, per));
  for (std::thread& t : helpers) t.join();
}

}  // namespace distancies
