// The native format (docs/formats.md has the byte layout): a fixed 96-byte header, then the
// vocabulary offsets, vocabulary bytes, norms and 64-byte aligned rows of ld floats, so the
// vectors are read with large sequential reads straight into Model::vectors.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>

#include "harness/formats/internal.hpp"
#include "harness/formats/io.hpp"
#include "runtime/atomic_file.hpp"

namespace distancies::fmt {
namespace {

constexpr char kMagic[8] = {'D', 'S', 'T', 'N', 'C', 'I', 'E', 'S'};
constexpr std::uint32_t kVersion = 1;
constexpr std::uint32_t kFlagNormalized = 1;
constexpr std::size_t kHeaderBytes = 96;

struct Layout {
  std::uint64_t offsets_at, offsets_size, vocab_at, vocab_size, norms_at, norms_size, vectors_at, vectors_size;
  std::uint64_t end() const { return vectors_at + vectors_size; }
};

Layout layout_for(std::uint64_t rows, std::uint32_t ld, std::uint64_t vocab_size) {
  Layout l{};
  l.offsets_at = kHeaderBytes;
  l.offsets_size = (rows + 1) * 8;
  l.vocab_at = l.offsets_at + l.offsets_size;
  l.vocab_size = vocab_size;
  l.norms_at = l.vocab_at + vocab_size;
  l.norms_size = rows * 4;
  l.vectors_at = (l.norms_at + l.norms_size + 63) / 64 * 64;
  l.vectors_size = rows * ld * 4;
  return l;
}

// The vector section, read by several threads in whole-row chunks; each chunk's row padding
// is zeroed (the format says zero; a file that disagrees must not reach the GPU otherwise) and
// then handed to the sink, if any, from the thread that read it.
void read_vectors(Model& m, const std::string& path, std::uint64_t at, const LoadOptions& opt, LoadReport* report,
                  std::vector<unsigned char>& kinds) {
  const std::size_t row_bytes = static_cast<std::size_t>(m.ld) * sizeof(float);
  const std::size_t chunk = std::max<std::size_t>(1, (16u << 20) / row_bytes) * row_bytes;
  const std::uint64_t bytes = static_cast<std::uint64_t>(m.rows) * row_bytes;
  const unsigned readers = worker_count();
  kinds.assign(static_cast<std::size_t>(m.rows), 0);
  if (opt.sink) opt.sink->begin(m.rows, m.dim, m.ld, readers);
  std::atomic<std::uint64_t> done{0};
  std::mutex progress_mu;
  read_parallel(
      path, at, m.vectors.data(), bytes, chunk, readers,
      [&](unsigned r, std::uint64_t off, unsigned char* data, std::size_t n) {
        // While the chunk is in cache: the padding zeroed, each row's kind for the
        // validation (finalize reads the vectors no second time).
        const std::size_t first = off / row_bytes;
        for (std::size_t row = 0; row < n / row_bytes; ++row) {
          float* v = reinterpret_cast<float*>(data + row * row_bytes);
          std::fill(v + m.dim, v + m.ld, 0.0f);
          kinds[first + row] = row_kind(v, m.dim);
        }
        if (opt.sink) opt.sink->chunk(r, off, data, n);
        const std::uint64_t total = done += n;
        if (opt.progress) {
          std::lock_guard<std::mutex> lock(progress_mu);
          opt.progress(at + total, at + bytes);
        }
      },
      "vectors");
  if (opt.sink) opt.sink->end();
  if (report) {
    report->vector_bytes = bytes;
    report->readers = std::min<unsigned>(readers, static_cast<unsigned>((bytes + chunk - 1) / chunk));
  }
}

}  // namespace

namespace {

// The header, checked against the file: shape, flags and the sections' layout.
struct Header {
  std::uint64_t rows = 0;
  std::uint32_t dim = 0, ld = 0, flags = 0;
  Layout l{};
};

Header read_header(InFile& file, const std::string& path) {
  const std::uint64_t size = file.size();
  if (size == 0) fail(path, "empty file");
  unsigned char h[kHeaderBytes] = {};
  std::size_t got = file.read_some(h, kHeaderBytes);
  if (got < sizeof kMagic || std::memcmp(h, kMagic, sizeof kMagic) != 0)
    fail(path, "wrong magic: not a distancies native model (expected the bytes \"DSTNCIES\" at offset 0)");
  if (got < kHeaderBytes)
    fail(path,
         "truncated: expected " + std::to_string(kHeaderBytes) + " bytes (header), file has " + std::to_string(size));
  const std::uint32_t version = get_u32(h + 8), flags = get_u32(h + 12);
  if (version != kVersion)
    fail(path, "unsupported native format version " + std::to_string(version) + " (this build reads version " +
                   std::to_string(kVersion) + ")");
  if (flags & ~kFlagNormalized) fail(path, "unknown flags " + std::to_string(flags) + " in the header");
  const std::uint64_t rows = get_u64(h + 16);
  const std::uint32_t dim = get_u32(h + 24), ld = get_u32(h + 28);
  if (rows == 0) fail(path, "the header says 0 rows");
  check_row_count(path, rows);
  if (dim == 0 || dim > (1u << 24) || ld != static_cast<std::uint32_t>(leading_dim(static_cast<int>(dim))))
    fail(path,
         "bad header: dim " + std::to_string(dim) + ", ld " + std::to_string(ld) + " (ld must be dim rounded up to 4)");

  Layout l{};
  std::uint64_t* fields[8] = {&l.offsets_at, &l.offsets_size, &l.vocab_at,   &l.vocab_size,
                              &l.norms_at,   &l.norms_size,   &l.vectors_at, &l.vectors_size};
  for (int i = 0; i < 8; ++i) *fields[i] = get_u64(h + 32 + 8 * i);
  // Sizes the header implies; the vocabulary blob can be any size up to the file's.
  if (l.vocab_size > size)
    fail(path, "bad header: vocabulary size " + std::to_string(l.vocab_size) + " exceeds the file");
  const Layout want = layout_for(rows, ld, l.vocab_size);
  if (l.offsets_size != want.offsets_size || l.norms_size != want.norms_size || l.vectors_size != want.vectors_size)
    fail(path, "bad header: section sizes do not match " + std::to_string(rows) + " rows of dimension " +
                   std::to_string(dim));
  // Sections in order, not overlapping, vectors 64-byte aligned.
  if (l.offsets_at < kHeaderBytes || l.vocab_at < l.offsets_at + l.offsets_size ||
      l.norms_at < l.vocab_at + l.vocab_size || l.vectors_at < l.norms_at + l.norms_size || l.vectors_at % 64 != 0)
    fail(path, "bad header: section offsets are out of order, overlapping or misaligned");
  if (size < l.end())
    fail(path, "truncated: expected " + std::to_string(l.end()) + " bytes, file has " + std::to_string(size));
  if (size > l.end())
    fail(path, std::to_string(size - l.end()) + " unexpected bytes after the vectors (expected " +
                   std::to_string(l.end()) + " bytes)");
  return {rows, dim, ld, flags, l};
}

// The words of rows [first, last) into words[0, last - first), read alone: their offsets, their
// bytes, checked increasing within the vocabulary, sorted and unique; from row 0 to the end that
// is the whole vocabulary, and the offsets must then span it exactly.
void read_words(InFile& file, const std::string& path, const Header& hd, std::uint64_t first, std::uint64_t last,
                std::vector<std::string>& words) {
  const Layout& l = hd.l;
  std::vector<std::uint64_t> offsets(last - first + 1);
  file.seek(l.offsets_at + first * 8);
  file.read_exact(offsets.data(), offsets.size() * 8, "vocabulary offsets");
  if ((first == 0 && offsets.front() != 0) || (last == hd.rows && offsets.back() != l.vocab_size))
    fail(path, "vocabulary offsets do not span the vocabulary (first " + std::to_string(offsets.front()) + ", last " +
                   std::to_string(offsets.back()) + ", size " + std::to_string(l.vocab_size) + ")");
  for (std::uint64_t i = 0; i + first < last; ++i) {
    const std::uint64_t r = first + i;
    if (offsets[i + 1] < offsets[i]) fail(path, "vocabulary offsets decrease at row " + std::to_string(r + 1));
    if (offsets[i + 1] > l.vocab_size)
      fail(path, "vocabulary offset " + std::to_string(offsets[i + 1]) + " at row " + std::to_string(r + 1) +
                     " is past the vocabulary's " + std::to_string(l.vocab_size) + " bytes");
  }
  std::string blob(offsets.back() - offsets.front(), '\0');
  file.seek(l.vocab_at + offsets.front());
  file.read_exact(blob.data(), blob.size(), "vocabulary");
  for (std::uint64_t i = 0; i + first < last; ++i) {
    words[i].assign(blob, offsets[i] - offsets.front(), offsets[i + 1] - offsets[i]);
    if (i > 0 && !(words[i - 1] < words[i]))
      fail(path, (words[i - 1] == words[i] ? "duplicated word " : "vocabulary not sorted at word ") + quoted(words[i]) +
                     " (row " + std::to_string(first + i + 1) + ")");
  }
}

}  // namespace

Model load_native(const std::string& path, const LoadOptions& opt, LoadReport* report) {
  InFile file(path);
  const Header hd = read_header(file, path);
  const Layout& l = hd.l;
  const std::uint32_t dim = hd.dim, ld = hd.ld, flags = hd.flags;
  // The rows asked for: all, or one rank's range (docs/scale.md, "Each rank reads only its rows").
  const std::int64_t total = static_cast<std::int64_t>(hd.rows);
  const std::int64_t first = opt.first_row, last = opt.last_row < 0 ? total : opt.last_row;
  if (first < 0 || first > last || last > total)
    fail(path, "rows " + std::to_string(first) + " to " + std::to_string(last) + " asked of a model of " +
                   std::to_string(total) + " rows");
  const std::uint64_t rows = static_cast<std::uint64_t>(last - first);
  if (rows == 0) {  // a rank with no rows (more ranks than rows) holds nothing
    Model m;
    m.allocate(0, static_cast<int>(dim));
    m.normalized = (flags & kFlagNormalized) != 0;
    m.format = "native";
    return m;
  }
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  Model m;
  m.allocate(static_cast<std::int64_t>(rows), static_cast<int>(dim), /*zero=*/false);  // every byte is read
  m.normalized = (flags & kFlagNormalized) != 0;
  // The vector section is read (and handed to the sink) by its own threads while this one
  // reads the vocabulary and the norms; nothing below leaves before they are joined.
  std::exception_ptr vectors_failed;
  double vectors_ms = 0;
  std::vector<unsigned char> kinds;
  std::thread vectors([&] {
    try {
      const auto tv = clock::now();
      read_vectors(m, path, l.vectors_at + static_cast<std::uint64_t>(first) * ld * 4, opt, report, kinds);
      vectors_ms = std::chrono::duration<double, std::milli>(clock::now() - tv).count();
    } catch (...) {
      vectors_failed = std::current_exception();
    }
  });
  struct Joiner {
    std::thread& t;
    ~Joiner() {
      if (t.joinable()) t.join();
    }
  } joiner{vectors};
  read_words(file, path, hd, static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(last), m.words);
  file.seek(l.norms_at + static_cast<std::uint64_t>(first) * 4);
  file.read_exact(m.norms.data(), rows * 4, "norms");
  vectors.join();
  if (vectors_failed) std::rethrow_exception(vectors_failed);
  m.format = "native";
  // Stored norms are kept, except in a normalised model: there they are the rows' norms
  // before normalisation, kept as data, and the norms searched with are the unit rows' own.
  if (m.normalized) m.original_norms = m.norms;
  finalize_in_place(m, path, m.normalized, opt, report, &kinds, /*sorted_unique=*/true);  // checked above
  if (report) {
    report->vectors_ms = vectors_ms;
    report->rest_ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count() - vectors_ms;
  }
  return m;
}

void save_native(const Model& m, const std::string& path) {
  if (m.rows <= 0 || m.words.size() != static_cast<std::size_t>(m.rows) || m.norms.size() != m.words.size())
    fail(path, "cannot save: the model's rows, words and norms disagree");
  check_row_count(path, static_cast<std::uint64_t>(m.rows));
  if (m.dim <= 0 || m.ld != leading_dim(m.dim) || m.vectors.size() < static_cast<std::size_t>(m.rows) * m.ld)
    fail(path, "cannot save: the model's dim, ld and vectors disagree");
  std::vector<std::uint64_t> offsets(m.words.size() + 1, 0);
  for (std::size_t r = 0; r < m.words.size(); ++r) {
    if (r > 0 && !(m.words[r - 1] < m.words[r]))
      fail(path,
           "cannot save: the vocabulary is not sorted and unique at " + quoted(m.words[r]) + " (finalize_model first)");
    offsets[r + 1] = offsets[r] + m.words[r].size();
  }
  const Layout l = layout_for(static_cast<std::uint64_t>(m.rows), static_cast<std::uint32_t>(m.ld), offsets.back());

  unsigned char h[kHeaderBytes] = {};
  std::memcpy(h, kMagic, sizeof kMagic);
  put_u32(h + 8, kVersion);
  put_u32(h + 12, m.normalized ? kFlagNormalized : 0);
  put_u64(h + 16, static_cast<std::uint64_t>(m.rows));
  put_u32(h + 24, static_cast<std::uint32_t>(m.dim));
  put_u32(h + 28, static_cast<std::uint32_t>(m.ld));
  const std::uint64_t fields[8] = {l.offsets_at, l.offsets_size, l.vocab_at,   l.vocab_size,
                                   l.norms_at,   l.norms_size,   l.vectors_at, l.vectors_size};
  for (int i = 0; i < 8; ++i) put_u64(h + 32 + 8 * i, fields[i]);

  // Written beside the target and renamed (an error or an interrupt leaves no half file).
  AtomicFile out(path);
  out.write(h, sizeof h);
  out.write(offsets.data(), l.offsets_size);
  for (const std::string& w : m.words) out.write(w.data(), w.size());
  // A normalised model stores its original norms (the rows' own are 1).
  const bool originals = m.normalized && m.original_norms.size() == m.norms.size();
  out.write(originals ? m.original_norms.data() : m.norms.data(), l.norms_size);
  static const char zeros[64] = {};
  out.write(zeros, l.vectors_at - (l.norms_at + l.norms_size));
  out.write(m.vectors.data(), l.vectors_size);
  out.commit();
}

}  // namespace distancies::fmt

