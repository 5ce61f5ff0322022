#include "server/worker_tenancy.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>

#include "common/random.h"
#include "config/secret_file.h"
#include "config/url.h"
#include "limits/local_limiter.h"
#include "limits/redis/redis_limiter.h"

namespace rolter {
namespace {

// What a RedisLimiter is made from: a change of any of these makes a new one.
std::string redis_settings(const LimitsConfig& l) {
  return l.redis_url + '\n' + l.redis_password_env + '\n' + l.redis_password_file + '\n' +
         l.redis_ca_file + '\n' + std::to_string(l.timeout_ms) + '\n' + l.on_backend_error;
}

std::string redis_password(const LimitsConfig& l) {
  if (!l.redis_password_env.empty()) {
    const char* value = std::getenv(l.redis_password_env.c_str());
    return value == nullptr ? std::string() : std::string(value);
  }
  if (!l.redis_password_file.empty()) {
    auto secret = read_secret_file(l.redis_password_file);
    if (secret) return *secret;
    spdlog::error("limits.redis_password_file: {}", secret.error());
  }
  return {};
}

}  // namespace

WorkerTenancy::WorkerTenancy(asio::io_context& io, unsigned worker_index)
    : io_(io), worker_index_(worker_index) {
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%016llx-%u-",
                static_cast<unsigned long long>(default_random().next_u64()), worker_index);
  id_prefix_ = prefix;
}

WorkerTenancy::~WorkerTenancy() = default;

Limiter* WorkerTenancy::limiter_for(const TenancyServices& services, const LimitsConfig& limits) {
  if (limits.backend != "redis") return services.local;
  const std::string settings = redis_settings(limits);
  if (redis_ != nullptr && settings == redis_made_from_) return redis_.get();
  auto address = parse_redis_url(limits.redis_url);
  if (!address) return services.local;  // validated at load; never here
  RedisLimiterOptions options;
  options.connection.host = address->host;
  options.connection.port = address->port;
  options.connection.unix_path = address->socket_path;
  options.connection.tls = address->tls;
  options.connection.ca_file = limits.redis_ca_file;
  options.connection.server_name = address->host;  // SNI and the name the certificate must bear
  options.connection.db = static_cast<int>(address->db);
  options.connection.password = redis_password(limits);
  options.connection.command_timeout = std::chrono::milliseconds(limits.timeout_ms);
  options.on_backend_error =
      limits.on_backend_error == "closed" ? BackendErrorPolicy::kClosed : BackendErrorPolicy::kOpen;
  redis_ = std::make_unique<RedisLimiter>(io_.get_executor(), std::move(options));
  redis_made_from_ = settings;
  return redis_.get();
}

TenancyScope WorkerTenancy::scope(const TenancyServices& services, const Snapshot& snapshot,
                                  const ApiKey* key, Metrics* metrics, int64_t started_ms) {
  const Config& config = snapshot.config();
  const bool limited = key != nullptr && !key->rules.empty() && services.local != nullptr;
  return TenancyScope{
      .limiter = limited ? limiter_for(services, config.limits) : nullptr,
      .ledger = services.ledger,
      .ledger_shard = worker_index_,
      .metrics = metrics,
      .key = key,
      .now_ms = started_ms,
      // Only an in-flight lease needs one: a request merely recorded is not named.
      .request_id = limited ? id_prefix_ + std::to_string(++next_id_) : std::string(),
      .default_output_tokens = config.limits.default_output_tokens,
      .lease_ms = config.server.upstream_timeout_ms,
      .per_key_metrics = config.metrics.per_key,
  };
}

}  // namespace rolter
