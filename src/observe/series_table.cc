#include "observe/series_table.h"

#include <prometheus/counter.h>
#include <prometheus/histogram.h>

namespace rolter {

size_t SeriesTable::size() const {
  MutexLock lock(mu_);
  return entries_.size();
}

ShardedCounter& SeriesTable::lease_sharded(prometheus::Family<prometheus::Counter>& family,
                                           const prometheus::Labels& labels, SeriesLease& into) {
  if (!into.table_) into.table_ = shared_from_this();
  assert(into.table_.get() == this);
  MutexLock lock(mu_);
  prometheus::Counter& series = family.Add(labels);
  Entry& entry = hold(family, series, into);
  if (!entry.sharded) entry.sharded = std::make_unique<ShardedCounter>(cells_, series);
  return static_cast<ShardedCounter&>(*entry.sharded);
}

ShardedHistogram& SeriesTable::lease_sharded(prometheus::Family<prometheus::Histogram>& family,
                                             const prometheus::Labels& labels, SeriesLease& into,
                                             const std::vector<double>& bounds) {
  if (!into.table_) into.table_ = shared_from_this();
  assert(into.table_.get() == this);
  MutexLock lock(mu_);
  prometheus::Histogram& series = family.Add(labels, bounds);
  Entry& entry = hold(family, series, into);
  if (!entry.sharded) entry.sharded = std::make_unique<ShardedHistogram>(cells_, series, bounds);
  return static_cast<ShardedHistogram&>(*entry.sharded);
}

void SeriesTable::fold() {
  MutexLock lock(mu_);
  for (auto& [series, entry] : entries_) {
    if (entry.sharded) entry.sharded->fold();
  }
}

void SeriesTable::release(const std::vector<void*>& series) {
  MutexLock lock(mu_);
  for (void* s : series) {
    auto it = entries_.find(s);
    if (it == entries_.end()) continue;  // never expected: every series was leased here
    if (--it->second.leases > 0) continue;
    it->second.remove(it->second.family, s);
    entries_.erase(it);
  }
}

}  // namespace rolter
