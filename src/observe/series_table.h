// SeriesTable: how many leases (observe/series_lease.h) hold each series of the route-, target-
// and endpoint-labelled families, and the removal of a series from its family when its last lease
// is released. A route or an endpoint that a reload removes thus leaves /metrics once nothing that
// could still update its series is alive.
//
//   auto table = std::make_shared<SeriesTable>(registry);
//   SeriesLease lease;
//   prometheus::Counter& c = table->lease(family, {{"route", "m"}}, lease);
//   table->with_lock([&] { if (family.Has(labels)) family.Add(labels).Increment(); });
//
// A family whose series are leased must get every series through lease(): one added to it
// directly is never removed. Readers that set a leased family's series by label at scrape time
// (Metrics::refresh) do so inside with_lock(), testing Has() first, so a series being removed is
// never created again.
//
// The request path's counters and histograms are leased with lease_sharded(): the table keeps,
// beside each such series, an instrument that each worker writes into cells of its own
// (observe/sharded_series.h), and fold() adds what they gained to the series. Whoever reads the
// registry calls fold() first (Metrics::refresh() does).
//
// The table keeps the registry (the owner of every family) alive while a lease holds the table.
//
// Thread-safety: all methods may be called from any thread. The table's lock is taken before a
// family's own lock, never after it.
#pragma once

#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <cassert>
#include <cstddef>
#include <memory>
#include <unordered_map>
#include <utility>

#include "common/mutex.h"
#include "observe/series_lease.h"
#include "observe/sharded_series.h"
#include "observe/worker_cells.h"

namespace rolter {

class SeriesTable : public std::enable_shared_from_this<SeriesTable> {
 public:
  // `workers`: how many worker threads write sharded instruments, each with its own cells
  // (WorkerCells::set_thread_slot(index + 1)); others share one more.
  explicit SeriesTable(std::shared_ptr<prometheus::Registry> registry, unsigned workers = 0)
      : registry_(std::move(registry)), cells_(workers) {}
  SeriesTable(const SeriesTable&) = delete;
  SeriesTable& operator=(const SeriesTable&) = delete;

  // The series of `family` labelled `labels` (created with `args` when new), held by `into` from
  // now on. REQUIRES: the table is owned by a shared_ptr; `into` is empty or of this table;
  // `family` belongs to the registry the table keeps.
  template <typename T, typename... Args>
  T& lease(prometheus::Family<T>& family, const prometheus::Labels& labels, SeriesLease& into,
           Args&&... args) EXCLUDES(mu_) {
    if (!into.table_) into.table_ = shared_from_this();
    assert(into.table_.get() == this);
    MutexLock lock(mu_);
    T& series = family.Add(labels, std::forward<Args>(args)...);
    hold(family, series, into);
    return series;
  }

  // A counter or a histogram of the request path: the series of `family` labelled `labels`, held
  // by `into`, and the instrument that writes it through per-worker cells. The same series leased
  // again gets the same instrument. `bounds` are the histogram's buckets.
  ShardedCounter& lease_sharded(prometheus::Family<prometheus::Counter>& family,
                                const prometheus::Labels& labels, SeriesLease& into) EXCLUDES(mu_);
  ShardedHistogram& lease_sharded(prometheus::Family<prometheus::Histogram>& family,
                                  const prometheus::Labels& labels, SeriesLease& into,
                                  const std::vector<double>& bounds) EXCLUDES(mu_);

  // Adds to every sharded series what its instrument gained since the last fold.
  void fold() EXCLUDES(mu_);

  // Runs fn() with the table locked: no leased series is removed while it runs. fn may read and
  // set series it finds with Family::Has(), and must not lease or release.
  template <typename Fn>
  void with_lock(Fn&& fn) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    fn();
  }

  // Series with at least one lease.
  size_t size() const EXCLUDES(mu_);

 private:
  friend class SeriesLease;

  struct Entry {
    size_t leases = 0;
    void* family = nullptr;
    void (*remove)(void* family, void* series) = nullptr;
    std::unique_ptr<ShardedSeries> sharded;  // for a series leased with lease_sharded()
  };

  // The entry of a series just added or found in `family`, with one more lease held by `into`.
  template <typename T>
  Entry& hold(prometheus::Family<T>& family, T& series, SeriesLease& into) REQUIRES(mu_) {
    Entry& entry = entries_[&series];
    if (entry.leases++ == 0) {
      entry.family = &family;
      entry.remove = [](void* f, void* s) {
        static_cast<prometheus::Family<T>*>(f)->Remove(static_cast<T*>(s));
      };
    }
    into.series_.push_back(&series);
    return entry;
  }

  // One lease's series, each let go once; those left with none are removed from their families.
  void release(const std::vector<void*>& series) EXCLUDES(mu_);

  const std::shared_ptr<prometheus::Registry> registry_;
  WorkerCells cells_;
  mutable Mutex mu_;
  std::unordered_map<void*, Entry> entries_ GUARDED_BY(mu_);
};

}  // namespace rolter
