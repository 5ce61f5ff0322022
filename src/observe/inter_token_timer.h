// InterTokenTimer: the time between the content events of one stream, observed into a route's
// rolter_inter_token_seconds histogram as the relay forwards them.
//
// The relay tells it, after each read, how many content pieces that read brought
// (SseProgress::content_pieces()). The first read with content starts the clock (its gap is time
// to first token, measured elsewhere); a later one that brought k pieces a gap g after the
// previous content counts as k gaps of g/k, so a burst the network coalesced weighs as many tokens
// as it carried. Nothing is allocated.
//
//   InterTokenTimer itl(pool.instruments.inter_token);
//   itl.arrived(std::chrono::steady_clock::now(), progress.content_pieces() - before);
//
// Thread-safety: a value type used by one stream; the histogram is sharded per worker.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "observe/metrics.h"

namespace rolter {

class InterTokenTimer {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  // `histogram` may be null (no metrics): then nothing is observed.
  explicit InterTokenTimer(ShardedHistogram* histogram) : histogram_(histogram) {}

  // `pieces` content pieces were read at `now` (0: none, and nothing changes).
  void arrived(TimePoint now, uint64_t pieces) {
    if (pieces == 0) return;
    if (last_ && histogram_ != nullptr) {
      const double gap =
          std::chrono::duration<double>(now - *last_).count() / static_cast<double>(pieces);
      for (uint64_t i = 0; i < pieces; ++i) Metrics::observe_seconds(histogram_, gap);
    }
    last_ = now;
  }

 private:
  ShardedHistogram* histogram_;
  std::optional<TimePoint> last_;
};

}  // namespace rolter
