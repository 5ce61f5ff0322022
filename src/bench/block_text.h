// Expands a trace's block ids into prompt text and the token ids the simulator's tokenizer gives
// that text (tokenizer/tokenizer.h), so the gateway, the engines and the bench agree on tokens.
//
// Block id b becomes 512 words; word k is a vocabulary word chosen by a hash of (b, k). Equal ids
// give equal text, so equal id prefixes give equal token prefixes; a request's last block is cut
// to input_length. Words are joined by one space, so tokenize(text) equals the tokens appended.
//
//   std::string text; std::vector<uint32_t> ids;
//   expand_prompt(request, &text, &ids);   // ids.size() == request.input_length
//
// Thread-safety: pure functions over an immutable vocabulary built on first use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/trace.h"

namespace rolter::bench {

// The word at position k (< 512) of block id b. Never contains whitespace.
std::string_view block_word(uint64_t block_id, size_t k);

// Its token id: equal to tokenizer::token_id(block_word(block_id, k)), precomputed.
uint32_t block_token(uint64_t block_id, size_t k);

// Appends the prompt of `req` to text (words joined by single spaces) and/or to tokens; either
// pointer may be null. Exactly req.input_length words.
void expand_prompt(const TraceRequest& req, std::string* text, std::vector<uint32_t>* tokens);

}  // namespace rolter::bench
