// A fixed set of threads that share out a batch's queries: the CPU peers' way of using every
// core. Each query runs whole on one thread; threads take the next unclaimed query from a
// shared counter, so a long query does not hold up a fixed share of the batch.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace distancies::intersect {

class QueryPool {
 public:
  // threads: how many run a batch, the caller's own included; 0 means every hardware thread.
  explicit QueryPool(unsigned threads = 0);
  ~QueryPool();
  QueryPool(const QueryPool&) = delete;
  QueryPool& operator=(const QueryPool&) = delete;

  unsigned threads() const { return static_cast<unsigned>(workers_.size()) + 1; }
  // Calls work(i) exactly once for every i in [0, n), spread over the threads; returns when all
  // are done and rethrows the first exception a call threw. One batch at a time.
  void run(std::size_t n, const std::function<void(std::size_t)>& work);

 private:
  void worker();
  void drain();

  std::mutex run_mu_;  // one batch at a time
  std::mutex mu_;
  std::condition_variable wake_, idle_;
  std::vector<std::thread> workers_;
  const std::function<void(std::size_t)>* work_ = nullptr;
  std::size_t n_ = 0;
  std::atomic<std::size_t> next_{0};
  std::uint64_t round_ = 0;
  unsigned busy_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

unsigned hardware_threads();  // std::thread::hardware_concurrency(), at least 1

}  // namespace distancies::intersect
