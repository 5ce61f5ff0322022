// FairQueue: the waiting requests of one route, in priority bands, fair between tenants in cost
// (SPEC §19).
//
// Bands 0 (lowest) … 7. pop() serves the highest non-empty band first; within a band it runs
// deficit round-robin across tenants (a key, or its team when it has one): each tenant's turn adds
// `quantum` to its deficit, and it is served while its deficit covers the cost of its oldest
// request. Costs are a request's uncached prompt tokens plus its output cap, so a tenant whose
// prompts the engines' caches already hold pays less per request and is served more often, and
// a tenant of long unshared prompts pays for them. A tenant whose queue empties leaves the round
// and forgets its deficit (classic DRR: no credit is saved while idle).
//
// push() on a full queue sheds the newest request of the lowest band present, the arrival
// included, and within that band the newest of the tenant with the most requests in it (the
// arrival counted with its tenant): an arrival below that band is refused; an arrival of a higher
// band displaces one; an arrival in it is refused when its own tenant is (one of) the heaviest
// there, else it displaces the heaviest tenant's newest. Dropping from the longest queue, as fair
// queueing does, keeps a flood from crowding a light tenant out of a full queue.
//
// A plain value, synchronously testable: no clock, no threads, no I/O. Entries carry an opaque
// `token` the owner uses to reach the waiting request.
//
// Thread-safety: none; the owner serialises every call (flow/route_queue.h holds it under a mutex).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace rolter {

inline constexpr uint8_t kQueueBands = 8;

struct QueueEntry {
  uint64_t id = 0;  // unique within the queue; assigned by push()
  uint8_t band = 4;
  std::string tenant;
  uint64_t cost = 1;   // uncached prompt tokens + output cap; at least 1
  uint64_t token = 0;  // the owner's handle on the waiting request
};

class FairQueue {
 public:
  // SPEC §19: 4096, about one long prompt's uncached tokens per turn.
  static constexpr uint64_t kDefaultQuantum = 4096;

  explicit FairQueue(size_t max_requests, uint64_t quantum = kDefaultQuantum)
      : max_requests_(max_requests), quantum_(quantum == 0 ? 1 : quantum) {}

  struct PushResult {
    bool admitted = false;                // false: the arrival itself was shed (queue full)
    uint64_t id = 0;                      // the arrival's id when admitted
    std::optional<QueueEntry> displaced;  // a queued request shed to make room for it
  };
  // Queues `entry` (its id is assigned here), shedding as the header says when full.
  PushResult push(QueueEntry entry);

  // The next request to dispatch, removed from the queue; nullopt when empty.
  std::optional<QueueEntry> pop();

  // The oldest request of the first tenant, highest band first and in each band in round order
  // from the tenant whose turn it is, for which allowed(band, tenant) holds; removed from the
  // queue outside the round (that tenant's deficit is left as it was). nullopt when none is.
  template <typename Allowed>
  std::optional<QueueEntry> pop_first(Allowed&& allowed) {
    for (int b = kQueueBands - 1; b >= 0; --b) {
      Band& band = bands_[b];
      if (band.size == 0) continue;
      auto flow = band.cursor == band.flows.end() ? band.flows.begin() : band.cursor;
      for (size_t n = 0; n < band.flows.size(); ++n, ++flow) {
        if (flow == band.flows.end()) flow = band.flows.begin();
        if (allowed(static_cast<uint8_t>(b), std::string_view(flow->tenant))) {
          return take(band, flow, flow->entries.begin());
        }
      }
    }
    return std::nullopt;
  }

  // Removes the request `id` (its client left, or its wait ran out); nullopt when it is not
  // queued (already dispatched or shed).
  std::optional<QueueEntry> remove(uint64_t id);

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t band_size(uint8_t band) const { return bands_[band].size; }
  // Requests that dispatch before a new arrival of `tenant` in `band` would: every request of
  // the bands above, and in its band, round by round, up to as many of each tenant's as its own
  // tenant has queued plus one (exact for equal costs; the cost-weighted rounds differ little).
  size_t ahead_of(uint8_t band, std::string_view tenant) const;
  size_t max_requests() const { return max_requests_; }
  void set_max_requests(size_t max_requests) { max_requests_ = max_requests; }

 private:
  struct Flow {
    std::string tenant;
    uint64_t deficit = 0;
    std::list<QueueEntry> entries;  // oldest first
  };
  struct Band {
    std::list<Flow> flows;  // the active tenants, in round order
    std::list<Flow>::iterator cursor = flows.end();
    bool turn_started = false;  // the cursor's tenant already got this turn's quantum
    size_t size = 0;
  };
  struct Place {
    uint8_t band;
    std::list<Flow>::iterator flow;
  };

  QueueEntry pop_band(Band& band);
  QueueEntry take(Band& band, std::list<Flow>::iterator flow,
                  std::list<QueueEntry>::iterator entry);
  // The newest request of the tenant with the most requests in `band` (ties: the newest of
  // theirs), and how many that tenant has. REQUIRES: band not empty.
  std::pair<uint64_t, size_t> heaviest_newest(const Band& band) const;
  size_t queued_of(const Band& band, std::string_view tenant) const;
  std::optional<uint8_t> lowest_band() const;

  size_t max_requests_;
  uint64_t quantum_;
  uint64_t next_id_ = 1;
  size_t size_ = 0;
  std::array<Band, kQueueBands> bands_;
  std::unordered_map<uint64_t, Place> places_;
};

}  // namespace rolter
