#include "sim/kv_transfer_registry.h"

#include <algorithm>

namespace rolter::sim {
namespace {

std::string ids_text(const std::vector<uint32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    // A long list says enough by its start.
    if (i == 8) {
      out += "... " + std::to_string(ids.size()) + " ids";
      break;
    }
    out += std::to_string(ids[i]);
  }
  return out + "]";
}

}  // namespace

void KvTransferRegistry::add_engine(const std::string& engine_id, const std::string& host,
                                    uint16_t port, Release release) {
  std::lock_guard lock(mu_);
  Entry& e = engines_[engine_id];
  e.host = host;
  e.port = port;
  e.release = std::move(release);
}

void KvTransferRegistry::add_hold(const std::string& engine_id, Hold hold) {
  std::lock_guard lock(mu_);
  auto it = engines_.find(engine_id);
  if (it == engines_.end()) return;
  const uint64_t id = hold.id;
  it->second.holds[id] = std::move(hold);
}

bool KvTransferRegistry::drop(const std::string& engine_id, uint64_t hold_id) {
  std::lock_guard lock(mu_);
  auto it = engines_.find(engine_id);
  if (it == engines_.end()) return false;
  auto hold = it->second.holds.find(hold_id);
  if (hold == it->second.holds.end()) return false;
  remember(it->second, std::move(hold->second.block_ids), "expired");
  it->second.holds.erase(hold);
  return true;
}

size_t KvTransferRegistry::holds(const std::string& engine_id) const {
  std::lock_guard lock(mu_);
  auto it = engines_.find(engine_id);
  return it == engines_.end() ? 0 : it->second.holds.size();
}

void KvTransferRegistry::remember(Entry& entry, std::vector<uint32_t> block_ids, const char* why) {
  entry.ended.push_back({std::move(block_ids), why});
  if (entry.ended.size() > kEndedMemory) entry.ended.pop_front();
}

tl::expected<KvTransferRegistry::Entry*, std::string> KvTransferRegistry::find_engine(
    const KvTransferParams& params) {
  const std::string where = params.remote_host + ":" + std::to_string(params.remote_port);
  for (auto& [id, entry] : engines_) {
    if (entry.host != params.remote_host || entry.port != params.remote_port) continue;
    if (id != params.remote_engine_id) {
      return tl::make_unexpected("remote_engine_id '" + params.remote_engine_id +
                                 "' does not match the engine at " + where + " ('" + id + "')");
    }
    return &entry;
  }
  return tl::make_unexpected("no engine of this rolter-sim process listens on " + where +
                             " (KV transfers work within one process)");
}

tl::expected<KvTransferRegistry::Hold, std::string> KvTransferRegistry::claim(
    const KvTransferParams& params, std::span<const uint64_t> prompt_hashes,
    Clock::time_point now) {
  if (!params.remote_error.empty()) return tl::make_unexpected(params.remote_error);
  Release release;
  Hold claimed;
  std::string expired;
  {
    std::lock_guard lock(mu_);
    auto entry = find_engine(params);
    if (!entry) return tl::make_unexpected(entry.error());
    Entry& e = **entry;
    const std::string blocks =
        "blocks " + ids_text(params.remote_block_ids) + " of engine " + params.remote_engine_id;
    auto hold = std::find_if(e.holds.begin(), e.holds.end(), [&](const auto& h) {
      return h.second.block_ids == params.remote_block_ids;
    });
    if (hold == e.holds.end()) {
      // The most recent end of these blocks says what happened to them.
      auto ended = std::find_if(e.ended.rbegin(), e.ended.rend(), [&](const Ended& x) {
        return x.block_ids == params.remote_block_ids;
      });
      if (ended != e.ended.rend()) {
        return tl::make_unexpected(blocks + " are no longer held: " + ended->why +
                                   (std::string_view(ended->why) == "pulled"
                                        ? " already (one pull per prefill)"
                                        : " (--kv-hold-ms)"));
      }
      return tl::make_unexpected(blocks +
                                 " are not held for a pull (never prefilled there, "
                                 "or evicted since)");
    }
    if (hold->second.expires <= now) {
      // Its timer has not run yet: end it here, so the blocks are released now.
      expired = blocks + " are no longer held: expired (--kv-hold-ms)";
      claimed = std::move(hold->second);
      e.holds.erase(hold);
      remember(e, claimed.block_ids, "expired");
      release = e.release;
    } else if (!std::equal(hold->second.hashes.begin(), hold->second.hashes.end(),
                           prompt_hashes.begin(), prompt_hashes.end())) {
      return tl::make_unexpected(blocks + " hold another prompt than this request's (" +
                                 std::to_string(hold->second.hashes.size()) + " blocks there, " +
                                 std::to_string(prompt_hashes.size()) + " here)");
    } else {
      claimed = std::move(hold->second);
      e.holds.erase(hold);
      remember(e, claimed.block_ids, "pulled");
      release = e.release;
    }
  }
  if (release) release(claimed.id);
  if (!expired.empty()) return tl::make_unexpected(expired);
  return claimed;
}

}  // namespace rolter::sim
