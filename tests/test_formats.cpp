// Every model format: round trips through the native format, detection, text quirks (spaces in
// words, CRLF, BOM), one clear error per kind of malformed input, and the skip flag.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "harness/formats.hpp"
#include "harness/formats/io.hpp"
#include "harness/formats/text_reader.hpp"
#include "runtime/error.hpp"
#include "runtime/model.hpp"
#include "tests/real_model.hpp"

namespace fs = std::filesystem;
using namespace distancies;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

// Source rows in file order (unsorted), independent of Model.
struct Rows {
  std::vector<std::string> words;
  std::vector<std::vector<float>> vecs;
  int dim() const { return vecs.empty() ? 0 : static_cast<int>(vecs[0].size()); }
};

Rows random_rows(int n, int dim, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Rows r;
  // Shuffled, with mixed case, digits and UTF-8 so byte-wise order matters.
  const char* stems[] = {"w", "W", "z", "\xC3\xA9t\xC3\xA9", "a-b", "9", "Zulu", "_x"};
  for (int i = 0; i < n; ++i) r.words.push_back(std::string(stems[i % 8]) + std::to_string(i * 7919 % 100003));
  std::shuffle(r.words.begin(), r.words.end(), rng);
  for (int i = 0; i < n; ++i) {
    std::vector<float> v(static_cast<std::size_t>(dim));
    for (float& x : v) x = u(rng);
    r.vecs.push_back(v);
  }
  return r;
}

