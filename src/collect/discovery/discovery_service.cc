#include "collect/discovery/discovery_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <string>

#include "collect/discovery/dns_lookup.h"
#include "collect/loop/background_loop.h"
#include "collect/loop/poll_loop.h"
#include "collect/loop/poll_schedule.h"
#include "snapshot/snapshot_store.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;

// A reload that adds a provider is looked up within this.
constexpr milliseconds kMaxTick{250};
constexpr milliseconds kMaxLookup{2000};

PollTiming lookup_timing(uint64_t interval_ms) {
  const milliseconds interval(interval_ms);
  return PollTiming{.interval = interval, .timeout = std::min(interval, kMaxLookup)};
}

std::string describe(const std::vector<DiscoveredAddress>& addresses) {
  std::string out;
  for (const auto& a : addresses) {
    if (!out.empty()) out += ", ";
    out += (a.host.find(':') != std::string::npos ? "[" + a.host + "]" : a.host) + ":" +
           std::to_string(a.port);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

// What to look up, for the PollLoop: one target per provider and discover URL.
struct DiscoveryService::Impl {
  struct Target {
    Target(const Clock& clock, PollTiming timing) : schedule(clock, timing) {}
    PollSchedule& polled() { return schedule; }
    PollSchedule schedule;
    std::string provider;
    std::string url;
    DiscoverSpec spec;
    std::string resolver;  // "IP:PORT" or "" (the system's)
    Metrics* metrics = nullptr;
  };
  struct Wanted {
    std::string provider;
    std::string url;
    DiscoverSpec spec;
    std::string resolver;
    uint64_t interval_ms = 5000;
  };

  Impl(SnapshotStore& store, DiscoveredInstances& f, Options o, const Clock& c)
      : found(f), options(std::move(o)), clock(c), loop(store, *this, kMaxTick) {}

  static std::map<std::string, Wanted> wanted(const Snapshot& snapshot);
  std::shared_ptr<Target> make(const std::string& key, const Wanted& w) const;
  static void update(Target& target, Wanted& wanted, const Snapshot& snapshot);
  void forget(const std::string& key, Target& target);
  static void stale(const std::string&, Target&) {}
  Task<void> poll(std::shared_ptr<Target> target);

  DiscoveredInstances& found;
  Options options;
  const Clock& clock;
  PollLoop<Impl> loop;
  BackgroundLoop background;  // last: its pending polls go before what they use
};

std::map<std::string, DiscoveryService::Impl::Wanted> DiscoveryService::Impl::wanted(
    const Snapshot& snapshot) {
  std::map<std::string, Wanted> wanted;
  for (const ProviderConfig& provider : snapshot.config().providers) {
    if (!provider.discover) continue;
    auto spec = parse_discover(provider.discover->url);
    auto resolver = provider.discover->resolver.empty()
                        ? tl::expected<std::string, std::string>(std::string())
                        : parse_discover_resolver(provider.discover->resolver);
    if (!spec || !resolver) continue;  // the validator refused these already
    // The resolver is part of the key: a changed resolver is a new target.
    wanted[provider.name + "|" + provider.discover->url + "|" + *resolver] =
        Wanted{.provider = provider.name,
               .url = provider.discover->url,
               .spec = std::move(*spec),
               .resolver = std::move(*resolver),
               .interval_ms = provider.discover->interval_ms};
  }
  return wanted;
}

std::shared_ptr<DiscoveryService::Impl::Target> DiscoveryService::Impl::make(
    const std::string&, const Wanted& w) const {
  spdlog::info("discovery: {}: looking up {} every {} ms ({})", w.provider, w.url, w.interval_ms,
               w.resolver.empty() ? "the system's resolver" : "resolver " + w.resolver);
  auto target = std::make_shared<Target>(clock, lookup_timing(w.interval_ms));
  target->provider = w.provider;
  target->url = w.url;
  target->spec = w.spec;
  target->resolver = w.resolver;
  return target;
}

void DiscoveryService::Impl::update(Target& target, Wanted& wanted, const Snapshot& snapshot) {
  target.schedule.set_timing(lookup_timing(wanted.interval_ms));
  target.metrics = snapshot.metrics();
}

void DiscoveryService::Impl::forget(const std::string&, Target& target) {
  spdlog::info("discovery: {}: no longer looking up {}", target.provider, target.url);
  // Another target may look up the same URL with another resolver: it keeps the set.
  bool still_named = false;
  for (const auto& [key, other] : loop.targets()) {
    if (other.get() != &target && other->provider == target.provider && other->url == target.url) {
      still_named = true;
    }
  }
  if (!still_named) found.forget(target.provider, target.url);
}

Task<void> DiscoveryService::Impl::poll(std::shared_ptr<Target> target) {
  const auto timeout = std::chrono::duration_cast<milliseconds>(target->schedule.timing().timeout);
  auto looked_up = dns_lookup(target->spec, target->resolver, timeout);
  if (!target->schedule.in_flight()) co_return;  // retired while it ran
  if (looked_up) {
    const bool first_good = target->schedule.succeed();
    const size_t count = looked_up->size();
    const std::vector<DiscoveredAddress> before = found.get(target->provider, target->url);
    if (found.set(target->provider, target->url, std::move(*looked_up))) {
      spdlog::info("discovery: {}: {} instance(s): {} (were: {})", target->provider, count,
                   describe(found.get(target->provider, target->url)), describe(before));
    } else if (first_good) {
      spdlog::info("discovery: {}: {} answers again ({} instance(s))", target->provider,
                   target->url, count);
    }
    if (target->metrics != nullptr)
      target->metrics->discovery_lookup(target->provider, true, count);
  } else {
    const size_t kept = found.get(target->provider, target->url).size();
    if (target->schedule.fail()) {
      spdlog::warn(
          "discovery: {}: lookup of {} failed: {}; keeping the {} instance(s) found "
          "before",
          target->provider, target->url, looked_up.error(), kept);
    }
    if (target->metrics != nullptr)
      target->metrics->discovery_lookup(target->provider, false, kept);
  }
  if (options.changed) options.changed();
  co_return;
}

DiscoveryService::DiscoveryService(SnapshotStore& store, DiscoveredInstances& found,
                                   Options options, const Clock& clock)
    : impl_(std::make_unique<Impl>(store, found, std::move(options), clock)) {}

DiscoveryService::~DiscoveryService() { stop(); }

void DiscoveryService::start() {
  impl_->background.start([impl = impl_.get()] { return impl->loop.run(impl->background.io()); });
}

void DiscoveryService::stop() {
  if (!impl_->background.running()) return;
  impl_->background.stop();
  impl_->loop.retire_all();
}

}  // namespace rolter
