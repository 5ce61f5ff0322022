#include "collect/usage_flush/usage_flusher.h"

#include <spdlog/spdlog.h>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <unordered_map>

#include "collect/loop/background_loop.h"
#include "common/mutex.h"

namespace rolter {
namespace {

// The rows of `kept` added into `fresh` (same line = one row), so a batch retried many times
// grows by new lines only, never by repeats.
void merge_into(std::vector<UsageRow>& fresh, std::vector<UsageRow>&& kept) {
  if (kept.empty()) return;
  std::unordered_map<UsageKey, size_t, UsageKeyHash> where;
  where.reserve(fresh.size());
  for (size_t i = 0; i < fresh.size(); ++i) where.emplace(fresh[i].key, i);
  for (UsageRow& row : kept) {
    auto it = where.find(row.key);
    if (it != where.end()) {
      fresh[it->second].counts += row.counts;
    } else {
      fresh.push_back(std::move(row));
    }
  }
}

// Keeps at most `max` rows, giving up the oldest hours first; returns how many went.
size_t trim_oldest(std::vector<UsageRow>& rows, size_t max) {
  if (rows.size() <= max) return 0;
  std::sort(rows.begin(), rows.end(),
            [](const UsageRow& a, const UsageRow& b) { return a.key.hour_ms > b.key.hour_ms; });
  const size_t dropped = rows.size() - max;
  rows.resize(max);
  return dropped;
}

}  // namespace

struct UsageFlusher::Impl {
  Impl(UsageLedger& l, Sink s, Options o) : ledger(l), sink(std::move(s)), options(o) {}

  UsageLedger& ledger;
  const Sink sink;
  const Options options;
  Mutex flush_mu;  // one flush at a time
  std::vector<UsageRow> pending GUARDED_BY(flush_mu);
  std::atomic<size_t> pending_size{0};
  std::atomic<uint64_t> ok{0};
  std::atomic<uint64_t> failed{0};
  std::atomic<uint64_t> dropped{0};
  bool failing GUARDED_BY(flush_mu) = false;
  bool started = false;       // the owner's thread
  BackgroundLoop background;  // last: its pending work goes before what it uses

  bool flush() EXCLUDES(flush_mu);
  Task<void> run();
};

bool UsageFlusher::Impl::flush() {
  MutexLock lock(flush_mu);
  std::vector<UsageRow> rows = ledger.drain();
  merge_into(rows, std::move(pending));
  pending.clear();
  if (const size_t gone = trim_oldest(rows, options.max_pending_rows); gone > 0) {
    dropped += gone;
    spdlog::warn("usage: {} rows held beyond {} were dropped (oldest hours first)", gone,
                 options.max_pending_rows);
  }
  if (rows.empty()) {
    pending_size.store(0);
    return true;
  }
  const size_t count = rows.size();
  if (sink(std::move(rows))) {
    ++ok;
    pending_size.store(0);
    if (std::exchange(failing, false)) spdlog::info("usage: flushing again");
    return true;
  }
  ++failed;
  pending = std::move(rows);  // the sink left them as they were
  pending_size.store(pending.size());
  if (!std::exchange(failing, true)) {
    spdlog::warn("usage: a flush of {} rows failed; keeping them for the next one", count);
  }
  return false;
}

Task<void> UsageFlusher::Impl::run() {
  asio::steady_timer timer(background.io());
  for (;;) {
    timer.expires_after(options.interval);
    auto [ec] = co_await timer.async_wait(kNoThrow);
    if (ec) co_return;
    flush();
  }
}

UsageFlusher::UsageFlusher(UsageLedger& ledger, Sink sink, Options options)
    : impl_(std::make_unique<Impl>(ledger, std::move(sink), options)) {}

UsageFlusher::~UsageFlusher() {
  if (impl_->started) stop();
}

void UsageFlusher::start() {
  if (impl_->started) return;
  impl_->started = true;
  impl_->background.start([impl = impl_.get()] { return impl->run(); });
}

void UsageFlusher::stop() {
  impl_->background.stop();
  impl_->flush();
}

bool UsageFlusher::flush() { return impl_->flush(); }

uint64_t UsageFlusher::flushes_ok() const { return impl_->ok.load(); }
uint64_t UsageFlusher::flushes_failed() const { return impl_->failed.load(); }
uint64_t UsageFlusher::rows_dropped() const { return impl_->dropped.load(); }
size_t UsageFlusher::rows_pending() const { return impl_->pending_size.load(); }

}  // namespace rolter
