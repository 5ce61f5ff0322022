#include "sim/text_generator.h"

#include <array>
#include <cmath>

#include "common/hash.h"

namespace rolter::sim {
namespace {

// A small vocabulary makes the output look like text in logs and demos.
constexpr std::array<std::string_view, 32> kWords = {
    "the",    "engine",  "routes", "a",      "token",  "cache", "prefix", "model",
    "stream", "latency", "of",     "and",    "to",     "fleet", "batch",  "query",
    "warm",   "block",   "quick",  "answer", "is",     "on",    "graph",  "signal",
    "simple", "with",    "light",  "queue",  "result", "in",    "river",  "stone",
};

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

}  // namespace

size_t count_words(std::string_view text) {
  size_t words = 0;
  bool in_word = false;
  for (char c : text) {
    if (is_space(c)) {
      in_word = false;
    } else if (!in_word) {
      in_word = true;
      ++words;
    }
  }
  return words;
}

std::vector<std::string> generate_tokens(uint64_t seed, std::string_view prompt, size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  const uint64_t base = hash64(prompt, seed);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t h = hash_combine(base, i);
    std::string piece = i == 0 ? std::string() : std::string(" ");
    piece += kWords[h % kWords.size()];
    out.push_back(std::move(piece));
  }
  return out;
}

std::vector<std::vector<std::string>> generate_choices(uint64_t seed,
                                                       std::span<const std::string> prompts,
                                                       size_t n, size_t length) {
  std::vector<std::vector<std::string>> out;
  out.reserve(prompts.size() * n);
  for (const std::string& prompt : prompts) {
    for (size_t j = 0; j < n; ++j) {
      out.push_back(generate_tokens(j == 0 ? seed : hash_combine(seed, j), prompt, length));
    }
  }
  return out;
}

std::vector<float> embed_text(uint64_t seed, std::string_view text, size_t dims) {
  std::vector<float> v(dims);
  const uint64_t base = hash64(text, seed ^ 0xe1be55edULL);
  double norm = 0;
  for (size_t i = 0; i < dims; ++i) {
    const uint64_t h = hash_combine(base, i);
    v[i] = static_cast<float>(static_cast<double>(h >> 11) * 0x1.0p-53 * 2.0 - 1.0);
    norm += static_cast<double>(v[i]) * v[i];
  }
  if (norm > 0) {
    const double inv = 1.0 / std::sqrt(norm);
    for (float& x : v) x = static_cast<float>(x * inv);
  }
  return v;
}

}  // namespace rolter::sim
