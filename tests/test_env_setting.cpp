// runtime/env_setting.hpp: a switch read from the environment is one of its words, the default
// where unset, and anything else one Error line naming the variable and the words it takes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "runtime/env_setting.hpp"

using namespace distancies;

namespace {
struct Env {
  explicit Env(const char* v) {
    if (v)
      setenv(kName, v, 1);
    else
      unsetenv(kName);
  }
  ~Env() { unsetenv(kName); }
  static constexpr const char* kName = "DISTANCIES_TEST_SWITCH";
};
std::string error_of(std::initializer_list<const char*> allowed) {
  try {
    env_setting(Env::kName, allowed, "on");
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}
}  // namespace

TEST(EnvSetting, UnsetIsTheDefaultAndAnAllowedWordIsItself) {
  {
    const Env e(nullptr);
    EXPECT_EQ(env_setting(Env::kName, {"on", "off"}, "on"), "on");
  }
  const Env e("off");
  EXPECT_EQ(env_setting(Env::kName, {"on", "off"}, "on"), "off");
  EXPECT_EQ(env_setting(Env::kName, {"on", "off", "auto"}, "auto"), "off");
}

TEST(EnvSetting, AnythingElseIsOneErrorNamingTheWords) {
  const Env e("OFF");  // words are matched exactly
  EXPECT_EQ(error_of({"on", "off"}), "DISTANCIES_TEST_SWITCH must be on or off, not 'OFF'");
  EXPECT_EQ(error_of({"on", "off", "auto"}), "DISTANCIES_TEST_SWITCH must be on, off or auto, not 'OFF'");
  const Env empty("");
  EXPECT_EQ(error_of({"on", "off"}), "DISTANCIES_TEST_SWITCH must be on or off, not ''");
}
