// Fuzz target: the Native reader (docs/formats.md) on arbitrary bytes: the whole model, a row
// range of it (a rank reading only its rows) and its vocabulary alone; where the whole model and
// the range both load, the range is the whole model's rows.
#include <cstring>
#include <vector>

#include "tests/fuzz/fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write("n.dsv", data, size);
  fuzz::load(path, distancies::Format::Native);
  distancies::LoadOptions opt;
  opt.format = distancies::Format::Native;
  opt.first_row = static_cast<std::int64_t>(size % 3);
  opt.last_row = opt.first_row + static_cast<std::int64_t>(size % 4);
  try {
    const distancies::Model part = distancies::load_model(path, opt);
    if (part.rows != opt.last_row - opt.first_row || part.norms.size() != part.words.size()) std::abort();
    try {
      const distancies::Model all = distancies::load_model(path, {});
      for (std::int64_t r = 0; r < part.rows; ++r)
        if (part.words[r] != all.words[opt.first_row + r] ||
            std::memcmp(part.row(r), all.row(opt.first_row + r), sizeof(float) * all.dim) != 0)
          std::abort();
    } catch (const distancies::Error&) {
    }
  } catch (const distancies::Error&) {
  }
  try {
    const distancies::NativeVocabulary v(path);
    std::vector<float> row(static_cast<std::size_t>(v.dim()));
    for (std::int64_t r = 0; r < v.rows() && r < 4; ++r) {
      if (v.find(v.word(r)) != r) std::abort();
      v.read_row(r, row.data());
    }
  } catch (const distancies::Error&) {
  }
  return 0;
}
