// Format names, content-based detection and the load_model entry point.
#include <algorithm>
#include <cstring>

#include "harness/formats/internal.hpp"
#include "harness/formats/io.hpp"

namespace distancies {

const char* format_name(Format f) {
  switch (f) {
    case Format::Auto:
      return "auto";
    case Format::GloveText:
      return "glove";
    case Format::StudyText:
      return "study-text";
    case Format::StudySplit:
      return "study-split";
    case Format::Word2VecBinary:
      return "word2vec";
    case Format::Native:
      return "native";
  }
  return "?";
}

Format parse_format(const std::string& name) {
  for (Format f :
       {Format::Auto, Format::GloveText, Format::StudyText, Format::StudySplit, Format::Word2VecBinary, Format::Native})
    if (name == format_name(f)) return f;
  if (name == "glove-text") return Format::GloveText;
  if (name == "w2v" || name == "word2vec-text") return Format::Word2VecBinary;  // text is detected inside
  throw Error("unknown format '" + name +
              "' (expected one of: auto, glove, study-text, study-split, word2vec, native)");
}

Format detect_format(const std::string& path) {
  using namespace fmt;
  InFile file(path);  // a missing or unreadable file fails here with the OS reason
  std::string head(static_cast<std::size_t>(std::min<std::uint64_t>(file.size(), 4096)), '\0');
  head.resize(file.read_some(head.data(), head.size()));
  if (head.compare(0, 8, "DSTNCIES") == 0) return Format::Native;
  if (!split_paths(path).keys.empty()) return Format::StudySplit;
  if (head.empty()) fail(path, "empty file");
  const bool keys_name = path.size() > 5 && path.compare(path.size() - 5, 5, ".keys") == 0;
  std::size_t start = head.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::size_t nl = head.find('\n', start);
  std::uint64_t rows, dim;
  if (nl != std::string::npos && parse_word2vec_header(std::string_view(head).substr(start, nl - start), rows, dim))
    return Format::Word2VecBinary;
  if (keys_name)
    fail(path, "study-split keys file without its values file " + path.substr(0, path.size() - 5) + ".values");
  if (head.find('\0') != std::string::npos)
    fail(path, "not a recognised model format (binary data without the native magic or a word2vec header)");
  return looks_like_study_text(path) ? Format::StudyText : Format::GloveText;
}

Model load_model(const std::string& path, const LoadOptions& opt, LoadReport* report) {
  if (report) *report = LoadReport{};
  Format f = opt.format == Format::Auto ? detect_format(path) : opt.format;
  if ((opt.first_row != 0 || opt.last_row >= 0) && f != Format::Native)
    throw Error(path + ": reading only some rows needs a native model: convert it first (distancies convert " + path +
                " MODEL.dsv)");
  Model m;
  switch (f) {
    case Format::GloveText: {
      fmt::TextSpec spec;
      m = fmt::load_text(path, spec, opt, report);
      break;
    }
    case Format::StudyText: {
      fmt::TextSpec spec;
      spec.study = true;
      spec.name = "study-text";
      m = fmt::load_text(path, spec, opt, report);
      break;
    }
    case Format::StudySplit:
      m = fmt::load_study_split(path, opt, report);
      break;
    case Format::Word2VecBinary:
      m = fmt::load_word2vec(path, opt, report);
      break;
    case Format::Native:
      m = fmt::load_native(path, opt, report);
      break;
    case Format::Auto:
      break;
  }
  return m;
}

}  // namespace distancies
