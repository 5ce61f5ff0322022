#include "observe/series_lease.h"

#include <cassert>
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

void SeriesLease::merge(SeriesLease&& other) {
  if (other.series_.empty()) return;
  if (!table_) table_ = other.table_;
  assert(table_ == other.table_);
  series_.insert(series_.end(), other.series_.begin(), other.series_.end());
  other.series_.clear();
}

void SeriesLease::release() {
  if (table_ && !series_.empty()) table_->release(series_);
  series_.clear();
  // The table stays: the lease may take more series of it.
}

}  // namespace rolter
