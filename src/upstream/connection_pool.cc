#include "upstream/connection_pool.h"

namespace rolter {

std::unique_ptr<UpstreamConnection> ConnectionPool::take(uint32_t instance_id) {
  if (instance_id >= idle_.size() || idle_[instance_id].empty()) return nullptr;
  auto connection = std::move(idle_[instance_id].back());
  idle_[instance_id].pop_back();
  connection->reused = true;
  return connection;
}

void ConnectionPool::give_back(std::unique_ptr<UpstreamConnection> connection) {
  const auto id = connection->instance_id;
  if (id >= idle_.size()) idle_.resize(id + 1);
  auto& idle = idle_[id];
  if (idle.size() >= kMaxIdlePerInstance) return;  // closed by the destructor
  idle.push_back(std::move(connection));
}

}  // namespace rolter
