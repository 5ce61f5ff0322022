#include "observe/series_table.h"

namespace rolter {

size_t SeriesTable::size() const {
  MutexLock lock(mu_);
  return entries_.size();
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