std::string num(float x) {  // 9 significant digits: reads back to the same float
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

struct TextStyle {
  bool crlf = false, bom = false, study = false, w2v_header = false;
};

void write_text(const std::string& path, const Rows& r, TextStyle s = {}) {
  std::ofstream f(path, std::ios::binary);
  if (s.bom) f << "\xEF\xBB\xBF";
  const char* eol = s.crlf ? "\r\n" : "\n";
  if (s.w2v_header) f << r.words.size() << ' ' << r.dim() << eol;
  for (std::size_t i = 0; i < r.words.size(); ++i) {
    f << r.words[i];
    if (s.study) f << ' ' << num(vector_norm(r.vecs[i].data(), r.dim()));
    for (float x : r.vecs[i]) f << ' ' << num(x);
    f << eol;
  }
}

void write_w2v_binary(const std::string& path, const Rows& r, bool newline_after_row = true) {
  std::ofstream f(path, std::ios::binary);
  f << r.words.size() << ' ' << r.dim() << '\n';
  for (std::size_t i = 0; i < r.words.size(); ++i) {
    f << r.words[i] << ' ';
    f.write(reinterpret_cast<const char*>(r.vecs[i].data()), static_cast<std::streamsize>(r.vecs[i].size() * 4));
    if (newline_after_row) f << '\n';
  }
}

void write_split(const std::string& keys, const std::string& values, const Rows& r, bool crlf = false) {
  std::ofstream k(keys, std::ios::binary), v(values, std::ios::binary);
  for (std::size_t i = 0; i < r.words.size(); ++i) {
    k << r.words[i] << (crlf ? "\r\n" : "\n");
    float norm = vector_norm(r.vecs[i].data(), r.dim());
    v.write(reinterpret_cast<const char*>(&norm), 4);
    v.write(reinterpret_cast<const char*>(r.vecs[i].data()), static_cast<std::streamsize>(r.vecs[i].size() * 4));
  }
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f << bytes;
}

std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Sorted, unique, norms right, padding zero, and every source row present with its exact values.
void expect_matches(const Model& m, const Rows& r) {
  ASSERT_EQ(m.rows, static_cast<std::int64_t>(r.words.size()));
  ASSERT_EQ(m.dim, r.dim());
  ASSERT_EQ(m.ld, leading_dim(r.dim()));
  ASSERT_EQ(m.words.size(), r.words.size());
  ASSERT_EQ(m.norms.size(), r.words.size());
  EXPECT_TRUE(std::is_sorted(m.words.begin(), m.words.end()));
  EXPECT_EQ(std::adjacent_find(m.words.begin(), m.words.end()), m.words.end());
  for (std::size_t i = 0; i < r.words.size(); ++i) {
    std::int64_t k = m.find(r.words[i]);
    ASSERT_GE(k, 0) << r.words[i];
    EXPECT_EQ(0, std::memcmp(m.row(k), r.vecs[i].data(), r.vecs[i].size() * 4)) << r.words[i];
    EXPECT_EQ(m.norms[static_cast<std::size_t>(k)], vector_norm(r.vecs[i].data(), r.dim()));
    for (int j = m.dim; j < m.ld; ++j) EXPECT_EQ(m.row(k)[j], 0.0f);
  }
}

void expect_identical(const Model& a, const Model& b) {
  ASSERT_EQ(a.rows, b.rows);
  ASSERT_EQ(a.dim, b.dim);
  ASSERT_EQ(a.ld, b.ld);
  EXPECT_EQ(a.words, b.words);
  EXPECT_EQ(a.norms, b.norms);
  EXPECT_EQ(a.normalized, b.normalized);
  EXPECT_EQ(0, std::memcmp(a.vectors.data(), b.vectors.data(), sizeof(float) * a.rows * a.ld));
}

class Formats : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / ("distancies_formats_" + std::to_string(::getpid()) + "_" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The load error for `file`: one line, starting with the path of the file at fault
  // (`culprit`, by default the file itself).
  std::string error_of(const std::string& file, LoadOptions opt = {}, std::string culprit = {}) {
    try {
      load_model(file, opt);
    } catch (const Error& e) {
      std::string msg = e.what();
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
      EXPECT_THAT(msg, StartsWith(culprit.empty() ? file : culprit));
      return msg;
    }
    ADD_FAILURE() << "loading " << file << " did not fail";
    return {};
  }
  static LoadOptions as(Format f) {
    LoadOptions o;
    o.format = f;
    return o;
  }

  fs::path dir_;
};

// --- round trips -------------------------------------------------------------------------

class RoundTrip : public Formats, public ::testing::WithParamInterface<std::tuple<Format, int>> {};

TEST_P(RoundTrip, LoadsExactlyAndSurvivesNative) {
  auto [format, dim] = GetParam();
  Rows r = random_rows(97, dim, static_cast<unsigned>(dim) * 31 + static_cast<unsigned>(format));
  std::string file;
  switch (format) {
    case Format::GloveText:
      write_text(file = path("m.txt"), r);
      break;
    case Format::StudyText:
      write_text(file = path("m.txt"), r, {false, false, true});
      break;
    case Format::StudySplit:
      write_split(file = path("m.keys"), path("m.values"), r);
      break;
    case Format::Word2VecBinary:
      write_w2v_binary(file = path("m.bin"), r);
      break;
    case Format::Native: {
      Model src;
      src.allocate(static_cast<std::int64_t>(r.words.size()), dim);
      for (std::size_t i = 0; i < r.words.size(); ++i) {
        src.words[i] = r.words[i];
        std::copy(r.vecs[i].begin(), r.vecs[i].end(), src.row(static_cast<std::int64_t>(i)));
      }
      finalize_model(src, {}, nullptr);
      save_native(src, file = path("m.dst"));
      break;
    }
    default:
      FAIL();
  }
  EXPECT_EQ(detect_format(file), format);
  Model a = load_model(file, as(format));
  EXPECT_EQ(a.format, format_name(format));
  expect_matches(a, r);
  Model auto_loaded = load_model(file);
  expect_identical(a, auto_loaded);

  save_native(a, path("copy.dst"));
  Model b = load_model(path("copy.dst"));
  EXPECT_EQ(b.format, "native");
  expect_identical(a, b);
  // Saving what was loaded gives the same bytes again.
  save_native(b, path("copy2.dst"));
  EXPECT_EQ(read_bytes(path("copy.dst")), read_bytes(path("copy2.dst")));
}

INSTANTIATE_TEST_SUITE_P(AllFormats, RoundTrip,
                         ::testing::Combine(::testing::Values(Format::GloveText, Format::StudyText, Format::StudySplit,
                                                              Format::Word2VecBinary, Format::Native),
                                            ::testing::Values(50, 300, 301)),
                         [](const auto& info) {
                           std::string n = format_name(std::get<0>(info.param));
                           n.erase(std::remove(n.begin(), n.end(), '-'), n.end());
                           return n + "_dim" + std::to_string(std::get<1>(info.param));
                         });

TEST_F(Formats, Word2VecWithoutRowNewlinesAndWord2VecText) {
  Rows r = random_rows(40, 7, 5);
  write_w2v_binary(path("a.bin"), r, false);
  Model a = load_model(path("a.bin"));
  EXPECT_EQ(a.format, "word2vec");
  expect_matches(a, r);
  write_text(path("b.txt"), r, {true, true, false, true});  // CRLF and BOM too
  EXPECT_EQ(detect_format(path("b.txt")), Format::Word2VecBinary);
  Model b = load_model(path("b.txt"));
  EXPECT_EQ(b.format, "word2vec-text");
  expect_identical(a, b);
  write_bytes(path("c.bin"), "\xEF\xBB\xBF" + read_bytes(path("a.bin")));
  expect_identical(a, load_model(path("c.bin")));
}

// The flag: rows are unit vectors, searched with their own norms (recomputed, 1 within
// rounding); the stored norms are the originals, kept as data (Model::original_norms).
TEST_F(Formats, NativeKeepsNormalizedFlagAndStoredNorms) {
  Model m = load_model((write_text(path("m.txt"), random_rows(20, 5, 9)), path("m.txt")));
  std::vector<float> original = m.norms;
  for (std::int64_t i = 0; i < m.rows; ++i)
    for (int j = 0; j < m.dim; ++j) m.row(i)[j] /= m.norms[static_cast<std::size_t>(i)];
  m.normalized = true;
  save_native(m, path("n.dst"));
  Model n = load_model(path("n.dst"));
  EXPECT_TRUE(n.normalized);
  EXPECT_EQ(n.original_norms, original);
  for (std::int64_t i = 0; i < n.rows; ++i) {
    EXPECT_EQ(n.norms[static_cast<std::size_t>(i)], vector_norm(n.row(i), n.dim));
    EXPECT_NEAR(n.norms[static_cast<std::size_t>(i)], 1.0f, 1e-6f);
  }
  ASSERT_EQ(m.rows, n.rows);
  EXPECT_EQ(m.words, n.words);
  EXPECT_EQ(0, std::memcmp(m.vectors.data(), n.vectors.data(), sizeof(float) * m.rows * m.ld));
  // An in-memory model flagged normalized: finalize_model moves its norms to the originals.
  Model f = load_model(path("m.txt"));
  for (std::int64_t i = 0; i < f.rows; ++i)
    for (int j = 0; j < f.dim; ++j) f.row(i)[j] /= f.norms[static_cast<std::size_t>(i)];
  f.normalized = true;
  finalize_model(f, {}, nullptr);
  EXPECT_EQ(f.original_norms, original);
  EXPECT_NEAR(f.norms[0], 1.0f, 1e-6f);
}

// --- text details ------------------------------------------------------------------------

TEST_F(Formats, GloveWordsWithSpacesAndNumbers) {
  write_bytes(path("g.txt"),
              "new york 0.5 1 -2\n"
              ". . . 1e-3 +2.5 3\n"
              "at name@domain.com 0 0 1\n"
              "1 2 3 4\n");  // a numeric word: the first token is always the word
  Model m = load_model(path("g.txt"));
  EXPECT_EQ(m.format, "glove");
  ASSERT_EQ(m.rows, 4);
  EXPECT_EQ(m.dim, 3);
  std::int64_t ny = m.find("new york");
  ASSERT_GE(ny, 0);
  EXPECT_EQ(m.row(ny)[0], 0.5f);
  EXPECT_EQ(m.row(ny)[2], -2.0f);
  std::int64_t dots = m.find(". . .");
  ASSERT_GE(dots, 0);
  EXPECT_EQ(m.row(dots)[0], 1e-3f);
  EXPECT_EQ(m.row(dots)[1], 2.5f);
  EXPECT_GE(m.find("at name@domain.com"), 0);
  ASSERT_GE(m.find("1"), 0);
  EXPECT_EQ(m.row(m.find("1"))[2], 4.0f);
  EXPECT_EQ(m.find("york"), -1);
}

TEST_F(Formats, CrlfAndBomAreAccepted) {
  Rows r = random_rows(30, 6, 3);
  r.words[0] = "two words";
  write_text(path("g.txt"), r, {true, true});
  Model g = load_model(path("g.txt"));
  expect_matches(g, r);
  for (const std::string& w : g.words) {
    EXPECT_EQ(w.find('\r'), std::string::npos);
    EXPECT_EQ(w.find("\xEF\xBB\xBF"), std::string::npos);
  }
  write_text(path("s.txt"), r, {true, true, true});
  EXPECT_EQ(detect_format(path("s.txt")), Format::StudyText);
  expect_identical(g, load_model(path("s.txt")));
  write_split(path("k.keys"), path("k.values"), r, true);
  expect_identical(g, load_model(path("k.keys")));
}

TEST_F(Formats, BlankLinesAndTrailingSpacesAreIgnored) {
  write_bytes(path("g.txt"), "\n\na 1 2 \nb 3 4\t\n\n");
  Model m = load_model(path("g.txt"));
  ASSERT_EQ(m.rows, 2);
  EXPECT_EQ(m.words, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(m.row(1)[1], 4.0f);
}

TEST_F(Formats, StudyTextIsDetectedOnlyWhenTheFirstNumberIsTheNorm) {
  // "3 4" has norm 5: a study row. Rows whose first number is not the norm are GloVe rows.
  write_bytes(path("s.txt"), "a 5 3 4\nb 1 0 1\n");
  EXPECT_EQ(detect_format(path("s.txt")), Format::StudyText);
  Model s = load_model(path("s.txt"));
  EXPECT_EQ(s.dim, 2);
  EXPECT_EQ(s.norms[0], 5.0f);
  write_bytes(path("g.txt"), "a 5 3 4\nb 2 0 1\n");
  EXPECT_EQ(detect_format(path("g.txt")), Format::GloveText);
  EXPECT_EQ(load_model(path("g.txt")).dim, 3);
  // Forcing glove on a study file reads the norm as a component.
  EXPECT_EQ(load_model(path("s.txt"), as(Format::GloveText)).dim, 3);
}

TEST_F(Formats, SplitFoundFromEitherHalfOrAPlainName) {
  Rows r = random_rows(12, 4, 8);
  write_split(path("m.keys"), path("m.values"), r);
  expect_matches(load_model(path("m.keys")), r);
  expect_matches(load_model(path("m.values")), r);
  write_split(path("plain"), path("plain.values"), r);
  EXPECT_EQ(detect_format(path("plain")), Format::StudySplit);
  expect_matches(load_model(path("plain")), r);
}

TEST_F(Formats, UnsortedInputComesBackSortedByBytes) {
  Rows r;
  r.words = {"zeta", "Alpha", "\xC3\xA9lan", "alpha", "Zeta", "10", "9", "a b"};
  for (std::size_t i = 0; i < r.words.size(); ++i) r.vecs.push_back({float(i + 1), 0.5f, -float(i)});
  write_text(path("g.txt"), r);
  Model m = load_model(path("g.txt"));
  EXPECT_EQ(m.words, (std::vector<std::string>{"10", "9", "Alpha", "Zeta", "a b", "alpha", "zeta", "\xC3\xA9lan"}));
  for (std::size_t i = 0; i < r.words.size(); ++i) {
    std::int64_t k = m.find(r.words[i]);
    ASSERT_GE(k, 0);
    EXPECT_EQ(m.row(k)[0], float(i + 1));
  }
  EXPECT_EQ(m.find("beta"), -1);
}

TEST_F(Formats, FinalizeModelSortsComputesNormsAndZeroesPadding) {
  Model m;
  m.allocate(3, 3);
  m.words = {"c", "a", "b"};
  float vals[3][3] = {{3, 4, 0}, {1, 0, 0}, {0, 0, 2}};
  for (int i = 0; i < 3; ++i) {
    std::copy(vals[i], vals[i] + 3, m.row(i));
    m.row(i)[3] = 99.0f;  // padding garbage
  }
  finalize_model(m, {}, nullptr);
  EXPECT_EQ(m.words, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(m.norms, (std::vector<float>{1, 2, 5}));
  EXPECT_EQ(m.row(2)[1], 4.0f);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.row(i)[3], 0.0f);

  Model d;
  d.allocate(2, 2);
  d.words = {"x", "x"};
  d.row(0)[0] = d.row(1)[0] = 1;
  EXPECT_THROW(finalize_model(d, {}, nullptr), Error);
}

TEST_F(Formats, ProgressReportsBytesUpToTheFileSize) {
  Rows r = random_rows(50, 10, 1);
  write_text(path("g.txt"), r);
  write_w2v_binary(path("w.bin"), r);
  save_native(load_model(path("g.txt")), path("n.dst"));
  for (const char* name : {"g.txt", "w.bin", "n.dst"}) {
    std::uint64_t size = fs::file_size(path(name)), last = 0, calls = 0;
    bool monotone = true;
    LoadOptions opt;
    opt.progress = [&](std::uint64_t done, std::uint64_t total) {
      EXPECT_EQ(total, size) << name;
      monotone &= done >= last;
      last = done;
      ++calls;
    };
    load_model(path(name), opt);
    EXPECT_GT(calls, 0u) << name;
    EXPECT_TRUE(monotone) << name;
    EXPECT_EQ(last, size) << name;
  }
}

// A file big enough to be parsed by several threads: rows and line numbers stay right.
TEST_F(Formats, LargeTextParsedInPiecesKeepsOrderAndLineNumbers) {
  Rows r = random_rows(6000, 50, 77);
  write_text(path("g.txt"), r);
  ASSERT_GT(fs::file_size(path("g.txt")), 2u << 20);
  expect_matches(load_model(path("g.txt")), r);
  std::string text = read_bytes(path("g.txt"));
  std::size_t pos = 0;
  for (int line = 1; line < 5000; ++line) pos = text.find('\n', pos) + 1;
  std::size_t v0 = text.find(' ', pos) + 1;
  text.replace(v0, text.find(' ', v0) - v0, "oops");  // line 5000's first value is now not a number
  write_bytes(path("bad.txt"), text);
  EXPECT_THAT(error_of(path("bad.txt")), HasSubstr("bad.txt:5000: "));
}

TEST(BlockReader, BlocksAreWholeLinesAndCoverTheFile) {
  fs::path p = fs::temp_directory_path() / ("distancies_blocks_" + std::to_string(::getpid()));
  std::string body;
  for (int i = 0; i < 200; ++i)
    body += std::string(static_cast<std::size_t>(i * 37 % 150), 'x') + std::to_string(i) + "\n";
  body += "last line without newline";
  write_bytes(p.string(), "\xEF\xBB\xBF" + body);
  fmt::InFile f(p.string());
  Progress none;
  fmt::BlockReader reader(f, none, 64);  // tiny chunks: many blocks, lines longer than a chunk
  std::string joined, block_copy;
  std::string_view block;
  int blocks = 0;
  while (reader.next(block)) {
    ++blocks;
    joined.append(block);
    if (joined.size() < body.size()) {
      EXPECT_EQ(block.back(), '\n');
    }
  }
  EXPECT_GT(blocks, 20);
  EXPECT_EQ(joined, body);
  fs::remove(p);
}

// The decimal fast path must give exactly the float from_chars gives.
TEST(ParseFloat, SameBitsAsFromChars) {
  std::mt19937 rng(11);
  const char* fixed[] = {"0",        "-0",           "1.",        ".5",        "-.5",          "16777215",
                         "16777216", "0.0000000001", "123456789", "-0.082752", "3.4028235e38", "1e-45",
                         "nan",      "-inf",         "+2.5",      "1e39",      "1e-50"};
  std::vector<std::string> cases(std::begin(fixed), std::end(fixed));
  for (int i = 0; i < 200000; ++i) {
    int digits = 1 + static_cast<int>(rng() % 10), point = static_cast<int>(rng() % (digits + 1));
    std::string s = rng() % 2 ? "-" : "";
    for (int d = 0; d < digits; ++d) {
      if (d == point) s += '.';
      s += static_cast<char>('0' + rng() % 10);
    }
    cases.push_back(s);
  }
  for (const std::string& s : cases) {
    float fast = 0;
    ASSERT_TRUE(fmt::parse_float(s, fast)) << s;
    float ref = std::strtof(s.c_str(), nullptr);
    if (std::isnan(ref)) {
      EXPECT_TRUE(std::isnan(fast)) << s;
    } else {
      EXPECT_EQ(0, std::memcmp(&fast, &ref, 4)) << s << ": " << fast << " vs " << ref;
    }
  }
  for (const char* bad : {"", "-", ".", "1.2.3", "1,5", "abc", "1e", "0x10", "--1", "+-1", "+", " 1"}) {
    float v;
    EXPECT_FALSE(fmt::parse_float(bad, v)) << bad;
  }
}

// --- malformed input: one clear line each ---------------------------------------------------

TEST_F(Formats, MissingFile) {
  EXPECT_THAT(error_of(path("nope.txt")), HasSubstr("cannot open: No such file or directory"));
  EXPECT_THAT(error_of(path("nope.dst"), as(Format::Native)), HasSubstr("cannot open"));
  EXPECT_THAT(error_of(path("nope.keys"), as(Format::StudySplit)), HasSubstr("cannot open"));
  fs::create_directories(path("adir"));
  EXPECT_THAT(error_of(path("adir")), HasSubstr("is a directory"));
}

TEST_F(Formats, EmptyFile) {
  write_bytes(path("e.txt"), "");
  EXPECT_THAT(error_of(path("e.txt")), HasSubstr("empty file"));
  for (Format f : {Format::GloveText, Format::StudyText, Format::Word2VecBinary, Format::Native})
    EXPECT_THAT(error_of(path("e.txt"), as(f)), HasSubstr("empty file")) << format_name(f);
  write_bytes(path("blank.txt"), "\xEF\xBB\xBF\r\n\n");
  EXPECT_THAT(error_of(path("blank.txt")), HasSubstr("empty file (no rows)"));
  write_bytes(path("e.keys"), "");
  write_bytes(path("e.values"), "");
  EXPECT_THAT(error_of(path("e.keys")), HasSubstr("empty file (no keys)"));
}

TEST_F(Formats, RaggedRows) {
  write_bytes(path("r.txt"), "a 1 2 3\nb 4 5 6\nc 7 8\n");
  EXPECT_EQ(error_of(path("r.txt")), path("r.txt") + ":3: expected 3 values, found 2");
  write_bytes(path("s.txt"), "a 5 3 4\nb 1 1\n");
  EXPECT_THAT(error_of(path("s.txt"), as(Format::StudyText)), HasSubstr("s.txt:2: expected 3 values, found 2"));
}

TEST_F(Formats, NonNumericToken) {
  write_bytes(path("n.txt"), "a 1 2 3\r\nb 4 abc 6\r\n");
  EXPECT_THAT(error_of(path("n.txt")), HasSubstr("n.txt:2: non-numeric value 'abc'"));
  write_bytes(path("first.txt"), "a b c\n");
  EXPECT_THAT(error_of(path("first.txt")), HasSubstr("first.txt:1: expected a word followed by numbers"));
}

TEST_F(Formats, NanAndInf) {
  write_bytes(path("nan.txt"), "a 1 2\nb nan 2\n");
  EXPECT_THAT(error_of(path("nan.txt")), HasSubstr("nan.txt:2: non-finite value (NaN or Inf) in the vector of 'b'"));
  write_bytes(path("inf.txt"), "a 1 2\nb 1 -inf\nc 1e39 1\n");
  EXPECT_THAT(error_of(path("inf.txt")), HasSubstr("inf.txt:2: non-finite value"));
  Rows r = random_rows(5, 4, 2);
  r.vecs[3][1] = std::numeric_limits<float>::quiet_NaN();
  write_w2v_binary(path("nan.bin"), r);
  EXPECT_THAT(error_of(path("nan.bin")), HasSubstr("row 4: non-finite value"));
  write_split(path("nan.keys"), path("nan.values"), r);
  EXPECT_THAT(error_of(path("nan.keys")), HasSubstr("nan.keys: row 4: non-finite value"));
}

TEST_F(Formats, DuplicatedWords) {
  write_bytes(path("d.txt"), "cat 1 2\ndog 3 4\ncat 5 6\n");
  EXPECT_THAT(error_of(path("d.txt")), HasSubstr("d.txt:3: duplicated word 'cat' (first at line 1"));
  Rows r = random_rows(4, 3, 4);
  r.words[2] = r.words[0];
  write_w2v_binary(path("d.bin"), r);
  EXPECT_THAT(error_of(path("d.bin")), HasSubstr("duplicated word"));
}

TEST_F(Formats, StudyNormMismatch) {
  write_bytes(path("s.txt"), "a 5 3 4\nb 7 0 1\n");
  EXPECT_THAT(error_of(path("s.txt"), as(Format::StudyText)),
              HasSubstr("s.txt:2: stored norm 7 does not match the norm of the values 1 ("));
  Rows r = random_rows(3, 4, 6);
  write_split(path("m.keys"), path("m.values"), r);
  std::string v = read_bytes(path("m.values"));
  float bad = 123.0f;
  std::memcpy(&v[5 * 4], &bad, 4);  // norm of row 2
  write_bytes(path("m.values"), v);
  EXPECT_THAT(error_of(path("m.keys"), {}, path("m.values")), HasSubstr("m.values: row 2 ("));
  EXPECT_THAT(error_of(path("m.keys"), {}, path("m.values")), HasSubstr("stored norm 123 does not match"));
}

TEST_F(Formats, SplitSizesMustAgree) {
  Rows r = random_rows(3, 4, 6);
  write_split(path("m.keys"), path("m.values"), r);
  std::string v = read_bytes(path("m.values"));
  write_bytes(path("m.values"), v.substr(0, v.size() - 4));
  EXPECT_THAT(error_of(path("m.keys"), {}, path("m.values")), HasSubstr("float32 values do not split into the 3 rows"));
  write_bytes(path("m.values"), v.substr(0, v.size() - 2));
  EXPECT_THAT(error_of(path("m.keys"), {}, path("m.values")), HasSubstr("is not a whole number of float32 values"));
  write_bytes(path("lonely.keys"), "a\nb\n");
  EXPECT_THAT(error_of(path("lonely.keys")), HasSubstr("without its values file"));
  EXPECT_THAT(error_of(path("lonely.keys"), as(Format::StudySplit)), HasSubstr("needs its other half"));
}

TEST_F(Formats, NativeWrongMagicVersionAndTruncation) {
  Model m = load_model((write_text(path("g.txt"), random_rows(10, 5, 1)), path("g.txt")));
  save_native(m, path("m.dst"));
  const std::string good = read_bytes(path("m.dst"));

  std::string bad = good;
  bad.replace(0, 8, "NOTADSTN");
  write_bytes(path("magic.dst"), bad);
  EXPECT_THAT(error_of(path("magic.dst"), as(Format::Native)), HasSubstr("wrong magic"));

  bad = good;
  bad[8] = 2;
  write_bytes(path("ver.dst"), bad);
  EXPECT_THAT(error_of(path("ver.dst")), HasSubstr("unsupported native format version 2 (this build reads version 1)"));

  write_bytes(path("cut.dst"), good.substr(0, good.size() - 10));
  EXPECT_EQ(error_of(path("cut.dst")), path("cut.dst") + ": truncated: expected " + std::to_string(good.size()) +
                                           " bytes, file has " + std::to_string(good.size() - 10));
  write_bytes(path("head.dst"), good.substr(0, 40));
  EXPECT_THAT(error_of(path("head.dst")), HasSubstr("truncated: expected 96 bytes (header), file has 40"));

  write_bytes(path("long.dst"), good + "xx");
  EXPECT_THAT(error_of(path("long.dst")), HasSubstr("2 unexpected bytes after the vectors"));

  bad = good;
  bad[16] = 0;  // rows 10 -> 0
  write_bytes(path("rows0.dst"), bad);
  EXPECT_THAT(error_of(path("rows0.dst")), HasSubstr("0 rows"));

  bad = good;
  fmt::put_u64(reinterpret_cast<unsigned char*>(&bad[16]), 1ull << 31);
  write_bytes(path("huge.dst"), bad);
  EXPECT_THAT(error_of(path("huge.dst")), HasSubstr("2^31-1"));
}

TEST_F(Formats, NativeVocabularyMustBeSortedAndConsistent) {
  Model m;
  m.allocate(2, 2);
  m.words = {"aa", "ab"};
  m.row(0)[0] = m.row(1)[1] = 1;
  finalize_model(m, {}, nullptr);
  save_native(m, path("m.dst"));
  std::string good = read_bytes(path("m.dst"));
  std::size_t vocab_at = 96 + 3 * 8;
  ASSERT_EQ(good.substr(vocab_at, 4), "aaab");

  std::string bad = good;
  bad[vocab_at] = 'b';  // "ba", "ab"
  write_bytes(path("unsorted.dst"), bad);
  EXPECT_THAT(error_of(path("unsorted.dst")), HasSubstr("vocabulary not sorted at word 'ab'"));
  bad = good;
  bad[vocab_at + 3] = 'a';  // "aa", "aa"
  write_bytes(path("dup.dst"), bad);
  EXPECT_THAT(error_of(path("dup.dst")), HasSubstr("duplicated word 'aa'"));
  bad = good;
  bad[96 + 8] = 5;  // offsets 0, 5, 4: decreasing
  write_bytes(path("offs.dst"), bad);
  EXPECT_THAT(error_of(path("offs.dst")), HasSubstr("vocabulary offset"));

  Model unsorted;
  unsorted.allocate(2, 2);
  unsorted.words = {"b", "a"};
  try {
    save_native(unsorted, path("x.dst"));
    ADD_FAILURE() << "save_native accepted an unsorted vocabulary";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("not sorted"));
  }
  EXPECT_FALSE(fs::exists(path("x.dst")));
  EXPECT_FALSE(fs::exists(path("x.dst.tmp")));
}

TEST_F(Formats, Word2VecHeaderAndTruncation) {
  Rows r = random_rows(6, 4, 12);
  write_w2v_binary(path("m.bin"), r);
  std::string good = read_bytes(path("m.bin"));
  write_bytes(path("cut.bin"), good.substr(0, good.size() - 9));
  EXPECT_THAT(error_of(path("cut.bin")), HasSubstr("truncated: the header announces 6 rows, the file ends in row 6"));
  write_bytes(path("short.bin"), good.substr(0, good.size() / 2));
  EXPECT_THAT(error_of(path("short.bin")), HasSubstr("truncated: expected at least"));
  write_bytes(path("more.bin"), "5" + good.substr(1));  // header says 5 rows, 6 follow
  EXPECT_THAT(error_of(path("more.bin")), HasSubstr("data after the 5 rows the header announces"));
  write_bytes(path("g.txt"), "a 1 2\n");
  EXPECT_THAT(error_of(path("g.txt"), as(Format::Word2VecBinary)), HasSubstr("g.txt:1: expected a word2vec header"));
  write_bytes(path("big.bin"), "3000000000 5\nxyz");
  EXPECT_THAT(error_of(path("big.bin")), HasSubstr("rows is more than the 2147483647 (2^31-1) rows supported"));
  write_bytes(path("t.txt"), "2 3\na 1 2 3\nb 1 2 3\nc 1 2 3\n");
  EXPECT_THAT(error_of(path("t.txt")), HasSubstr("the header announces 2 rows, the file has 3"));
  EXPECT_THAT(error_of(path("t.txt"), as(Format::GloveText)), HasSubstr("t.txt:1: this looks like a word2vec header"));
}

TEST_F(Formats, UnrecognisedBinaryAndUnknownFormatName) {
  write_bytes(path("x.bin"), std::string("\x01\x02\x00\x03 binary", 10));
  EXPECT_THAT(error_of(path("x.bin")), HasSubstr("not a recognised model format"));
  EXPECT_THROW(parse_format("fasttext"), Error);
  try {
    parse_format("fasttext");
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown format 'fasttext'"));
  }
  for (Format f :
       {Format::Auto, Format::GloveText, Format::StudyText, Format::StudySplit, Format::Word2VecBinary, Format::Native})
    EXPECT_EQ(parse_format(format_name(f)), f);
}

TEST_F(Formats, ZeroVectorsAndEmptyWords) {
  write_bytes(path("z.txt"), "a 1 2\nb 0 0\nc 0 -0\n");
  LoadReport rep;
  Model m = load_model(path("z.txt"), {}, &rep);
  EXPECT_EQ(m.rows, 3);
  EXPECT_EQ(rep.zero_vectors, 2);
  EXPECT_EQ(m.norms[1], 0.0f);
  LoadOptions strict;
  strict.allow_zero_vectors = false;
  EXPECT_THAT(error_of(path("z.txt"), strict),
              HasSubstr("z.txt:2: zero vector for 'b' (zero vectors are not allowed)"));
  strict.skip_bad_rows = true;
  Model s = load_model(path("z.txt"), strict, &rep);
  EXPECT_EQ(s.words, std::vector<std::string>{"a"});
  EXPECT_EQ(rep.zero_vectors, 2);

  write_bytes(path("e.txt"), "a 1 2\n 3 4\n");
  EXPECT_THAT(error_of(path("e.txt")), HasSubstr("e.txt:2: empty word"));
  LoadOptions skip;
  skip.skip_bad_rows = true;
  EXPECT_EQ(load_model(path("e.txt"), skip, &rep).rows, 1);
  EXPECT_EQ(rep.skipped_empty_words, 1);
}

TEST_F(Formats, SkipBadRowsCountsAndKeepsTheFirstDuplicate) {
  write_bytes(path("b.txt"),
              "ok 1 2\n"
              "dup 3 4\n"
              "nan nan 1\n"
              "dup 5 6\n"
              "inf 1 inf\n"
              "zero 0 0\n"
              "dup 7 8\n"
              "last 9 9\n");
  LoadOptions opt;
  opt.skip_bad_rows = true;
  LoadReport rep;
  rep.skipped_duplicates = 42;  // load_model resets the report
  Model m = load_model(path("b.txt"), opt, &rep);
  EXPECT_EQ(m.words, (std::vector<std::string>{"dup", "last", "ok", "zero"}));
  EXPECT_EQ(rep.skipped_nonfinite, 2);
  EXPECT_EQ(rep.skipped_duplicates, 2);
  EXPECT_EQ(rep.zero_vectors, 1);
  EXPECT_EQ(m.row(m.find("dup"))[0], 3.0f);
  // The same through a binary reader and finalize_model.
  Rows r;
  r.words = {"x", "y", "x", "z"};
  r.vecs = {{1, 1}, {std::numeric_limits<float>::infinity(), 0}, {2, 2}, {3, 3}};
  write_w2v_binary(path("b.bin"), r);
  Model w = load_model(path("b.bin"), opt, &rep);
  EXPECT_EQ(w.words, (std::vector<std::string>{"x", "z"}));
  EXPECT_EQ(rep.skipped_nonfinite, 1);
  EXPECT_EQ(rep.skipped_duplicates, 1);
  EXPECT_EQ(w.row(0)[0], 1.0f);
}

// --- the real model (scripts/fetch_glove.sh) ------------------------------------------------

TEST(RealModel, GloVe6B50dLoadsThroughTheWord2VecReader) {
  std::string p = real_model_path();
  if (p.empty())
    GTEST_SKIP() << "real GloVe model not found at " << test::real_model_default_path()
                 << "; run scripts/fetch_glove.sh";
  LoadReport rep;
  Model m = load_model(p, {}, &rep);
  EXPECT_EQ(m.format, "word2vec");
  EXPECT_EQ(m.rows, 400000);
  EXPECT_EQ(m.dim, 50);
  EXPECT_EQ(m.ld, 52);
  EXPECT_EQ(rep.skipped_duplicates + rep.skipped_nonfinite, 0);
  for (const char* w : {"king", "queen", "man", "woman", "the", ","}) EXPECT_GE(m.find(w), 0) << w;
  // GloVe 6B's published first components of "the" and "king".
  EXPECT_FLOAT_EQ(m.row(m.find("the"))[0], 0.418f);
  EXPECT_FLOAT_EQ(m.row(m.find("king"))[0], 0.50451f);
  EXPECT_TRUE(std::is_sorted(m.words.begin(), m.words.end()));
}

}  // namespace

