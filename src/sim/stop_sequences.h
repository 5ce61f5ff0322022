// Stop sequences for the simulated engines (OpenAI `stop`, Anthropic `stop_sequences`, Gemini
// `generationConfig.stopSequences`): the generated text is cut just before the first occurrence
// of any of them, as engines do, and the answer ends with finish_reason "stop" (Anthropic
// stop_reason "stop_sequence" with `stop_sequence` set; Gemini finishReason STOP).
//
// The generated text is words of a small vocabulary (text_generator.h) joined by single spaces,
// so a test can hit a stop sequence for sure: " " always ends the answer after its first word
// (when it has two or more), and a letter such as "e" cuts at its first occurrence. The text is a
// pure function of the seed and the prompt, so the cut is the same on every run.
//
// Thread-safety: pure functions.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace rolter::sim {

// Cuts `pieces` (output tokens whose concatenation is the text) just before the earliest
// occurrence of any non-empty stop sequence in their concatenation: whole pieces before it are
// kept, a piece it starts inside of keeps its part before it (and still counts as a token), the
// rest go. Returns the stop sequence that cut (the first listed on a tie), or "" when none occurs.
std::string cut_at_stop(std::vector<std::string>& pieces, std::span<const std::string> stops);

}  // namespace rolter::sim
