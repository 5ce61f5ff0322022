#include "tokenizer/tokenizer.h"

#include "common/hash.h"

namespace rolter::tokenizer {
namespace {

// Fixed seed: ids must never change between versions, or recorded traces would stop matching.
constexpr uint64_t kSeed = 0x726f6c746572746bULL;  // "rolter" "tk"

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

template <typename OnWord>
void for_each_word(std::string_view text, OnWord&& on_word) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    while (i < n && is_space(text[i])) ++i;
    const size_t start = i;
    while (i < n && !is_space(text[i])) ++i;
    if (i > start) on_word(text.substr(start, i - start));
  }
}

}  // namespace

uint32_t token_id(std::string_view word) { return static_cast<uint32_t>(hash64(word, kSeed)); }

void tokenize(std::string_view text, std::vector<uint32_t>& out) {
  for_each_word(text, [&](std::string_view word) { out.push_back(token_id(word)); });
}

size_t count_tokens(std::string_view text) {
  size_t count = 0;
  for_each_word(text, [&](std::string_view) { ++count; });
  return count;
}

}  // namespace rolter::tokenizer
