#include "variants/intersect/query_pool.hpp"

namespace distancies::intersect {

unsigned hardware_threads() {
  const unsigned n = std::thread::hardware_concurrency();
  return n ? n : 1;
}

QueryPool::QueryPool(unsigned threads) {
  const unsigned n = threads ? threads : hardware_threads();
  workers_.reserve(n - 1);
  for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this] { worker(); });
}

QueryPool::~QueryPool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void QueryPool::drain() {
  for (;;) {
    const std::size_t i = next_.fetch_add(1, std::memory_order_relaxed);
    if (i >= n_) return;
    try {
      (*work_)(i);
    } catch (...) {
      std::lock_guard<std::mutex> l(mu_);
      if (!error_) error_ = std::current_exception();
      next_.store(n_, std::memory_order_relaxed);  // the batch has failed: claim nothing more
    }
  }
}

void QueryPool::worker() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu_);
      wake_.wait(l, [&] { return stop_ || round_ != seen; });
      if (stop_) return;
      seen = round_;
    }
    drain();
    std::lock_guard<std::mutex> l(mu_);
    if (--busy_ == 0) idle_.notify_all();
  }
}

void QueryPool::run(std::size_t n, const std::function<void(std::size_t)>& work) {
  std::lock_guard<std::mutex> one(run_mu_);
  if (n == 0) return;
  if (workers_.empty() || n == 1) {  // no one to share with: no wake-ups
    for (std::size_t i = 0; i < n; ++i) work(i);
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    work_ = &work;
    n_ = n;
    next_.store(0, std::memory_order_relaxed);
    error_ = nullptr;
    busy_ = static_cast<unsigned>(workers_.size());
    ++round_;
  }
  wake_.notify_all();
  drain();
  std::exception_ptr e;
  {
    std::unique_lock<std::mutex> l(mu_);
    idle_.wait(l, [&] { return busy_ == 0; });
    work_ = nullptr;
    e = error_;
  }
  if (e) std::rethrow_exception(e);
}

}  // namespace distancies::intersect
