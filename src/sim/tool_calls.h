// Tool calling for the simulated engines: when a request's answer is a tool call, which tool it
// calls, and the call's arguments, on every chat-like API (OpenAI chat completions, Anthropic
// messages, Gemini generateContent).
//
// The rule (the same on every API):
//   * the request offers tools (OpenAI `tools`, Anthropic `tools`, Gemini
//     `tools[].functionDeclarations`), and
//   * the conversation's last turn is from the user and is not a tool result (OpenAI: the last
//     message has role "user"; Anthropic: the last message has role "user" and no tool_result
//     block; Gemini: the last content has role "user" or none, and no functionResponse part), and
//   * tool choice is not "none" (OpenAI tool_choice "none", Anthropic {"type":"none"}, Gemini
//     toolConfig.functionCallingConfig.mode "NONE"),
// then the answer is one call to the tool that tool choice names (OpenAI
// {"type":"function","function":{"name":N}}, Anthropic {"type":"tool","name":N}, Gemini
// allowedFunctionNames[0]) or else the first tool offered. A tool choice naming a tool that is not
// offered is a 400. Otherwise the answer is text as usual (after a tool result, say).
//
// A tool call is one choice whatever `n` or candidateCount asks, and is emitted whole whatever
// the max tokens: its output tokens are its argument fragments (split_arguments below), which is
// what usage counts and what a stream sends one event per token of.
//
// Arguments come from the tool's parameter schema (JSON Schema, or Gemini's OpenAPI subset with
// upper-case types), every declared property (in name order: the engine reads bodies with a
// sorted JSON object type), required or not: string → one word of the text
// generator's vocabulary, integer and number → an integer from 1 to 9, boolean → true, null →
// null, `enum` → its first value, `const` → that value, object → its properties recursively,
// array → one element built from `items`, anyOf/oneOf → the first branch. Words and numbers
// derive from the seed, the tool name and the property's path only, so a tool gets the same
// arguments on every engine, every run and every conversation.
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rolter::sim {

// The tool an answer must call, with its parameter schema as JSON text ("{}" when it has none).
struct ToolChoice {
  std::string name;
  std::string schema;
  bool operator==(const ToolChoice&) const = default;
};

// A generated tool call: id ("call_…" for OpenAI, "toolu_…" for Anthropic; Gemini has none),
// name, and the arguments as compact JSON object text.
struct ToolCall {
  std::string id;
  std::string name;
  std::string arguments;
};

// The tool the rule above picks for a request body of each API; nullopt when the answer is text.
// The error is a message for a 400.
using ToolPick = tl::expected<std::optional<ToolChoice>, std::string>;
ToolPick pick_openai_tool(const nlohmann::json& body);
ToolPick pick_anthropic_tool(const nlohmann::json& body);
ToolPick pick_gemini_tool(const nlohmann::json& body);

// The arguments for `tool`, as compact JSON text (always an object).
std::string tool_arguments(uint64_t seed, const ToolChoice& tool);

// `arguments` cut into the fragments a stream sends, at most kArgumentFragmentBytes each and never
// inside a UTF-8 sequence; each fragment counts as one output token. Concatenated, they are
// `arguments`.
inline constexpr size_t kArgumentFragmentBytes = 8;
std::vector<std::string> split_arguments(std::string_view arguments);

}  // namespace rolter::sim
