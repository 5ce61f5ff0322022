// dns_lookup: one DNS lookup of a discovered provider's instances (SPEC §17), with c-ares.
//
//   auto found = dns_lookup(spec, "127.0.0.1:5353", std::chrono::seconds(2));
//   // found: every A/AAAA address at spec.port, or every SRV record's target addresses at its
//   // port; or a message saying why there are none
//
// `resolver` is "IP:PORT" (parse_discover_resolver()), or "" for the system's resolver
// (/etc/resolv.conf, its search domains and /etc/hosts). An answer with no address is an error
// (NXDOMAIN, no records): a caller keeps what it found before rather than dropping every instance
// on one empty answer.
//
// Blocking: it waits for the answer, up to `timeout`, on the calling thread. The discovery service
// calls it from its own background thread only.
//
// Thread-safety: may be called from any thread; each call has its own resolver channel.
#pragma once

#include <tl/expected.hpp>

#include <chrono>
#include <string>
#include <vector>

#include "config/discover.h"

namespace rolter {

tl::expected<std::vector<DiscoveredAddress>, std::string> dns_lookup(
    const DiscoverSpec& spec, const std::string& resolver, std::chrono::milliseconds timeout);

}  // namespace rolter
