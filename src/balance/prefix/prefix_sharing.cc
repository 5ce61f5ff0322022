#include "balance/prefix/prefix_sharing.h"

#include <utility>

#include "balance/prefix/prefix_tree.h"

namespace rolter {

bool PrefixSharing::publish(std::string_view tree, std::string_view candidate,
                            std::string_view text) {
  // The copy is made before the lock, so a request's worker holds it for a move, not a copy.
  Insert insert{std::string(tree), std::string(candidate), std::string(text)};
  {
    MutexLock lock(outbox_mu_);
    if (outbox_.size() < max_outbox_) {
      outbox_.push_back(std::move(insert));
      published_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  dropped_.fetch_add(1, std::memory_order_relaxed);
  return false;
}

std::vector<PrefixSharing::Insert> PrefixSharing::take_outbox() {
  std::vector<Insert> taken;
  MutexLock lock(outbox_mu_);
  taken.swap(outbox_);
  return taken;
}

size_t PrefixSharing::deliver(const Insert& insert) {
  size_t trees = 0;
  MutexLock lock(attached_mu_);
  for (auto& [id, attached] : attached_) {
    if (attached.tree != insert.tree) continue;
    auto it = attached.index_of.find(insert.candidate);
    if (it == attached.index_of.end()) continue;
    attached.prefix_tree->insert(insert.text, it->second);
    ++trees;
  }
  if (trees > 0) delivered_.fetch_add(1, std::memory_order_relaxed);
  return trees;
}

bool PrefixSharing::take_attached() {
  MutexLock lock(attached_mu_);
  return std::exchange(newly_attached_, false);
}

uint64_t PrefixSharing::attach(Attached attached) {
  MutexLock lock(attached_mu_);
  const uint64_t id = next_id_++;
  attached_.emplace(id, std::move(attached));
  newly_attached_ = true;
  return id;
}

void PrefixSharing::detach(uint64_t id) {
  MutexLock lock(attached_mu_);
  attached_.erase(id);
}

PrefixShareLink::PrefixShareLink(PrefixSharing* hub, std::string tree_name,
                                 std::span<const CandidateSpec> candidates, PrefixTree& tree)
    : hub_(hub), tree_name_(std::move(tree_name)) {
  if (hub_ == nullptr) return;
  PrefixSharing::Attached attached{.tree = tree_name_, .index_of = {}, .prefix_tree = &tree};
  identities_.reserve(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    identities_.push_back(candidates[i].identity);
    attached.index_of.emplace(candidates[i].identity, i);
  }
  id_ = hub_->attach(std::move(attached));
}

PrefixShareLink::~PrefixShareLink() {
  if (hub_ != nullptr) hub_->detach(id_);
}

void PrefixShareLink::publish(size_t index, std::string_view text) const {
  if (hub_ == nullptr || index >= identities_.size() || text.empty()) return;
  hub_->publish(tree_name_, identities_[index], text);
}

std::string shared_tree_name(std::string_view pool, std::string_view strategy) {
  std::string name(pool);
  name += '|';
  name += strategy;
  return name;
}

}  // namespace rolter
