#include "flow/fair_queue.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace rolter {

size_t FairQueue::ahead_of(uint8_t band, std::string_view tenant) const {
  size_t ahead = 0;
  for (size_t b = band + 1; b < kQueueBands; ++b) ahead += bands_[b].size;
  const Band& own = bands_[std::min<uint8_t>(band, kQueueBands - 1)];
  const size_t rounds = queued_of(own, tenant) + 1;
  for (const Flow& flow : own.flows) {
    ahead += flow.tenant == tenant ? rounds - 1 : std::min(flow.entries.size(), rounds);
  }
  return ahead;
}

size_t FairQueue::queued_of(const Band& band, std::string_view tenant) const {
  for (const Flow& flow : band.flows) {
    if (flow.tenant == tenant) return flow.entries.size();
  }
  return 0;
}

std::optional<uint8_t> FairQueue::lowest_band() const {
  for (uint8_t b = 0; b < kQueueBands; ++b) {
    if (bands_[b].size > 0) return b;
  }
  return std::nullopt;
}

std::pair<uint64_t, size_t> FairQueue::heaviest_newest(const Band& band) const {
  uint64_t newest = 0;
  size_t most = 0;
  for (const Flow& flow : band.flows) {
    const size_t n = flow.entries.size();
    if (n > most || (n == most && flow.entries.back().id > newest)) {
      most = n;
      newest = flow.entries.back().id;
    }
  }
  return {newest, most};
}

FairQueue::PushResult FairQueue::push(QueueEntry entry) {
  PushResult result;
  entry.band = std::min<uint8_t>(entry.band, kQueueBands - 1);
  entry.cost = std::max<uint64_t>(entry.cost, 1);
  if (size_ >= max_requests_) {
    // Full: the newest request of the lowest band present, the arrival included, is shed.
    const std::optional<uint8_t> lowest = lowest_band();
    if (!lowest || entry.band < *lowest) return result;  // the arrival is that request
    const Band& victims = bands_[*lowest];
    const auto [victim, most] = heaviest_newest(victims);
    // In the lowest band, the arrival counts with its tenant, and as the newest it loses ties.
    if (entry.band == *lowest && queued_of(victims, entry.tenant) + 1 >= most) return result;
    result.displaced = remove(victim);
  }
  entry.id = next_id_++;
  Band& band = bands_[entry.band];
  auto flow = std::find_if(band.flows.begin(), band.flows.end(),
                           [&](const Flow& f) { return f.tenant == entry.tenant; });
  if (flow == band.flows.end()) {
    // A tenant joining the round waits for its turn: it goes just before the cursor, last in
    // the round that is under way.
    flow = band.flows.insert(band.cursor, Flow{.tenant = entry.tenant});
  }
  result.admitted = true;
  result.id = entry.id;
  places_.emplace(entry.id, Place{entry.band, flow});
  flow->entries.push_back(std::move(entry));
  ++band.size;
  ++size_;
  return result;
}

QueueEntry FairQueue::take(Band& band, std::list<Flow>::iterator flow,
                           std::list<QueueEntry>::iterator entry) {
  QueueEntry out = std::move(*entry);
  flow->entries.erase(entry);
  places_.erase(out.id);
  --band.size;
  --size_;
  if (flow->entries.empty()) {
    // An idle tenant leaves the round and keeps no credit.
    if (band.cursor == flow) {
      band.cursor = band.flows.erase(flow);
      band.turn_started = false;
    } else {
      band.flows.erase(flow);
    }
  }
  return out;
}

QueueEntry FairQueue::pop_band(Band& band) {
  size_t visited_without_serving = 0;
  for (;;) {
    if (band.cursor == band.flows.end()) band.cursor = band.flows.begin();
    Flow& flow = *band.cursor;
    if (!band.turn_started) {
      flow.deficit += quantum_;
      band.turn_started = true;
    }
    const uint64_t cost = flow.entries.front().cost;
    if (flow.deficit >= cost) {
      flow.deficit -= cost;
      return take(band, band.cursor, flow.entries.begin());
    }
    band.turn_started = false;
    ++band.cursor;
    if (++visited_without_serving < band.flows.size()) continue;
    // A whole round served nobody (costs far above the quantum): give every tenant the rounds
    // that the nearest of them still needs at once, rather than looping through them.
    uint64_t rounds = std::numeric_limits<uint64_t>::max();
    for (const Flow& f : band.flows) {
      const uint64_t need = f.entries.front().cost - std::min(f.deficit, f.entries.front().cost);
      rounds = std::min(rounds, (need + quantum_ - 1) / quantum_);
    }
    if (rounds > 1) {
      for (Flow& f : band.flows) f.deficit += (rounds - 1) * quantum_;
    }
    visited_without_serving = 0;
  }
}

std::optional<QueueEntry> FairQueue::pop() {
  for (int b = kQueueBands - 1; b >= 0; --b) {
    if (bands_[b].size > 0) return pop_band(bands_[b]);
  }
  return std::nullopt;
}

std::optional<QueueEntry> FairQueue::remove(uint64_t id) {
  auto it = places_.find(id);
  if (it == places_.end()) return std::nullopt;
  const Place place = it->second;
  auto entry = std::find_if(place.flow->entries.begin(), place.flow->entries.end(),
                            [&](const QueueEntry& e) { return e.id == id; });
  return take(bands_[place.band], place.flow, entry);
}

}  // namespace rolter
