#include "harness/bench/suite_run.hpp"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "harness/bench/fixture_util.hpp"
#include "harness/bench/fixtures.hpp"
#include "harness/bench/suites.hpp"
#include "runtime/atomic_file.hpp"
#include "runtime/error.hpp"

namespace distancies::bench {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// Google Benchmark's own suffixes on a run's name (/iterations:3, /manual_time, ...): the
// fixture is the name add() gave.
std::string fixture_of(const std::string& run_name) {
  static const std::regex suffix(
      "(/(iterations|repeats|min_time|min_warmup_time|threads):[^/]+|/(manual_time|real_time|process_time))+$");
  return std::regex_replace(run_name, suffix, "");
}

// argv[0]: Initialize keeps a pointer to it (the context's executable name), so it must outlive the run.
std::string& program_name() {
  static std::string name = "distancies-bench";
  return name;
}

// Sets one of Google Benchmark's flags after Initialize: the public way is to parse it again.
void set_benchmark_flag(const std::string& arg) {
  std::string a = arg;
  char* argv[] = {program_name().data(), a.data(), nullptr};
  int argc = 2;
  benchmark::Initialize(&argc, argv);
}

std::string clock_text(double s) {
  const long t = std::lround(s < 0 ? 0 : s);
  char buf[32];
  if (t >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(buf, sizeof buf, "%02ld:%02ld", t / 60, t % 60);
  return buf;
}

// An earlier run's JSON (ours or Google Benchmark's): its runs, and per fixture its wall seconds
// and repetitions where recorded.
struct EarlierRun {
  std::string path;
  json context = json::object();
  std::vector<json> benchmarks;
  std::set<std::string> fixtures;
  std::map<std::string, double> wall_s;
  std::map<std::string, double> repetitions;
};

EarlierRun read_earlier(const std::string& path) {
  EarlierRun e;
  e.path = path;
  std::ifstream in(path);
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::exception& x) {
    throw Error(path + ": not a benchmark JSON file (" + x.what() + ")");
  }
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw Error(path + ": not a benchmark JSON file (no \"benchmarks\" array)");
  if (doc.contains("context") && doc["context"].is_object()) e.context = doc["context"];
  for (json& b : doc["benchmarks"]) {
    const std::string f =
        b.contains("fixture") ? b["fixture"].get<std::string>() : fixture_of(b.value("run_name", b.value("name", "")));
    e.fixtures.insert(f);
    if (b.contains("fixture_wall_s") && !e.wall_s.count(f)) e.wall_s[f] = b["fixture_wall_s"].get<double>();
    if (b.contains("repetitions")) e.repetitions[f] = b["repetitions"].get<double>();
    e.benchmarks.push_back(std::move(b));
  }
  return e;
}

bool file_exists(const std::string& path) { return !path.empty() && access(path.c_str(), F_OK) == 0; }

// What Google Benchmark will run, as fixture names: its own listing (filter included), captured.
std::vector<std::string> planned_fixtures() {
  struct Capture : benchmark::BenchmarkReporter {
    bool ReportContext(const Context&) override { return true; }
    void ReportRuns(const std::vector<Run>&) override {}
  } capture;
  std::ostringstream listed, errors;
  capture.SetOutputStream(&listed);
  capture.SetErrorStream(&errors);
  set_benchmark_flag("--benchmark_list_tests=true");
  benchmark::RunSpecifiedBenchmarks(&capture);
  set_benchmark_flag("--benchmark_list_tests=false");
  std::vector<std::string> names;
  std::istringstream lines(listed.str());
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) names.push_back(fixture_of(line));
  return names;
}

// The progress line and the ETA: each remaining fixture at its wall time in the earlier run
// (scaled to this run's repetitions) where there is one, else at this run's mean so far.
class Progress {
 public:
  Progress(std::vector<std::string> planned, std::map<std::string, double> prior_s)
      : planned_(std::move(planned)), prior_s_(std::move(prior_s)), start_(Clock::now()) {}

  double elapsed_s() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  int planned() const { return static_cast<int>(planned_.size()); }
  int finished() const { return static_cast<int>(done_.size()); }

