#include "harness/scale/rendezvous.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "runtime/error.hpp"

namespace distancies {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kMagic = "distancies-rendezvous";
constexpr double kLineSeconds = 5.0;  // one connection's time to send its line

double seconds_left(Clock::time_point deadline) {
  return std::chrono::duration<double>(deadline - Clock::now()).count();
}

// A socket that closes itself.
struct Socket {
  int fd = -1;
  explicit Socket(int f = -1) : fd(f) {}
  Socket(Socket&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Socket& operator=(Socket&& o) noexcept {
    std::swap(fd, o.fd);
    return *this;
  }
  Socket(const Socket&) = delete;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

bool parse_int(std::string_view s, int lo, int hi, int* out) {
  if (s.empty() || s.size() > 6) return false;
  long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (s.size() > 1 && s[0] == '0') return false;
  if (v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i <= line.size()) {
    const std::size_t j = line.find(' ', i);
    out.push_back(line.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i));
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}

bool printable_token(std::string_view t) {
  if (t.empty() || t.size() > 128) return false;
  for (unsigned char c : t)
    if (c <= ' ' || c > '~') return false;
  return true;
}

// The IPv4 address of `host` (a name or a dotted quad).
sockaddr_in resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0 || !res) throw Error("rendezvous: cannot resolve '" + host + "': " + ::gai_strerror(rc));
  sockaddr_in a{};
  std::memcpy(&a, res->ai_addr, sizeof a);
  ::freeaddrinfo(res);
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  return a;
}

// Reads one line (up to kRendezvousMaxLine bytes) by the deadline; false on timeout, close or
// overlong input.
bool read_line(int fd, Clock::time_point deadline, std::string* line) {
  line->clear();
  char buf[256];
  for (;;) {
    const std::size_t nl = line->find('\n');
    if (nl != std::string::npos) {
      line->resize(nl);
      return true;
    }
    if (line->size() > kRendezvousMaxLine) return false;
    const double left = seconds_left(deadline);
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(left * 1000) + 1);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    line->append(buf, static_cast<std::size_t>(n));
  }
}

void send_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the peer went away: nothing to tell it
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string rendezvous_hello(const std::string& token, int rank, int size) {
  return std::string(kMagic) + " 1 " + token + " " + std::to_string(rank) + " " + std::to_string(size) + "\n";
}

std::optional<RendezvousHello> parse_rendezvous_hello(std::string_view line, std::string* why) {
  auto fail = [&](const char* what) -> std::optional<RendezvousHello> {
    if (why) *why = what;
    return std::nullopt;
  };
  if (line.size() > kRendezvousMaxLine) return fail("the line is too long");
  const auto w = words(line);
  if (w.size() != 5 || w[0] != kMagic) return fail("not a distancies rendezvous hello");
  if (w[1] != "1") return fail("an unknown protocol version");
  if (!printable_token(w[2])) return fail("a malformed token");
  RendezvousHello h;
  h.token = std::string(w[2]);
  if (!parse_int(w[4], 2, 4096, &h.size)) return fail("a malformed world size");
  if (!parse_int(w[3], 1, h.size - 1, &h.rank)) return fail("a rank out of range");
  return h;
}

std::string rendezvous_ok(const void* id, std::size_t bytes) {
  static const char* hex = "0123456789abcdef";
  std::string s = "ok ";
  const auto* p = static_cast<const unsigned char*>(id);
  for (std::size_t i = 0; i < bytes; ++i) s += hex[p[i] >> 4], s += hex[p[i] & 15];
  return s + "\n";
}

