#include "bench/progress.h"

#include <cstdio>

namespace rolter::bench {

Progress::Progress(std::string label, uint64_t total, bool enabled,
                   std::chrono::milliseconds interval)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled),
      interval_(interval),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void Progress::update(uint64_t done) {
  // The clock read costs more than the check; 64 requests take well under the interval.
  if (!enabled_ || (++calls_ & 63) != 0) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_ < interval_) return;
  last_ = now;
  print(done);
}

void Progress::finish(uint64_t done) {
  if (enabled_) print(done);
}

void Progress::print(uint64_t done) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0;
  const double eta = rate > 0 && total_ > done ? (total_ - done) / rate : 0;
  std::fprintf(stderr, "[%s] %llu/%llu requests (%.1f%%), %.0f req/s, elapsed %.1fs, ETA %.0fs\n",
               label_.c_str(), static_cast<unsigned long long>(done),
               static_cast<unsigned long long>(total_), total_ ? 100.0 * done / total_ : 100.0,
               rate, elapsed, eta);
}

}  // namespace rolter::bench
