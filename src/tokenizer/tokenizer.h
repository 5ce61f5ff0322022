// The simulator's tokenizer: deterministic and trivial, shared by rolter-sim, rolter-bench and the
// tests so that all of them agree on the token ids of a text.
//
// A token is a maximal run of non-whitespace bytes (a "word"); its id is a 32-bit hash of the
// word. Real engines tokenise differently, but routing only needs every party to agree, and equal
// prefixes of text to give equal prefixes of ids.
//
//   std::vector<uint32_t> ids;
//   tokenize("the cat sat", ids);   // 3 ids; tokenize("the cat") gives the first 2 of them
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace rolter::tokenizer {

// The id of one word (no whitespace inside).
uint32_t token_id(std::string_view word);

// Appends the ids of every word of `text` to `out`.
void tokenize(std::string_view text, std::vector<uint32_t>& out);

// Number of words in `text`, without materialising ids.
size_t count_tokens(std::string_view text);

}  // namespace rolter::tokenizer
