// SseProgress: what a relayed Server-Sent Events stream has carried so far, read without parsing.
//
// The relay feeds it every chunk it forwards. It notices:
// - the first event that carries content: a JSON string field that generation fills
//   (`content`, `text`, `delta`, `reasoning_content`, `arguments`, `partial_json`, `thinking`)
//   holding a non-empty string. Role-only first chunks (`"content":""`), Anthropic's
//   `message_start` (`"content":[]`) and Responses' `response.created` carry none. This is the
//   moment time to first token measures; and every later one, counted (content_pieces()), for
//   the time between tokens. A piece is one such field: an event of the usual shapes carries one;
//   a closing event that repeats the whole text (Responses' `response.output_text.done`) counts
//   as one more;
// - the last `sequence_number` (Responses API events), so an error event the proxy appends can
//   continue the numbering.
// Patterns split across chunks are still found (common/seam.h). Hostile input only ever yields a
// missed signal, never an error.
//
// Thread-safety: a value type used by one stream.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "common/seam.h"

namespace rolter {

class SseProgress {
 public:
  // Returns true when content has been seen (in this chunk or before).
  bool feed(std::string_view chunk);

  bool saw_content() const { return content_; }
  // Content-carrying fields seen so far (the first one included).
  uint64_t content_pieces() const { return pieces_; }
  std::optional<uint64_t> last_sequence_number() const { return sequence_; }

 private:
  // Scans `text`, whose first `carried` bytes are the previous chunk's tail (0: a chunk itself).
  void scan(std::string_view text, size_t carried);

  // The longest key (`"reasoning_content"`, 19 bytes), 8 spaces, colon, 8 spaces, quote and one
  // byte; or `"sequence_number"` with 18 digits and one byte after: both fit.
  static constexpr size_t kCarry = 64;
  Seam<kCarry> seam_;
  bool content_ = false;
  uint64_t pieces_ = 0;
  std::optional<uint64_t> sequence_;
};

// The length of `text` up to the end of its last complete event (the blank line that ends it:
// "\n\n", "\r\n\r\n" or "\r\r"), or 0 when no event in it is complete yet.
size_t complete_events_length(std::string_view text);

}  // namespace rolter
