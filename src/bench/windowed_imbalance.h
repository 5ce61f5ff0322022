// Windowed imbalance: load imbalance as users read it. Requests are counted per engine in
// fixed windows of arrival time (60 s by default); each window's imbalance is the busiest engine's
// count over the mean count of all engines; the figure reported is the median over the windows.
// Unlike the in-flight samples, it says how evenly a strategy hands out work, not how long work
// queues where it landed.
//
// Thread-safety: plain value; one replay fills it on one thread.
//
//   WindowedImbalance w(8);
//   w.add(arrival_ms, engine);   // per routed request
//   double median = w.median();
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace rolter::bench {

class WindowedImbalance {
 public:
  static constexpr double kDefaultWindowMs = 60'000;

  explicit WindowedImbalance(size_t engines = 0, double window_ms = kDefaultWindowMs)
      : engines_(engines), window_ms_(window_ms) {}

  // One request routed to `engine` at `at_ms` (time since the replay began). Engines out of
  // range and negative times are ignored.
  void add(double at_ms, size_t engine) {
    if (engine >= engines_ || at_ms < 0 || window_ms_ <= 0) return;
    const auto window = static_cast<size_t>(at_ms / window_ms_);
    if (counts_.size() <= window) counts_.resize(window + 1, std::vector<uint32_t>(engines_, 0));
    ++counts_[window][engine];
  }

  // max/mean of each window that saw any request, in time order.
  std::vector<double> per_window() const {
    std::vector<double> out;
    for (const auto& window : counts_) {
      uint64_t sum = 0;
      uint32_t max = 0;
      for (uint32_t c : window) {
        sum += c;
        max = std::max(max, c);
      }
      if (sum == 0) continue;
      out.push_back(static_cast<double>(max) * static_cast<double>(engines_) /
                    static_cast<double>(sum));
    }
    return out;
  }

  // The median of per_window() (the mean of the middle two for an even count); 0 with no window.
  double median() const {
    std::vector<double> v = per_window();
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    const size_t mid = v.size() / 2;
    return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  }

  size_t engines() const { return engines_; }

 private:
  size_t engines_;
  double window_ms_;
  std::vector<std::vector<uint32_t>> counts_;  // [window][engine]
};

}  // namespace rolter::bench