  std::string line(const std::string& fixture, double wall_s, const std::string& outcome) {
    done_.insert(fixture);
    sum_s_ += wall_s;
    char buf[512];
    std::snprintf(buf, sizeof buf, "[%d/%d] %s  %.1f s%s  elapsed %s  ETA %s", finished(), planned(), fixture.c_str(),
                  wall_s, outcome.empty() ? "" : ("  " + outcome).c_str(), clock_text(elapsed_s()).c_str(),
                  eta_text().c_str());
    return buf;
  }

 private:
  std::string eta_text() const {
    const double mean = done_.empty() ? 0 : sum_s_ / double(done_.size());
    double eta = 0;
    for (const std::string& f : planned_) {
      if (done_.count(f)) continue;
      const auto it = prior_s_.find(f);
      eta += it != prior_s_.end() ? it->second : mean;
    }
    return clock_text(eta);
  }

  std::vector<std::string> planned_;
  std::map<std::string, double> prior_s_;
  std::set<std::string> done_;
  double sum_s_ = 0;
  Clock::time_point start_;
};

// The run's JSON in Google Benchmark's schema ({"context", "benchmarks"}), rewritten whole and
// renamed into place after every fixture: a kill at any moment leaves the last complete file.
// Each run object also carries "fixture" (the name without Google Benchmark's suffixes) and
// "fixture_wall_s" (the fixture's wall seconds, every repetition and its set-up).
class RunJson {
 public:
  RunJson(std::string path, std::vector<json> earlier) : path_(std::move(path)) {
    for (const json& b : earlier) pieces_.push_back(b.dump(2));
  }
  void set_context(json context) {
    context_ = std::move(context);
    for (const auto& [key, value] : extra_.items()) context_[key] = value;
  }
  // Fields of ours in the context: the suite, its fixture count, whether it finished.
  void set_extra(json extra) { extra_ = std::move(extra); }
  void set_state(const std::string& state) {
    extra_["suite_state"] = state;
    context_["suite_state"] = state;
  }
  void add(const std::vector<json>& runs) {
    for (const json& r : runs) pieces_.push_back(r.dump(2));
  }
  void write() const {
    std::string text = "{\n\"context\": " + context_.dump(2) + ",\n\"benchmarks\": [\n";
    for (std::size_t i = 0; i < pieces_.size(); ++i) text += (i ? ",\n" : "") + pieces_[i];
    text += "\n]\n}\n";
    AtomicFile f(path_, false);
    f.write(text);
    f.commit();
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  json context_ = json::object(), extra_ = json::object();
  std::vector<std::string> pieces_;
};

// Interrupted (SIGINT, SIGTERM): say what the file holds and how to go on, then die of the
// signal as without us. The message is built after each fixture; two slots, so the handler
// never reads one being written. The temporary of a write in progress is removed.
char g_stop_message[2][1024];
char g_temp_path[4096];
std::atomic<int> g_stop_slot{-1};

extern "C" void on_stop_signal(int sig) {
  const int slot = g_stop_slot.load();
  if (slot >= 0) {
    const ssize_t n = ::write(2, g_stop_message[slot], std::strlen(g_stop_message[slot]));
    (void)n;
  }
  if (g_temp_path[0]) ::unlink(g_temp_path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void set_stop_message(const std::string& text) {
  const int slot = g_stop_slot.load() == 0 ? 1 : 0;
  std::snprintf(g_stop_message[slot], sizeof g_stop_message[slot], "%s\n", text.c_str());
  g_stop_slot.store(slot);
}

void install_stop_handler(const std::string& out) {
  std::snprintf(g_temp_path, sizeof g_temp_path, "%s.tmp.%d", out.c_str(), static_cast<int>(getpid()));
  for (int sig : {SIGINT, SIGTERM}) std::signal(sig, on_stop_signal);
}

// How each fixture ended: ran, skipped (measure.hpp's skip(): "skipped: <why>"), or an error.
std::string outcome_of(const std::vector<benchmark::BenchmarkReporter::Run>& runs, std::string* message) {
  for (const auto& r : runs)
    if (r.error_occurred) {
      *message = r.error_message;
      return r.error_message.rfind("skipped", 0) == 0 ? "skipped" : "error";
    }
  return "";
}

struct Tally {
  int ran = 0, skipped = 0, errors = 0;
  std::vector<std::string> error_lines;
};

// Google Benchmark's console output as before, plus after every fixture: the JSON rewritten,
// then the progress line on stderr (so a printed fixture is always in the file).
class SuiteReporter : public benchmark::BenchmarkReporter {
 public:
  SuiteReporter(std::unique_ptr<benchmark::BenchmarkReporter> display, Progress& progress, RunJson* out,
                const EarlierRun* resumed)
      : display_(std::move(display)), progress_(progress), out_(out), resumed_(resumed) {}

  bool ReportContext(const Context& context) override {
    if (!display_->ReportContext(context)) return false;
    last_ = Clock::now();
    if (!out_) return true;
    benchmark::JSONReporter gb;
    std::ostringstream text;
    gb.SetOutputStream(&text);
    gb.SetErrorStream(&text);
    gb.ReportContext(context);
    json ctx = json::parse(json_without_nonfinite(text.str() + "]}"))["context"];
    if (resumed_ && !same_settings(ctx)) {
      refused_ = true;
      return false;
    }
    out_->set_context(std::move(ctx));
    return true;
  }

  void ReportRuns(const std::vector<Run>& runs) override {
    display_->ReportRuns(runs);
    if (runs.empty()) return;
    const double wall_s = std::chrono::duration<double>(Clock::now() - last_).count();
    const std::string fixture = runs.front().run_name.function_name;
    std::string message;
    const std::string outcome = outcome_of(runs, &message);
    if (out_) write_fixture(runs, fixture, wall_s);
    tally(fixture, outcome, message);
    std::fprintf(stderr, "%s\n", progress_.line(fixture, wall_s, outcome).c_str());
    std::fflush(stderr);
    last_ = Clock::now();
  }

  void Finalize() override { display_->Finalize(); }
  const Tally& counts() const { return tally_; }
  bool refused() const { return refused_; }

 private:
  void write_fixture(const std::vector<Run>& runs, const std::string& fixture, double wall_s) {
    static const long pause_ms = [] {
      const char* v = std::getenv("DISTANCIES_BENCH_TEST_PAUSE_MS");  // tests: a window to interrupt in
      return v ? std::atol(v) : 0L;
    }();
    if (pause_ms > 0 && progress_.finished() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
    benchmark::JSONReporter gb;
    std::ostringstream text;
    gb.SetOutputStream(&text);
    gb.SetErrorStream(&text);
    gb.ReportRuns(runs);
    json objects = json::parse(json_without_nonfinite("[" + text.str() + "]"));
    std::vector<json> tagged;
    for (json& o : objects) {
      o["fixture"] = fixture;
      o["fixture_wall_s"] = wall_s;
      tagged.push_back(std::move(o));
    }
    out_->add(tagged);
    out_->write();
    set_stop_message("distancies-bench: interrupted: " + std::to_string(progress_.finished() + 1) + " of " +
                     std::to_string(progress_.planned()) + " fixtures are in " + out_->path() +
                     "; the same command with --resume " + out_->path() + " runs the rest");
  }

  void tally(const std::string& fixture, const std::string& outcome, const std::string& message) {
    if (outcome == "skipped")
      ++tally_.skipped;
    else if (outcome == "error") {
      ++tally_.errors;
      tally_.error_lines.push_back(fixture + ": " + message);
    } else
      ++tally_.ran;
  }

  // A resumed file must come from the same model, query, mode and card, or the tables would mix them.
  bool same_settings(const json& now) const {
    static const char* keys[] = {"model_source", "model_family", "model_rows",         "model_dim", "query", "k",
                                 "measure_mode", "gpu",          "inject_slowdown_pct"};
    for (const char* key : keys) {
      const json was = resumed_->context.value(key, json()), is = now.value(key, json());
      if (!was.is_null() && was != is) {
        std::fprintf(stderr,
                     "distancies-bench: error: %s was measured with %s = %s, this run has %s: resume needs "
                     "the same settings (or another --out)\n",
                     resumed_->path.c_str(), key, was.dump().c_str(), is.dump().c_str());
        return false;
      }
    }
    return true;
  }

  std::unique_ptr<benchmark::BenchmarkReporter> display_;
  Progress& progress_;
  RunJson* out_;
  const EarlierRun* resumed_;
  Clock::time_point last_;
  Tally tally_;
  bool refused_ = false;
};

std::unique_ptr<benchmark::BenchmarkReporter> display_reporter(const BenchmarkFlags& flags) {
  if (flags.format == "json") return std::make_unique<benchmark::JSONReporter>();
  const char* term = std::getenv("TERM");
  const bool color = isatty(STDOUT_FILENO) && term && std::strcmp(term, "dumb") != 0;
  return std::make_unique<benchmark::ConsoleReporter>(color ? benchmark::ConsoleReporter::OO_Color
                                                            : benchmark::ConsoleReporter::OO_None);
}

// The expected duration, from an earlier run's wall seconds per fixture (scaled to this run's
// repetitions); fills `prior_s` for the ETA. Never a typed-in figure: unknown without a measurement.
std::string expectation(const std::vector<std::string>& planned, const EarlierRun* prior, double reps,
                        std::map<std::string, double>& prior_s) {
  if (!prior || prior->wall_s.empty())
    return "expected duration unknown (" + std::to_string(planned.size()) +
           " fixtures; no earlier run with fixture_wall_s to estimate from: --estimate-from FILE)";
  double known_s = 0, all_s = 0;
  int unknown = 0;
  for (const auto& [f, s] : prior->wall_s) all_s += s;
  for (const std::string& f : planned) {
    const auto it = prior->wall_s.find(f);
    if (it == prior->wall_s.end()) {
      ++unknown;
      continue;
    }
    const double then = prior->repetitions.count(f) ? prior->repetitions.at(f) : 1;
    prior_s[f] = it->second * (then > 0 ? reps / then : 1);
    known_s += prior_s[f];
  }
  const double mean_s = all_s / double(prior->wall_s.size());
  std::string text = "expected " + clock_text(known_s) + " for the " + std::to_string(planned.size() - unknown) +
                     " fixtures measured in " + prior->path;
  if (unknown > 0) {
    char mean[32];
    std::snprintf(mean, sizeof mean, "%.1f", mean_s);
    text += "; unknown for the other " + std::to_string(unknown) + " (" + prior->path + " took " + mean +
            " s per fixture: about " + clock_text(mean_s * unknown) + " more if they are alike)";
  }
  return text;
}

void print_summary(const Suite& suite, const Progress& progress, const Tally& t, const RunJson* out,
                   const EarlierRun* resumed) {
  std::fprintf(stderr, "distancies-bench: suite %s: %d fixtures in %s: %d ran, %d skipped, %d errors", suite.name,
               progress.finished(), clock_text(progress.elapsed_s()).c_str(), t.ran, t.skipped, t.errors);
  if (out)
    std::fprintf(stderr, "; JSON: %s (%d fixtures%s)", out->path().c_str(),
                 progress.finished() + (resumed ? static_cast<int>(resumed->fixtures.size()) : 0),
                 resumed ? (", " + std::to_string(resumed->fixtures.size()) + " from the earlier run").c_str() : "");
  std::fprintf(stderr, "\n");
  for (const std::string& e : t.error_lines) std::fprintf(stderr, "  error: %s\n", e.c_str());
}

std::unique_ptr<EarlierRun> read_if(const std::string& path, bool must_exist) {
  if (path.empty()) return nullptr;
  if (!file_exists(path)) {
    if (must_exist) throw Error(path + ": no such file");
    return nullptr;
  }
  return std::make_unique<EarlierRun>(read_earlier(path));
}

}  // namespace

BenchmarkFlags scan_benchmark_flags(int argc, char** argv) {
  BenchmarkFlags f;
  if (argc > 0) program_name() = argv[0];
  const std::pair<const char*, std::string*> valued[] = {{"--benchmark_filter=", &f.filter},
                                                         {"--benchmark_repetitions=", &f.repetitions},
                                                         {"--benchmark_min_time=", &f.min_time},
                                                         {"--benchmark_out=", &f.out},
                                                         {"--benchmark_format=", &f.format}};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const auto& [prefix, value] : valued)
      if (a.rfind(prefix, 0) == 0) *value = a.substr(std::strlen(prefix));
    if (a == "--benchmark_list_tests" || a == "--benchmark_list_tests=true" || a == "--benchmark_list_tests=1")
      f.list_tests = true;
  }
  return f;
}

std::string json_without_nonfinite(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size())
        out += text[++i];
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (const char* token : {"-Infinity", "Infinity", "-NaN", "NaN"}) {
      const std::size_t n = std::char_traits<char>::length(token);
      if (text.compare(i, n, token) == 0) {
        out += "null";
        i += n - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

int run_suite(const SuiteOptions& options, const BenchmarkFlags& flags, bool gpu) {
  SuiteOptions o = options;
  const char* rank = std::getenv("DISTANCIES_RANK");  // a sharded run's rank r > 0: FILE.rankR, as for --benchmark_out
  if (rank && std::atoi(rank) > 0)
    for (std::string* path : {&o.out, &o.resume})
      if (!path->empty()) *path += std::string(".rank") + rank;
  const Suite& suite = find_suite(o.suite.empty() ? (flags.filter.empty() ? "main" : "full") : o.suite);
  const std::string out = o.out.empty() ? o.resume : o.out;
  if (!flags.out.empty() && (flags.out == out || flags.out == o.resume))
    throw Error("--benchmark_out names the file of --out/--resume: give Google Benchmark's file another name");
  if (flags.repetitions.empty() && suite.repetitions > 0)
    set_benchmark_flag("--benchmark_repetitions=" + std::to_string(suite.repetitions));
  if (flags.min_time.empty() && suite.min_time)
    set_benchmark_flag(std::string("--benchmark_min_time=") + suite.min_time);
  const std::unique_ptr<EarlierRun> resumed = read_if(o.resume, false);
  if (!o.resume.empty() && !resumed)
    std::fprintf(stderr, "distancies-bench: nothing to resume in %s: starting it\n", o.resume.c_str());
  std::unique_ptr<EarlierRun> prior = read_if(o.estimate_from, true);
  if (!prior && !resumed && file_exists(out)) {
    try {
      prior = read_if(out, false);  // an earlier run of the same command: its times, before it is replaced
    } catch (const Error&) {
    }
  }
  const EarlierRun* estimate_source = prior ? prior.get() : resumed.get();
  fixture_selection() = [&suite, r = resumed.get()](const std::string& name) {
    return in_suite(suite, name) && !(r && r->fixtures.count(name));
  };
  register_fixtures(gpu);
  fixture_selection() = nullptr;  // it points into this function's state
  if (flags.list_tests) {
    benchmark::RunSpecifiedBenchmarks();
    return 0;
  }
  const std::vector<std::string> planned = planned_fixtures();
  const int reps = !flags.repetitions.empty() ? std::atoi(flags.repetitions.c_str())
                   : suite.repetitions > 0    ? suite.repetitions
                                              : 1;
  std::map<std::string, double> prior_s;
  std::fprintf(
      stderr, "distancies-bench: suite %s (%s): %zu fixtures%s, %d repetitions; %s\n", suite.name, suite.summary,
      planned.size(),
      resumed ? (" (" + std::to_string(resumed->fixtures.size()) + " already in " + resumed->path + ")").c_str() : "",
      reps, expectation(planned, estimate_source, reps, prior_s).c_str());
  if (planned.empty()) {
    std::fprintf(stderr, "distancies-bench: nothing to run\n");
    return 0;
  }
  std::unique_ptr<RunJson> json_out;
  if (!out.empty()) {
    json_out = std::make_unique<RunJson>(out, resumed ? resumed->benchmarks : std::vector<json>{});
    json_out->set_extra({{"suite", suite.name},
                         {"suite_fixtures", std::to_string(planned.size() + (resumed ? resumed->fixtures.size() : 0))},
                         {"suite_state", "running"}});
    install_stop_handler(out);
    std::fprintf(stderr,
                 "distancies-bench: %s is rewritten after every fixture; if interrupted, the same command "
                 "with --resume %s runs the rest\n",
                 out.c_str(), out.c_str());
  }
  Progress progress(planned, prior_s);
  SuiteReporter reporter(display_reporter(flags), progress, json_out.get(), resumed.get());
  benchmark::RunSpecifiedBenchmarks(&reporter);
  if (reporter.refused()) return 1;
  if (json_out) {
    json_out->set_state(progress.finished() == progress.planned() ? "complete" : "incomplete");
    json_out->write();
  }
  print_summary(suite, progress, reporter.counts(), json_out.get(), resumed.get());
  return 0;
}

}  // namespace distancies::bench
