// SseReader: splits an SSE byte stream, fed in pieces split anywhere, into whole events (the
// WHATWG event-stream rules a translator needs: "event:" and "data:" fields, several data lines
// joined by "\n", comments and unknown fields ignored, "\n", "\r\n" or "\r" line ends).
//
//   SseReader reader;
//   reader.feed(chunk, [&](const SseEvent& e) { handle(e.event, e.data); });
//
// Thread-safety: one reader per stream.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rolter {

struct SseEvent {
  std::string event;  // the "event:" field, empty when the event named none
  std::string data;   // the "data:" lines, joined by "\n"
};

class SseReader {
 public:
  // Calls on_event(const SseEvent&) for every event `bytes` completes, in order. An event that
  // carries no data line is not dispatched (as the standard says).
  template <typename OnEvent>
  void feed(std::string_view bytes, OnEvent&& on_event) {
    for (char c : bytes) {
      if (skip_lf_) {
        skip_lf_ = false;
        if (c == '\n') continue;
      }
      if (c != '\n' && c != '\r') {
        if (line_.size() < kMaxLine) line_.push_back(c);
        continue;
      }
      skip_lf_ = c == '\r';
      if (line_.empty()) {
        if (has_data_) on_event(static_cast<const SseEvent&>(event_));
        event_ = SseEvent{};
        has_data_ = false;
      } else {
        take_line();
      }
      line_.clear();
    }
  }

  // Bytes held for an event not yet complete.
  size_t pending() const { return line_.size() + event_.data.size() + event_.event.size(); }

  // Lines longer than this are cut: a hostile upstream cannot make a reader grow without bound.
  static constexpr size_t kMaxLine = 16 << 20;

 private:
  void take_line();

  std::string line_;
  SseEvent event_;
  bool has_data_ = false;
  bool skip_lf_ = false;
};

}  // namespace rolter