bool parse_rendezvous_reply(std::string_view line, void* id, std::size_t bytes, std::string* why) {
  auto fail = [&](const std::string& what) {
    if (why) *why = what;
    return false;
  };
  if (line.size() > kRendezvousMaxLine) return fail("rank 0's reply is too long");
  if (line.rfind("error ", 0) == 0) {
    std::string reason(line.substr(6, 200));
    for (char& c : reason)
      if (static_cast<unsigned char>(c) < ' ' || static_cast<unsigned char>(c) > '~') c = '?';
    return fail("rank 0 refused: " + reason);
  }
  if (line.rfind("ok ", 0) != 0 || line.size() != 3 + 2 * bytes) return fail("rank 0's reply is malformed");
  auto nibble = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  auto* out = static_cast<unsigned char*>(id);
  for (std::size_t i = 0; i < bytes; ++i) {
    const int hi = nibble(line[3 + 2 * i]), lo = nibble(line[4 + 2 * i]);
    if (hi < 0 || lo < 0) return fail("rank 0's reply is malformed");
    out[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return true;
}

void split_address(const std::string& address, std::string* host, int* port, bool allow_any_port) {
  const std::size_t colon = address.rfind(':');
  int p = 0;
  if (colon == std::string::npos || colon == 0 ||
      !parse_int(std::string_view(address).substr(colon + 1), allow_any_port ? 0 : 1, 65535, &p) ||
      (p == 0 && address.substr(colon + 1) != "0"))
    throw Error("rendezvous address '" + address + "' is not HOST:PORT (port 1 ... 65535)");
  *host = address.substr(0, colon);
  *port = p;
}

void serve_rendezvous(const std::string& address, const std::string& token, int size, const void* id, std::size_t bytes,
                      double timeout_s, const std::function<void(int)>& on_listen) {
  if (!printable_token(token)) throw Error("rendezvous: the job token must be 1 ... 128 printable characters");
  std::string host;
  int port = 0;
  split_address(address, &host, &port, true);
  sockaddr_in a = resolve(host, port);
  Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (s.fd < 0) throw Error(std::string("rendezvous: socket: ") + std::strerror(errno));
  const int one = 1;
  ::setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (::bind(s.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    throw Error("rendezvous: cannot listen on " + address + ": " + std::strerror(errno));
  if (::listen(s.fd, 64) != 0) throw Error(std::string("rendezvous: listen: ") + std::strerror(errno));
  socklen_t len = sizeof a;
  ::getsockname(s.fd, reinterpret_cast<sockaddr*>(&a), &len);
  if (on_listen) on_listen(ntohs(a.sin_port));
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  const std::string ok = rendezvous_ok(id, bytes);
  std::set<int> served;
  while (static_cast<int>(served.size()) < size - 1) {
    const double left = seconds_left(deadline);
    if (left <= 0) {
      std::string missing;
      for (int r = 1; r < size; ++r)
        if (!served.count(r)) missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      throw Error("rendezvous: rank(s) " + missing + " never came to " + address + " within " +
                  std::to_string(static_cast<int>(timeout_s)) + " s: did they start, with the same address and token?");
    }
    pollfd p{s.fd, POLLIN, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(left, 1.0) * 1000) + 1);
    if (r <= 0) continue;
    Socket c(::accept4(s.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (c.fd < 0) continue;
    std::string line, why;
    const Clock::time_point line_deadline = std::min(
        deadline,
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(kLineSeconds)));
    if (!read_line(c.fd, line_deadline, &line)) {
      send_all(c.fd, "error no hello line within the time allowed\n");
      continue;
    }
    const auto h = parse_rendezvous_hello(line, &why);
    if (!h) {
      send_all(c.fd, "error " + why + "\n");
      continue;
    }
    if (h->token != token) {
      send_all(c.fd, "error not this job's token\n");
      continue;
    }
    if (h->size != size) {
      send_all(c.fd, "error this job has " + std::to_string(size) + " ranks, not " + std::to_string(h->size) + "\n");
      continue;
    }
    if (served.count(h->rank)) {
      send_all(c.fd, "error rank " + std::to_string(h->rank) + " has already fetched the id\n");
      continue;
    }
    send_all(c.fd, ok);
    served.insert(h->rank);
  }
}

void fetch_rendezvous(const std::string& address, const std::string& token, int rank, int size, void* id,
                      std::size_t bytes, double timeout_s) {
  std::string host;
  int port = 0;
  split_address(address, &host, &port);
  const sockaddr_in a = resolve(host, port);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
  const std::string hello = rendezvous_hello(token, rank, size);
  std::string last = "nothing listened";
  while (seconds_left(deadline) > 0) {
    Socket s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (s.fd < 0) throw Error(std::string("rendezvous: socket: ") + std::strerror(errno));
    if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      last = std::strerror(errno);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // rank 0 may not listen yet
      continue;
    }
    send_all(s.fd, hello);
    std::string line, why;
    if (!read_line(s.fd, deadline, &line)) {
      last = "rank 0 accepted but did not answer";
      continue;
    }
    if (!parse_rendezvous_reply(line, id, bytes, &why)) throw Error("rendezvous at " + address + ": " + why);
    return;
  }
  throw Error("rendezvous: rank " + std::to_string(rank) + " found no rank 0 at " + address + " within " +
              std::to_string(static_cast<int>(timeout_s)) + " s (" + last + ")");
}

}  // namespace distancies
