// The simulated decision service: rolter-sim's answer to POST /v1/systemone (SPEC §7), so policy
// mode's decision_service can be exercised end to end without a real decision engine.
//
// The rules are deliberately simple and deterministic:
//   - The conversation text is read from `state` (the client's body): its system prompt, message
//     contents (text parts of content arrays included), `prompt` or `input`; a `state` that is a
//     string (what rolter sends for a body it could not embed) is the text itself.
//   - Its difficulty counts the hard-task keywords it contains (prove, proof, theorem, derive,
//     code, function, implement, algorithm, debug, reason, step by step, math, equation; each
//     counted once, case-insensitively) plus one when the text is longer than kLongPrompt.
//     0 = easy, anything else = hard.
//   - The criteria's models are ranked by capability: what their descriptions say (reasoning,
//     math, code, complex, large count up; fast, simple, small, cheap count down), then the size
//     in their name (the number before "b": 0.6b < 8b < 32b; no size = 0), then their name.
//     An easy request gets the least capable model, a hard one the most capable.
//   - The choice gets probability kChoiceProbability and the other models share the rest
//     equally (the choice gets 1 when it is the only model). The confidence is kClearConfidence
//     when the signal is clear (no keyword, or at least two signals) and kUnsureConfidence for a
//     single signal.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include <cstddef>
#include <string>
#include <string_view>

namespace rolter::sim {

// A prompt longer than this many bytes is one signal of a hard request: long contexts are
// documents and code bases, rarely small talk.
inline constexpr size_t kLongPrompt = 2000;
inline constexpr double kChoiceProbability = 0.9;
inline constexpr double kClearConfidence = 0.9;
inline constexpr double kUnsureConfidence = 0.6;

// The conversation text of a /v1/systemone `state`.
std::string decision_state_text(const nlohmann::json& state);

// The difficulty signals in `text`: distinct hard-task keywords, plus one when it is long.
int difficulty(std::string_view text);

// The size hint in a model name: the number just before a "b" that ends a word ("qwen3-0.6b" →
// 0.6, "Llama-3.1-8B-Instruct" → 8); 0 when there is none.
double model_size_hint(std::string_view model);

// The reply body of POST /v1/systemone for the request body `request`; an error message (for a
// 400) when it is not a JSON object with a non-empty questions.model_selection.criteria object.
tl::expected<nlohmann::json, std::string> answer_systemone(std::string_view request);

}  // namespace rolter::sim
