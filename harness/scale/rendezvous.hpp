// The NCCL unique id over TCP: rank 0 listens where the job says (host:port) and hands the id to
// each other rank that presents the job's token; no shared folder, no file. One line each way:
//   rank r -> rank 0:  "distancies-rendezvous 1 TOKEN RANK SIZE\n"
//   rank 0 -> rank r:  "ok HEX\n" (the id, two hex digits a byte) or "error REASON\n"
// A stray, malformed or foreign connection gets an error line and is closed; it neither stops
// rank 0 nor counts as a rank. Both sides give up with one clear Error after the timeout.
#pragma once
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace distancies {

constexpr std::size_t kRendezvousMaxLine = 512;  // longer is malformed (a token is at most 128 bytes)

struct RendezvousHello {
  std::string token;
  int rank = 0;
  int size = 0;
};

std::string rendezvous_hello(const std::string& token, int rank, int size);
// The hello of a line (without its newline), or nullopt with *why set: any deviation from the
// format, a token that is empty, longer than 128 bytes or not printable, or ranks out of range.
std::optional<RendezvousHello> parse_rendezvous_hello(std::string_view line, std::string* why);
std::string rendezvous_ok(const void* id, std::size_t bytes);
// The id of an "ok" line (exactly `bytes` bytes of hex), or false with *why: the reason of an
// "error" line, or what was malformed.
bool parse_rendezvous_reply(std::string_view line, void* id, std::size_t bytes, std::string* why);

// "host:port" -> host and port (1 ... 65535; 0 where allow_any_port, for tests); Error otherwise.
void split_address(const std::string& address, std::string* host, int* port, bool allow_any_port = false);

// Rank 0: listens on `address` (its host resolved to one IPv4 address, never every interface)
// until each of ranks 1 ... size - 1 has fetched the id; Error after timeout_s. `on_listen` gets
// the bound port (address port 0: the system's choice; tests).
void serve_rendezvous(const std::string& address, const std::string& token, int size, const void* id, std::size_t bytes,
                      double timeout_s, const std::function<void(int)>& on_listen = {});
// Rank r > 0: connects to rank 0 (retrying while nothing listens yet) and fetches the id; Error
// with rank 0's reason, or after timeout_s.
void fetch_rendezvous(const std::string& address, const std::string& token, int rank, int size, void* id,
                      std::size_t bytes, double timeout_s);

}  // namespace distancies
