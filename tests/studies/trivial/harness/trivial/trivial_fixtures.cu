// The trivial study's fixture registrar: one host fixture, timed by the engine like any other.
#include "harness/bench/fixture_util.hpp"
#include "harness/bench/measure.hpp"

namespace distancies::bench {

namespace {
void hello_fixture(benchmark::State& st) {
  volatile int sink = 0;
  exec_host(st, [&] { sink = sink + 1; });
}
}  // namespace

void register_trivial_fixtures(bool gpu);
void register_trivial_fixtures(bool) { add(FixtureName("trivial", "hello"), hello_fixture); }

}  // namespace distancies::bench
