// Deterministic output for the simulated engines: generated words, word counting and embedding
// vectors. The same seed and prompt give the same text on every engine and every run, so a test
// can tell whether a retry landed on another engine only through headers and stats, never text.
//
// count_words() counts whitespace words, which is what the simulated usage reports as prompt and
// completion tokens; the engine's KV-cache model (engine.cc) and /tokenize use tokenizer/'s ids.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rolter::sim {

// Number of whitespace-separated words in `text`.
size_t count_words(std::string_view text);

// `n` output pieces for `prompt`: the first is a bare word, the rest start with a space, so their
// concatenation is readable text.
std::vector<std::string> generate_tokens(uint64_t seed, std::string_view prompt, size_t n);

// `n` choices of `length` pieces for each of `prompts`, in OpenAI's choice order (prompt p's
// choice j at p * n + j). Choice 0 of a prompt is generate_tokens(seed, prompt, length), so
// asking for more choices never changes the first; the others differ by a seed derived from j.
std::vector<std::vector<std::string>> generate_choices(uint64_t seed,
                                                       std::span<const std::string> prompts,
                                                       size_t n, size_t length);

// A unit-length vector of `dims` floats derived from the seed and `text`.
std::vector<float> embed_text(uint64_t seed, std::string_view text, size_t dims);

}  // namespace rolter::sim
