#include "harness/intersect/index.hpp"
#include "runtime/atomic_file.hpp"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "runtime/error.hpp"

namespace distancies::intersect {
PostingIndex parse_index(const std::string& name, const std::vector<unsigned char>& bytes, IndexReport* report) {
  if (bytes.size() % 4 != 0)
    throw Error("index " + name + ": " + std::to_string(bytes.size()) +
                " bytes is not a whole number of uint32 words (the format is little-endian uint32 [len][ids...])");
  const std::size_t words = bytes.size() / 4;
  auto word = [&](std::size_t i) {
    const unsigned char* b = bytes.data() + 4 * i;
    return std::uint32_t(b[0]) | std::uint32_t(b[1]) << 8 | std::uint32_t(b[2]) << 16 | std::uint32_t(b[3]) << 24;
  };
  PostingIndex index;
  IndexReport rep;
  rep.bytes = bytes.size();
  std::vector<std::uint32_t> list;
  for (std::size_t w = 0; w < words;) {
    const std::size_t term = index.lists();
    const std::uint64_t len = word(w);
    if (len > words - w - 1)
      throw Error("index " + name + ": list " + std::to_string(term) + " at byte " + std::to_string(4 * w) + " says " +
                  std::to_string(len) + " ids but only " + std::to_string(words - w - 1) +
                  " words are left in the file");
    list.resize(len);
    for (std::size_t i = 0; i < len; ++i) list[i] = word(w + 1 + i);
    std::size_t at = 0;
    const std::string p = order_problem(list, &at);
    if (!p.empty())
      throw Error("index " + name + ": list " + std::to_string(term) + ": " + p + " at position " + std::to_string(at) +
                  " (byte " + std::to_string(4 * (w + 1 + at)) + "); posting lists must be strictly increasing");
    if (len == 0) ++rep.empty_lists;
    index.add(list);
    w += 1 + len;
  }
  if (report) *report = rep;
  return index;
}

PostingIndex read_index(const std::string& path, IndexReport* report) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open index " + path + ": " + std::strerror(errno));
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error("cannot read index " + path);
  return parse_index(path, bytes, report);
}

void write_index(const std::string& path, const PostingIndex& index) {
  std::vector<unsigned char> bytes;
  auto put = [&](std::uint32_t v) {
    for (int s = 0; s < 32; s += 8) bytes.push_back(static_cast<unsigned char>(v >> s));
  };
  AtomicFile out(path);  // no half index under its name, whatever stops the write
  for (std::size_t i = 0; i < index.lists(); ++i) {
    put(static_cast<std::uint32_t>(index.length(i)));
    for (std::uint32_t id : index.list(i)) put(id);
    if (bytes.size() >= (1u << 20)) {
      out.write(bytes.data(), bytes.size());
      bytes.clear();
    }
  }
  out.write(bytes.data(), bytes.size());
  out.commit();
}

std::vector<Query> parse_queries(const std::string& name, const std::string& text, std::size_t lists,
                                 QueryReport* report) {
  std::vector<Query> out;
  QueryReport rep;
  std::istringstream in(text);
  std::string line;
  for (int no = 1; std::getline(in, line); ++no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = "queries " + name + " line " + std::to_string(no) + ": ";
    Query q;
    q.line = no;
    std::size_t i = 0;
    while (i < line.size()) {
      if (line[i] == ' ' || line[i] == '\t') {
        ++i;
        continue;
      }
      std::size_t j = i;
      while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
      const std::string tok = line.substr(i, j - i);
      if (tok.size() > 10 || tok.find_first_not_of("0123456789") != std::string::npos)
        throw Error(where + "'" + tok + "' is not a term id (a non-negative integer)");
      const unsigned long long t = std::stoull(tok);
      if (t >= lists)
        throw Error(where + "unknown term " + tok + " (the index has " + std::to_string(lists) + " lists, 0.." +
                    std::to_string(lists ? lists - 1 : 0) + ")");
      if (q.terms.size() == static_cast<std::size_t>(kMaxTerms))
        throw Error(where + "more than " + std::to_string(kMaxTerms) + " terms");
      q.terms.push_back(static_cast<std::uint32_t>(t));
      i = j;
    }
    if (q.terms.empty())
      ++rep.blank_lines;
    else
      out.push_back(std::move(q));
  }
  if (report) *report = rep;
  return out;
}

std::vector<Query> read_queries(const std::string& path, std::size_t lists, QueryReport* report) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open queries " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_queries(path, ss.str(), lists, report);
}

void write_queries(const std::string& path, const std::vector<Query>& queries) {
  std::ostringstream text;
  for (const Query& q : queries) {
    for (std::size_t i = 0; i < q.terms.size(); ++i) text << (i ? " " : "") << q.terms[i];
    text << "\n";
  }
  AtomicFile out(path, /*binary=*/false);
  out.write(text.str());
  out.commit();
}

}  // namespace distancies::intersect
