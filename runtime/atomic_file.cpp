#include "runtime/atomic_file.hpp"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "runtime/error.hpp"

namespace distancies {
namespace {

// Temporaries being written, for the signal handler: fixed storage, no allocation in the handler.
constexpr int kSlots = 8;
constexpr std::size_t kPathMax = 4096;
char g_paths[kSlots][kPathMax];
std::atomic<bool> g_used[kSlots];

extern "C" void remove_temporaries_and_die(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (g_used[i].load()) ::unlink(g_paths[i]);
  std::signal(sig, SIG_DFL);  // then die of the signal, as without us
  std::raise(sig);
}

void install_handlers() {
  static const bool installed = [] {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) continue;  // someone else's: keep it
      struct sigaction sa {};
      sa.sa_handler = remove_temporaries_and_die;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
    return true;
  }();
  (void)installed;
}

int claim_slot(const std::string& temp) {
  if (temp.size() >= kPathMax) return -1;
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_used[i].load() || !g_used[i].compare_exchange_strong(expected, true)) continue;
    std::memcpy(g_paths[i], temp.c_str(), temp.size() + 1);
    return i;
  }
  return -1;  // more than kSlots at once: still removed on errors, not on signals
}

// Test hooks (tests/CMakeLists.txt, cli.convert_*): fail as a full disk would after N bytes;
// pause once after the first write so a signal can arrive mid-file.
long long env_number(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoll(v) : -1;
}

}  // namespace

AtomicFile::AtomicFile(const std::string& path, bool binary)
    : path_(path), temp_(path + ".tmp." + std::to_string(::getpid())) {
  install_handlers();
  slot_ = claim_slot(temp_);
  f_ = std::fopen(temp_.c_str(), binary ? "wb" : "w");
  if (!f_) {
    const int e = errno;
    if (slot_ >= 0) g_used[slot_] = false;
    throw Error(path_ + ": cannot create: " + std::strerror(e));
  }
}

AtomicFile::~AtomicFile() {
  if (f_) std::fclose(f_);
  if (!committed_) std::remove(temp_.c_str());
  if (slot_ >= 0) g_used[slot_] = false;
}

void AtomicFile::write(const void* data, std::size_t bytes) {
  if (bytes == 0) return;
  static const long long fail_after = env_number("DISTANCIES_TEST_FAIL_WRITE_AFTER");
  if (fail_after >= 0 && static_cast<long long>(written_ + bytes) > fail_after)
    throw Error(path_ + ": cannot write: " + std::strerror(ENOSPC) + " (injected by DISTANCIES_TEST_FAIL_WRITE_AFTER)");
  if (std::fwrite(data, 1, bytes, f_) != bytes) throw Error(path_ + ": cannot write: " + std::strerror(errno));
  static const long long pause_ms = env_number("DISTANCIES_TEST_PAUSE_AFTER_FIRST_WRITE_MS");
  if (pause_ms > 0 && written_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
  written_ += bytes;
}

void AtomicFile::commit() {
  const bool flushed = std::fflush(f_) == 0;
  const int e = errno;
  const bool closed = std::fclose(f_) == 0;
  f_ = nullptr;
  if (!flushed || !closed) throw Error(path_ + ": cannot write: " + std::strerror(flushed ? errno : e));
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw Error(path_ + ": cannot rename the written file into place: " + std::strerror(errno));
  committed_ = true;
}

}  // namespace distancies