// The native reader hands a sink (the GPU upload) every row of the vector section exactly once,
// in whole rows, from its reading threads, with the padding zeroed even where the file has
// other bytes there; what the sink sees is what the host model holds.
namespace {
struct RecordingSink : VectorSink {
  std::int64_t rows = 0;
  int dim = 0, ld = 0;
  unsigned readers = 0;
  bool ended = false;
  std::mutex mu;
  std::vector<float> got;
  std::vector<std::pair<std::uint64_t, std::size_t>> chunks;
  void begin(std::int64_t r, int d, int l, unsigned n) override {
    rows = r, dim = d, ld = l, readers = n;
    got.assign(static_cast<std::size_t>(r) * l, std::numeric_limits<float>::quiet_NaN());
  }
  void chunk(unsigned reader, std::uint64_t offset, const void* data, std::size_t bytes) override {
    EXPECT_LT(reader, readers);
    std::lock_guard<std::mutex> lock(mu);
    chunks.emplace_back(offset, bytes);
    std::memcpy(reinterpret_cast<char*>(got.data()) + offset, data, bytes);
  }
  void end() override { ended = true; }
};
}  // namespace

TEST_F(Formats, NativeVectorsReachTheSinkOnceInWholeRowsWithZeroPadding) {
  for (int dim : {301, 7}) {
    // dim 301: three 16 MiB read chunks, the last not full; dim 7: one chunk.
    const int rows = 40001;
    Rows r = random_rows(rows, dim, 5);
    write_w2v_binary(path("w.bin"), r);
    const Model src = load_model(path("w.bin"));
    save_native(src, path("n.dst"));
    // Non-zero bytes in the padding of the first and last rows: the reader must zero them.
    const std::uint64_t size = fs::file_size(path("n.dst"));
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(src.ld) * 4;
    const std::uint64_t vectors_at = size - row_bytes * rows;
    {
      std::fstream f(path("n.dst"), std::ios::in | std::ios::out | std::ios::binary);
      const float junk = 42.0f;
      for (std::uint64_t row : {std::uint64_t{0}, std::uint64_t(rows - 1)}) {
        f.seekp(static_cast<std::streamoff>(vectors_at + row * row_bytes + 4 * dim));
        f.write(reinterpret_cast<const char*>(&junk), 4);
      }
    }
    RecordingSink sink;
    LoadOptions opt;
    opt.sink = &sink;
    LoadReport rep;
    const Model m = load_model(path("n.dst"), opt, &rep);
    ASSERT_TRUE(sink.ended);
    EXPECT_EQ(sink.rows, rows);
    EXPECT_EQ(sink.dim, dim);
    EXPECT_EQ(sink.ld, m.ld);
    EXPECT_GE(sink.readers, 1u);
    EXPECT_EQ(rep.vector_bytes, row_bytes * rows);
    std::sort(sink.chunks.begin(), sink.chunks.end());
    std::uint64_t next = 0;
    for (const auto& [off, bytes] : sink.chunks) {
      EXPECT_EQ(off, next) << "chunks must tile the vector section without gaps or overlaps";
      EXPECT_EQ(bytes % row_bytes, 0u) << "chunks are whole rows";
      next = off + bytes;
    }
    EXPECT_EQ(next, row_bytes * rows);
    if (dim == 301) {
      EXPECT_GT(sink.chunks.size(), 1u);
    }
    ASSERT_EQ(sink.got.size(), static_cast<std::size_t>(rows) * m.ld);
    EXPECT_EQ(0, std::memcmp(sink.got.data(), m.vectors.data(), sink.got.size() * 4)) << "sink and host model differ";
    EXPECT_EQ(0, std::memcmp(m.vectors.data(), src.vectors.data(), sink.got.size() * 4)) << "not the saved model";
    for (std::int64_t row : {std::int64_t{0}, std::int64_t(rows - 1)})
      for (int j = dim; j < m.ld; ++j) EXPECT_EQ(m.row(row)[j], 0.0f) << "padding of row " << row;
  }
}

