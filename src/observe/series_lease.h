// SeriesLease: the Prometheus series one holder (a snapshot, a background service's target) still
// uses, so that a series nobody uses any more is deleted from /metrics.
//
// Every route-, target- and endpoint-labelled series is created through a SeriesTable
// (observe/series_table.h) into a lease. The table counts the leases on each series; when the
// last lease on a series is released (the lease is destroyed, reset or overwritten), the series is
// removed from its family. A reload builds the new snapshot, leasing its series, before the old one
// is released, so the series of routes and endpoints that stay are never removed; the old
// snapshot lives until the last request pinned to it ends, so the raw series pointers a request
// holds stay valid for as long as it runs.
//
//   SeriesLease lease;
//   prometheus::Counter* retries = metrics.route("m", lease).retries;  // valid while `lease` is
//   lease = SeriesLease();  // the route's series leave /metrics unless another lease holds them
//
// A lease keeps its table (and the families' registry) alive, so it may outlive the Metrics that
// made it.
//
// Thread-safety: a lease is used by one thread at a time; releasing it locks the table.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace rolter {

class SeriesTable;

class SeriesLease {
 public:
  SeriesLease() = default;
  ~SeriesLease() { release(); }
  SeriesLease(SeriesLease&& other) noexcept;
  SeriesLease& operator=(SeriesLease&& other) noexcept;
  SeriesLease(const SeriesLease&) = delete;
  SeriesLease& operator=(const SeriesLease&) = delete;

  // The series held, a series held twice counting twice.
  size_t size() const { return series_.size(); }
  bool empty() const { return series_.empty(); }

  // Lets go of every series now; a series with no other lease leaves its family.
  void release();

 private:
  friend class SeriesTable;

  std::shared_ptr<SeriesTable> table_;
  std::vector<void*> series_;
};

}  // namespace rolter
