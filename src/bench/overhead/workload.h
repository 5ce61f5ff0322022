// The workload every path is measured with: one small chat-completion request (streaming or
// not), and the canned answers the bench's upstream returns for it.
//
// A streaming request is marked by the header `x-bench-stream: 1` as well as `"stream":true` in
// its body: the canned upstream (nginx `return`) cannot read bodies, but every gateway forwards
// the header.
//
// Thread-safety: constants and pure functions.
#pragma once

#include <string>
#include <string_view>

namespace rolter::bench::overhead {

inline constexpr std::string_view kChatPath = "/v1/chat/completions";
inline constexpr std::string_view kStreamHeader = "x-bench-stream";
inline constexpr std::string_view kModel = "bench";

// {"model":"bench","messages":[{"role":"user","content":"hi"}]} (+ "stream":true).
std::string request_body(bool stream);

// The non-streaming answer: a fixed chat.completion object.
std::string completion_body();

// The streaming answer: `chunks` chat.completion.chunk events (the last one with
// finish_reason "stop"), then `data: [DONE]`.
std::string sse_body(int chunks);

}  // namespace rolter::bench::overhead