// Other formats are assembled on the host: the sink is never called.
TEST_F(Formats, OnlyTheNativeReaderFeedsASink) {
  Rows r = random_rows(20, 5, 3);
  write_text(path("g.txt"), r);
  RecordingSink sink;
  LoadOptions opt;
  opt.sink = &sink;
  load_model(path("g.txt"), opt);
  EXPECT_EQ(sink.readers, 0u);
  EXPECT_TRUE(sink.chunks.empty());
}

// The native reader keeps rows in place without re-sorting (it checked the order itself), and
// still counts zero rows, refuses them when asked, and skips NaN rows when asked.
TEST_F(Formats, NativeFastPathStillValidatesRows) {
  Rows r = random_rows(50, 6, 9);
  for (float& x : r.vecs[7]) x = 0.0f;
  write_w2v_binary(path("w.bin"), r);
  save_native(load_model(path("w.bin")), path("z.dst"));
  LoadReport rep;
  const Model m = load_model(path("z.dst"), {}, &rep);
  EXPECT_EQ(m.rows, 50);
  EXPECT_EQ(rep.zero_vectors, 1);
  LoadOptions strict;
  strict.allow_zero_vectors = false;
  EXPECT_THAT(error_of(path("z.dst"), strict), HasSubstr("zero vector"));
  for (float& x : r.vecs[7]) x = std::numeric_limits<float>::quiet_NaN();
  write_w2v_binary(path("n.bin"), r);
  LoadOptions skip;
  skip.skip_bad_rows = true;
  Model bad = load_model(path("n.bin"), skip);  // the NaN row skipped on the way in
  ASSERT_EQ(bad.rows, 49);
  bad.vectors.data()[3 * bad.ld] = std::numeric_limits<float>::infinity();
  save_native(bad, path("inf.dst"));
  EXPECT_THAT(error_of(path("inf.dst")), HasSubstr("non-finite"));
  LoadReport skipped;
  EXPECT_EQ(load_model(path("inf.dst"), skip, &skipped).rows, 48);
  EXPECT_EQ(skipped.skipped_nonfinite, 1);
}

