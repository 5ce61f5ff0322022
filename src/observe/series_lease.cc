#include "observe/series_lease.h"

#include <utility>

#include "observe/series_table.h"

namespace rolter {

SeriesLease::SeriesLease(SeriesLease&& other) noexcept
    : table_(std::move(other.table_)), series_(std::move(other.series_)) {
  other.series_.clear();
}

SeriesLease& SeriesLease::operator=(SeriesLease&& other) noexcept {
  if (this != &other) {
    release();
    table_ = std::move(other.table_);
    series_ = std::move(other.series_);
    other.series_.clear();
  }
  return *this;
}

void SeriesLease::release() {
  if (table_ && !series_.empty()) table_->release(series_);
  series_.clear();
  // The table stays: the lease may take more series of it.
}

}  // namespace rolter
