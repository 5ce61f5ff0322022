#include "bench/block_text.h"

#include <array>

#include "common/hash.h"
#include "tokenizer/tokenizer.h"

namespace rolter::bench {
namespace {

// 8192 words: 16-token engine blocks drawn from it never collide by accident (8192^16), while
// the table stays small enough to live in cache.
constexpr size_t kVocabularySize = 8192;
// Seeds the word choice so block text does not correlate with other uses of hash_combine.
constexpr uint64_t kWordSeed = 0x726f6c7465722d62ULL;  // "rolter-b"

struct Vocabulary {
  std::vector<std::string> words;
  std::vector<uint32_t> ids;

  Vocabulary() {
    // Pronounceable pseudo-words from consonant-vowel syllables, so a prompt reads like text in
    // logs and engine dumps rather than like hex.
    static constexpr std::string_view kOnsets = "bcdfghjklmnprstvwz";
    static constexpr std::string_view kVowels = "aeiou";
    words.reserve(kVocabularySize);
    ids.reserve(kVocabularySize);
    for (size_t i = 0; i < kVocabularySize; ++i) {
      uint64_t h = hash_combine(kWordSeed, i);
      size_t syllables = 2 + h % 3;
      h /= 3;
      std::string w;
      for (size_t s = 0; s < syllables; ++s) {
        w.push_back(kOnsets[h % kOnsets.size()]);
        h /= kOnsets.size();
        w.push_back(kVowels[h % kVowels.size()]);
        h /= kVowels.size();
      }
      ids.push_back(tokenizer::token_id(w));
      words.push_back(std::move(w));
    }
  }
};

const Vocabulary& vocabulary() {
  static const Vocabulary v;
  return v;
}

size_t word_index(uint64_t block_id, size_t k) {
  return hash_combine(hash_combine(kWordSeed, block_id), k) % kVocabularySize;
}

}  // namespace

std::string_view block_word(uint64_t block_id, size_t k) {
  return vocabulary().words[word_index(block_id, k)];
}

uint32_t block_token(uint64_t block_id, size_t k) {
  return vocabulary().ids[word_index(block_id, k)];
}

void expand_prompt(const TraceRequest& req, std::string* text, std::vector<uint32_t>* tokens) {
  const Vocabulary& v = vocabulary();
  size_t remaining = req.input_length;
  if (tokens) tokens->reserve(tokens->size() + remaining);
  if (text) text->reserve(text->size() + remaining * 8);
  bool first = true;
  for (uint64_t id : req.hash_ids) {
    if (remaining == 0) break;
    size_t n = std::min(remaining, kTraceBlockTokens);
    uint64_t block_seed = hash_combine(kWordSeed, id);
    for (size_t k = 0; k < n; ++k) {
      size_t w = hash_combine(block_seed, k) % kVocabularySize;
      if (tokens) tokens->push_back(v.ids[w]);
      if (text) {
        if (!first) text->push_back(' ');
        text->append(v.words[w]);
      }
      first = false;
    }
    remaining -= n;
  }
}

}  // namespace rolter::bench