// A rank reads only its rows of a native model (docs/scale.md): rows [first, last) equal the
// whole load's, words, norms and vectors, for the first, a middle, the last and an empty range,
// the normalized flag included; a range outside the model, or asked of a text model, is one error.
TEST_F(Formats, NativeRowRangeEqualsTheWholeModelsRows) {
  write_text(path("m.txt"), random_rows(101, 7, 21));
  for (bool normalized : {false, true}) {
    SCOPED_TRACE(normalized ? "normalized" : "plain");
    Model src = load_model(path("m.txt"));
    if (normalized) {
      for (std::int64_t i = 0; i < src.rows; ++i)
        for (int j = 0; j < src.dim; ++j) src.row(i)[j] /= src.norms[static_cast<std::size_t>(i)];
      src.normalized = true;
    }
    save_native(src, path("n.dst"));
    const Model all = load_model(path("n.dst"));
    for (auto [first, last] : {std::pair<std::int64_t, std::int64_t>{0, 101}, {0, 34}, {34, 68}, {100, 101}, {5, 5}}) {
      SCOPED_TRACE(std::to_string(first) + "-" + std::to_string(last));
      LoadOptions o;
      o.first_row = first;
      o.last_row = last;
      const Model part = load_model(path("n.dst"), o);
      ASSERT_EQ(part.rows, last - first);
      ASSERT_EQ(part.dim, all.dim);
      EXPECT_EQ(part.normalized, all.normalized);
      for (std::int64_t r = 0; r < part.rows; ++r) {
        const std::size_t g = static_cast<std::size_t>(first + r);
        EXPECT_EQ(part.words[static_cast<std::size_t>(r)], all.words[g]);
        EXPECT_EQ(part.norms[static_cast<std::size_t>(r)], all.norms[g]);
        EXPECT_EQ(0, std::memcmp(part.row(r), all.row(first + r), sizeof(float) * all.ld)) << "row " << g;
      }
    }
  }
  for (auto [first, last] : {std::pair<std::int64_t, std::int64_t>{-1, 5}, {7, 6}, {0, 102}}) {
    LoadOptions o;
    o.first_row = first;
    o.last_row = last;
    EXPECT_THAT(error_of(path("n.dst"), o), HasSubstr("asked of a model of 101 rows"));
  }
  LoadOptions o;
  o.first_row = 3;
  EXPECT_THAT(error_of(path("m.txt"), o), HasSubstr("convert it first"));
}

