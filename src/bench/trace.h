// Request traces for `rolter-bench replay`: the Mooncake JSONL format (one request per line with
// `timestamp` in ms, `input_length`, `output_length` and `hash_ids`, one id per 512-token block,
// equal ids meaning a shareable prefix) read into TraceRequest records.
//
//   auto trace = read_trace_file("conversation_trace.jsonl");
//   if (!trace) die(trace.error());   // "FILE:LINE: ..." for the first malformed line
//
// Thread-safety: pure functions; the records are plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace rolter::bench {

// Tokens per trace block, fixed by the Mooncake release.
inline constexpr size_t kTraceBlockTokens = 512;

struct TraceRequest {
  int64_t timestamp_ms = 0;
  uint32_t input_length = 0;   // prompt tokens
  uint32_t output_length = 0;  // tokens to generate
  // One id per 512-token block of the prompt; the last block may be partial.
  std::vector<uint64_t> hash_ids;
  // Conversation identity for session-keyed routing; empty in Mooncake traces.
  std::string session;

  // Blocks that hold a full 512 tokens (only those can be shared in the trace's own accounting).
  size_t full_blocks() const {
    return std::min<size_t>(input_length / kTraceBlockTokens, hash_ids.size());
  }
};

// Parses one JSONL line. `where` prefixes every error message (e.g. "trace.jsonl:12").
tl::expected<TraceRequest, std::string> parse_trace_line(std::string_view line,
                                                         std::string_view where);

// Reads every non-blank line of `in`; stops after `limit` requests when limit > 0. The first
// malformed line fails the whole read with "NAME:LINE: what is wrong".
tl::expected<std::vector<TraceRequest>, std::string> read_trace(std::istream& in,
                                                                std::string_view name,
                                                                size_t limit = 0);

tl::expected<std::vector<TraceRequest>, std::string> read_trace_file(const std::string& path,
                                                                     size_t limit = 0);

}  // namespace rolter::bench
