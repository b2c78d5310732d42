#include "harness/synthetic.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/error.hpp"

namespace distancies {

const std::vector<std::string>& study_words() {
  static const std::vector<std::string> w = {"barca", "bottle", "key",  "king",  "man",
                                             "messi", "queen",  "ring", "snake", "woman"};
  return w;
}

std::vector<std::string> synthetic_vocabulary(std::int64_t rows) {
  const auto& base = study_words();
  if (rows < static_cast<std::int64_t>(base.size()))
    throw Error("a synthetic model needs at least " + std::to_string(base.size()) + " rows (the study's query words)");
  std::vector<std::string> words(base.begin(), base.end());
  words.reserve(static_cast<std::size_t>(rows));
  char buf[32];
  for (std::int64_t i = 0; static_cast<std::int64_t>(words.size()) < rows; ++i) {
    std::snprintf(buf, sizeof buf, "w%07lld", static_cast<long long>(i));
    words.emplace_back(buf);
  }
  std::sort(words.begin(), words.end());
  return words;
}

Model make_synthetic_model(std::int64_t rows, int dim, std::uint64_t seed, const DataFamily& family) {
  if (dim <= 0) throw Error("dimension must be positive");
  Model m;
  m.allocate(rows, dim);
  m.words = synthetic_vocabulary(rows);
  for (std::int64_t r = 0; r < rows; ++r) {
    float* v = m.row(r);
    for (int c = 0; c < dim; ++c) v[c] = family_value(family, seed, r, c);
    m.norms[static_cast<std::size_t>(r)] = vector_norm(v, dim);
  }
  m.format = "synthetic";
  return m;
}

const std::vector<std::string>& standard_families() {
  static const std::vector<std::string> f = {"iid",        "aniso:0.5", "aniso:0.8", "aniso:0.9", "aniso:0.95",
                                             "aniso:0.98", "dirs:0.7",  "clustered", "heavy"};
  return f;
}

namespace {

double family_parameter(const std::string& name, std::size_t colon, double hi) {
  const std::string text = name.substr(colon + 1);
  char* end = nullptr;
  const double c = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(c > 0.0 && c < hi))
    throw Error("data family '" + name + "': the mean cosine must be a number in (0, " + std::to_string(hi) + ")");
  return c;
}

}  // namespace

DataFamily make_family(const std::string& name, int dim) {
  if (dim <= 0) throw Error("dimension must be positive");
  DataFamily f;
  f.unit = static_cast<float>(1.0 / std::sqrt(double(dim)));
  const double noise = double(kSyntheticSd) * kSyntheticSd * dim;  // E|z|^2
  const std::size_t colon = name.find(':');
  const std::string kind = name.substr(0, colon);
  if (name == "iid") return f;
  if (kind == "aniso" && colon != std::string::npos) {
    // x = a u + z: x.y ~ a^2 and |x|^2 ~ a^2 + D sd^2, so a^2 = c D sd^2 / (1 - c).
    f.kind = FamilyKind::Anisotropic;
    f.cosine = static_cast<float>(family_parameter(name, colon, 1.0));
    f.amplitude = static_cast<float>(std::sqrt(f.cosine * noise / (1.0 - f.cosine)));
    return f;
  }
  if (kind == "dirs" && colon != std::string::npos) {
    // Energies a^2 (1 + 1/2 + 1/4 + 1/8) = 1.875 a^2 = A; each weight's second moment is 1.25 its
    // square, so the mean cosine is ~ A / (1.25 A + D sd^2): A = c D sd^2 / (1 - 1.25 c).
    f.kind = FamilyKind::Directions;
    f.cosine = static_cast<float>(family_parameter(name, colon, 0.8));
    f.amplitude = static_cast<float>(std::sqrt(f.cosine * noise / (1.0 - 1.25 * f.cosine) / 1.875));
    return f;
  }
  if (name == "clustered") {
    f.kind = FamilyKind::Clustered;
    f.cluster_levels = 11;  // 2,047 clusters, the largest an eleventh of the rows
    return f;
  }
  if (name == "heavy") {
    f.kind = FamilyKind::HeavyTailed;
    return f;
  }
  throw Error("unknown data family '" + name + "' (known: iid, aniso:C, dirs:C, clustered, heavy)");
}

std::string family_name(const DataFamily& f) {
  char buf[32];
  switch (f.kind) {
    case FamilyKind::Anisotropic:
      std::snprintf(buf, sizeof buf, "aniso:%g", double(f.cosine));
      return buf;
    case FamilyKind::Directions:
      std::snprintf(buf, sizeof buf, "dirs:%g", double(f.cosine));
      return buf;
    case FamilyKind::Clustered:
      return "clustered";
    case FamilyKind::HeavyTailed:
      return "heavy";
    case FamilyKind::Iid:
    default:
      return "iid";
  }
}

}  // namespace distancies
