#include "collect/discovery/dns_lookup.h"

#include <ares.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>

#include <algorithm>
#include <mutex>

namespace rolter {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// c-ares's process-wide state, set up once.
bool library_ready() {
  static const int status = ares_library_init(ARES_LIB_INIT_ALL);
  return status == ARES_SUCCESS;
}

// One resolver channel, destroyed with the object.
class Channel {
 public:
  Channel() = default;
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
  ~Channel() {
    if (channel_ != nullptr) ares_destroy(channel_);
  }

  // Each server is given `per_try` twice. With an explicit `resolver`, names are looked up in DNS
  // only; without one, the system's order (/etc/hosts, then DNS).
  tl::expected<void, std::string> open(const std::string& resolver, milliseconds per_try) {
    ares_options options{};
    options.timeout = static_cast<int>(std::max<int64_t>(per_try.count(), 100));
    options.tries = 2;
    char dns_only[] = "b";
    int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
    if (!resolver.empty()) {
      options.lookups = dns_only;
      mask |= ARES_OPT_LOOKUPS;
    }
    if (int status = ares_init_options(&channel_, &options, mask); status != ARES_SUCCESS) {
      channel_ = nullptr;
      return tl::unexpected(std::string("resolver: ") + ares_strerror(status));
    }
    if (!resolver.empty()) {
      if (int status = ares_set_servers_ports_csv(channel_, resolver.c_str());
          status != ARES_SUCCESS) {
        return tl::unexpected("resolver " + resolver + ": " + ares_strerror(status));
      }
    }
    return {};
  }

  ares_channel get() const { return channel_; }

  // Runs the channel until nothing is pending or `deadline` passes (then cancels what is left:
  // its callbacks run with ARES_ECANCELLED).
  void run_until(Clock::time_point deadline) {
    for (;;) {
      ares_socket_t sockets[ARES_GETSOCK_MAXNUM];
      const int bits = ares_getsock(channel_, sockets, ARES_GETSOCK_MAXNUM);
      pollfd fds[ARES_GETSOCK_MAXNUM];
      nfds_t count = 0;
      for (int i = 0; i < ARES_GETSOCK_MAXNUM; ++i) {
        const bool readable = ARES_GETSOCK_READABLE(bits, i);
        const bool writable = ARES_GETSOCK_WRITABLE(bits, i);
        if (!readable && !writable) continue;
        fds[count++] =
            pollfd{.fd = sockets[i],
                   .events = static_cast<short>((readable ? POLLIN : 0) | (writable ? POLLOUT : 0)),
                   .revents = 0};
      }
      const auto now = Clock::now();
      timeval ceiling{}, wait{};
      const auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - now);
      if (count == 0 && ares_timeout(channel_, nullptr, &wait) == nullptr) return;  // all done
      if (left.count() <= 0) {
        ares_cancel(channel_);
        return;
      }
      ceiling.tv_sec = static_cast<time_t>(left.count() / 1000000);
      ceiling.tv_usec = static_cast<suseconds_t>(left.count() % 1000000);
      const timeval* next = ares_timeout(channel_, &ceiling, &wait);
      const int wait_ms = static_cast<int>(next->tv_sec * 1000 + (next->tv_usec + 999) / 1000);
      const int ready = ::poll(fds, count, wait_ms);
      if (ready <= 0) {
        // A timeout: c-ares retries or fails the queries whose time is up.
        ares_process_fd(channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
        continue;
      }
      for (nfds_t i = 0; i < count; ++i) {
        const bool in = (fds[i].revents & (POLLIN | POLLERR | POLLHUP)) != 0;
        const bool out = (fds[i].revents & POLLOUT) != 0;
        if (!in && !out) continue;
        ares_process_fd(channel_, in ? fds[i].fd : ARES_SOCKET_BAD,
                        out ? fds[i].fd : ARES_SOCKET_BAD);
      }
    }
  }