// The vocabulary a rank looks query words up in: every word at its row, each row read from the
// file equal to the model's, and the queries it makes bit for bit the model's.
TEST_F(Formats, NativeVocabularyAnswersAsTheModelDoes) {
  save_native(load_model((write_text(path("m.txt"), random_rows(60, 9, 5)), path("m.txt"))), path("n.dst"));
  const Model m = load_model(path("n.dst"));
  const NativeVocabulary v(path("n.dst"));
  ASSERT_EQ(v.rows(), m.rows);
  ASSERT_EQ(v.dim(), m.dim);
  std::vector<float> row(static_cast<std::size_t>(m.dim));
  for (std::int64_t r = 0; r < m.rows; ++r) {
    EXPECT_EQ(v.find(m.words[static_cast<std::size_t>(r)]), r);
    EXPECT_EQ(v.word(r), m.words[static_cast<std::size_t>(r)]);
    v.read_row(r, row.data());
    EXPECT_EQ(0, std::memcmp(row.data(), m.row(r), sizeof(float) * m.dim)) << "row " << r;
  }
  EXPECT_EQ(v.find("no such word"), -1);
  EXPECT_THROW(v.read_row(m.rows, row.data()), Error);
  const std::string text = m.words[3] + " - " + m.words[17] + " + " + m.words[42];
  for (const std::string& t : {m.words[0], text}) {
    const Query a = make_query(v, t), b = make_query(m, t);
    EXPECT_EQ(a.vector, b.vector) << t;
    EXPECT_EQ(a.norm, b.norm) << t;
    EXPECT_EQ(a.word_rows, b.word_rows) << t;
  }
  EXPECT_THROW(make_query(v, "no such word"), Error);
  EXPECT_THROW(NativeVocabulary(path("m.txt")), Error);
}