namespace distancies {
void save_native(const Model& m, const std::string& path) { fmt::save_native(m, path); }

NativeVocabulary::NativeVocabulary(const std::string& path) : path_(path) {
  fmt::InFile file(path);
  const fmt::Header hd = fmt::read_header(file, path);
  dim_ = static_cast<int>(hd.dim);
  ld_ = static_cast<int>(hd.ld);
  vectors_at_ = hd.l.vectors_at;
  words_.resize(static_cast<std::size_t>(hd.rows));
  fmt::read_words(file, path, hd, 0, hd.rows, words_);
}

std::int64_t NativeVocabulary::find(std::string_view word) const {
  const auto it = std::lower_bound(words_.begin(), words_.end(), word,
                                   [](const std::string& a, std::string_view b) { return std::string_view(a) < b; });
  return it != words_.end() && *it == word ? it - words_.begin() : -1;
}

void NativeVocabulary::read_row(std::int64_t row, float* out) const {
  if (row < 0 || row >= rows()) throw Error(path_ + ": row " + std::to_string(row) + " is not in the model");
  fmt::InFile file(path_);
  file.seek(vectors_at_ + static_cast<std::uint64_t>(row) * ld_ * 4);
  file.read_exact(out, static_cast<std::size_t>(dim_) * 4, "a row's vector");
  if (fmt::row_kind(out, dim_) == 1)
    throw Error(path_ + ": row " + std::to_string(row) + " ('" + words_[static_cast<std::size_t>(row)] +
                "') has a NaN or Inf");
}
}  // namespace distancies
