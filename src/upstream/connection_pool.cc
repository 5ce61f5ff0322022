#include "upstream/connection_pool.h"

namespace rolter {

std::unique_ptr<UpstreamConnection> ConnectionPool::take(uint32_t instance_id) {
  if (instance_id >= idle_.size()) return nullptr;
  auto& idle = idle_[instance_id];
  while (!idle.empty()) {
    auto connection = std::move(idle.back());
    idle.pop_back();
    // The upstream spoke while the connection sat idle (stray bytes, a 408, EOF): whatever it
    // said answers no request of ours, so the connection is closed, never read from.
    if (!connection->quiet()) continue;
    connection->reused = true;
    return connection;
  }
  return nullptr;
}

void ConnectionPool::give_back(std::unique_ptr<UpstreamConnection> connection) {
  // Bytes read past the response: closed by the destructor. The socket itself is not looked at
  // here: take() looks before any reuse, so one look (one system call) serves both.
  if (connection->buffer.size() != 0) return;
  const auto id = connection->instance_id;
  if (id >= idle_.size()) idle_.resize(id + 1);
  auto& idle = idle_[id];
  if (idle.size() >= kMaxIdlePerInstance) return;  // closed by the destructor
  idle.push_back(std::move(connection));
}

}  // namespace rolter