 private:
  ares_channel channel_ = nullptr;
};

// What one name's addresses lookup gathers.
struct AddressQuery {
  uint16_t port = 0;
  std::vector<DiscoveredAddress>* out = nullptr;
  std::string error;  // empty = answered
};

void on_addresses(void* arg, int status, int /*timeouts*/, ares_addrinfo* result) {
  auto* query = static_cast<AddressQuery*>(arg);
  if (status != ARES_SUCCESS) {
    query->error = ares_strerror(status);
    if (result != nullptr) ares_freeaddrinfo(result);
    return;
  }
  for (const ares_addrinfo_node* node = result != nullptr ? result->nodes : nullptr;
       node != nullptr; node = node->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw = nullptr;
    if (node->ai_family == AF_INET) {
      raw = &reinterpret_cast<const sockaddr_in*>(node->ai_addr)->sin_addr;
    } else if (node->ai_family == AF_INET6) {
      raw = &reinterpret_cast<const sockaddr_in6*>(node->ai_addr)->sin6_addr;
    }
    if (raw == nullptr || ::inet_ntop(node->ai_family, raw, text, sizeof text) == nullptr) continue;
    query->out->push_back(DiscoveredAddress{.host = text, .port = query->port});
  }
  if (result != nullptr) ares_freeaddrinfo(result);
}

void look_up_addresses(Channel& channel, const std::string& name, AddressQuery& query) {
  ares_addrinfo_hints hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = ARES_AI_NOSORT;
  ares_getaddrinfo(channel.get(), name.c_str(), nullptr, &hints, on_addresses, &query);
}

struct SrvQuery {
  std::vector<std::pair<std::string, uint16_t>> targets;
  std::string error;
};

void on_srv(void* arg, int status, int /*timeouts*/, unsigned char* answer, int length) {
  auto* query = static_cast<SrvQuery*>(arg);
  if (status != ARES_SUCCESS) {
    query->error = ares_strerror(status);
    return;
  }
  ares_srv_reply* replies = nullptr;
  if (int parsed = ares_parse_srv_reply(answer, length, &replies); parsed != ARES_SUCCESS) {
    query->error = std::string("SRV answer: ") + ares_strerror(parsed);
    return;
  }
  for (const ares_srv_reply* r = replies; r != nullptr; r = r->next) {
    if (r->port != 0 && r->host != nullptr && r->host[0] != '\0') {
      query->targets.emplace_back(r->host, r->port);
    }
  }
  ares_free_data(replies);
}

}  // namespace

tl::expected<std::vector<DiscoveredAddress>, std::string> dns_lookup(const DiscoverSpec& spec,
                                                                     const std::string& resolver,
                                                                     milliseconds timeout) {
  if (!library_ready()) return tl::unexpected(std::string("c-ares could not start"));
  const auto deadline = Clock::now() + timeout;
  Channel channel;
  if (auto opened = channel.open(resolver, timeout / 4); !opened) {
    return tl::unexpected(opened.error());
  }
  std::vector<DiscoveredAddress> found;
  if (spec.kind == DiscoverSpec::Kind::kAddress) {
    AddressQuery query{.port = spec.port, .out = &found};
    look_up_addresses(channel, spec.name, query);
    channel.run_until(deadline);
    if (!query.error.empty()) return tl::unexpected(spec.name + ": " + query.error);
  } else {
    SrvQuery srv;
    ares_search(channel.get(), spec.name.c_str(), /*C_IN*/ 1, /*T_SRV*/ 33, on_srv, &srv);
    channel.run_until(deadline);
    if (!srv.error.empty()) return tl::unexpected(spec.name + " SRV: " + srv.error);
    // Every target's addresses, at its record's port; a target that fails is left out.
    std::vector<AddressQuery> queries(srv.targets.size());
    for (size_t i = 0; i < srv.targets.size(); ++i) {
      queries[i] = AddressQuery{.port = srv.targets[i].second, .out = &found};
      look_up_addresses(channel, srv.targets[i].first, queries[i]);
    }
    channel.run_until(deadline);
    if (found.empty() && !queries.empty()) {
      return tl::unexpected(srv.targets.front().first + ": " + queries.front().error);
    }
  }
  if (found.empty()) return tl::unexpected(spec.name + ": no addresses");
  return found;
}

}  // namespace rolter
