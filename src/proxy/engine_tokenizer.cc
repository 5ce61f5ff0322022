#include "proxy/engine_tokenizer.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>


#include <chrono>
#include <limits>
#include <variant>

#include "balance/balancer_factory.h"
#include "common/json_escape.h"
#include "fleet/availability.h"
#include "upstream/one_shot.h"

namespace rolter {
namespace {

namespace http = beast::http;
namespace ondemand = simdjson::ondemand;

// The raw JSON of `field` in the top-level object of `body` when it is an array (or, with
// `allow_string`, a string), as a view into `body`. Views into the padded copy are mapped back to
// `body`, which has the same bytes at the same offsets.
std::optional<std::string_view> raw_field(std::string_view body, std::string_view field,
                                          bool allow_string) {
  const simdjson::padded_string padded(body);
  ondemand::parser parser;
  ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return std::nullopt;
  ondemand::object object;
  if (doc.get_object().get(object) != simdjson::SUCCESS) return std::nullopt;
  ondemand::value value;
  if (object.find_field_unordered(field).get(value) != simdjson::SUCCESS) return std::nullopt;
  ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) return std::nullopt;
  std::string_view raw;
  if (type == ondemand::json_type::array) {
    ondemand::array array;
    if (value.get_array().get(array) != simdjson::SUCCESS) return std::nullopt;
    if (array.raw_json().get(raw) != simdjson::SUCCESS) return std::nullopt;
  } else if (type == ondemand::json_type::string && allow_string) {
    // Validates the string (escapes, UTF-8) before its raw token is copied.
    std::string_view unescaped;
    if (value.get_string().get(unescaped) != simdjson::SUCCESS) return std::nullopt;
    raw = value.raw_json_token();
  } else {
    return std::nullopt;
  }
  // raw_json_token() runs up to the next structural character: trailing whitespace included.
  while (!raw.empty() &&
         (raw.back() == ' ' || raw.back() == '\t' || raw.back() == '\n' || raw.back() == '\r')) {
    raw.remove_suffix(1);
  }
  const size_t offset = static_cast<size_t>(raw.data() - padded.data());
  if (offset > body.size() || raw.size() > body.size() - offset) return std::nullopt;
  return body.substr(offset, raw.size());
}

}  // namespace

bool wants_engine_tokens(ApiKind kind, const RouteContext& ctx, const RoutePool& pool) {
  if (ctx.token_ids) return false;
  if (kind != ApiKind::kChatCompletions && kind != ApiKind::kCompletions) return false;
  return strategy_reads_token_ids(pool.strategy) || pool.prefill != nullptr;
}

std::optional<size_t> choose_tokenize_candidate(const RoutePool& pool, const ApiKey* key,
                                                Clock::TimePoint now,
                                                const BreakerParams& breaker) {
  const Loads loads = pool.loads();
  std::optional<size_t> best;
  uint32_t best_load = std::numeric_limits<uint32_t>::max();
  for (size_t i = 0; i < pool.candidates.size(); ++i) {
    const Candidate& c = pool.candidates[i];
    if (!c.provider->tokenize_engine) continue;
    if (key != nullptr && !key->allows_provider(c.provider->name)) continue;
    if (availability(c.state->health, now, breaker) != OutReason::kNone) continue;
    const uint32_t load = loads[i];
    if (!best || load < best_load) {
      best = i;
      best_load = load;
    }
  }
  return best;
}

std::optional<std::string> tokenize_request_body(ApiKind kind, std::string_view client_body,
                                                 std::string_view model) {
  const bool chat = kind == ApiKind::kChatCompletions;
  if (!chat && kind != ApiKind::kCompletions) return std::nullopt;
  const std::string_view field = chat ? "messages" : "prompt";
  const auto raw = raw_field(client_body, field, /*allow_string=*/!chat);
  if (!raw) return std::nullopt;
  std::string out;
  out.reserve(raw->size() + model.size() + 32);
  out.append(R"({"model":)");
  append_json_string(out, model);
  out.append(",\"");
  out.append(field);
  out.append("\":");
  out.append(*raw);
  out.push_back('}');
  return out;
}

tl::expected<std::vector<uint32_t>, std::string> read_tokenize_reply(std::string_view body) {
  const simdjson::padded_string padded(body);
  ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  ondemand::array array;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(object) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the reply is not a JSON object"));
  }
  if (object.find_field_unordered("tokens").get_array().get(array) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the reply has no \"tokens\" array"));
  }
  std::vector<uint32_t> ids;
  for (auto element : array) {
    uint64_t id = 0;
    if (element.get_uint64().get(id) != simdjson::SUCCESS ||
        id > std::numeric_limits<uint32_t>::max()) {
      return tl::unexpected(std::string("\"tokens\" holds something other than a 32-bit id"));
    }
    ids.push_back(static_cast<uint32_t>(id));
  }
  return ids;
}

Task<TokenizeResult> call_tokenize(const Candidate& candidate, std::string body,
                                   ClientTls tls) {
  using std::chrono::steady_clock;
  const Provider& provider = *candidate.provider;
  const Endpoint& endpoint = *candidate.endpoint;
  const auto started = steady_clock::now();
  OneShotRequest request =
      one_shot_request(http::verb::post, endpoint, "/tokenize", "rolter-tokenize");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json");
  if (!provider.api_key.empty()) {
    if (provider.kind == ProviderKind::kAnthropic) {
      request.set("x-api-key", provider.api_key);
    } else {
      request.set(http::field::authorization, "Bearer " + provider.api_key);
    }
  }
  request.body() = std::move(body);
  const OneShotResult answer =
      co_await one_shot(endpoint, candidate.state->id, tls, std::move(request),
                        {.timeout = provider.tokenize_timeout,
                         .max_body_bytes = kMaxTokenizeReplyBytes});
  TokenizeResult result;
  if (!answer) {
    result.outcome = answer.error().timed_out ? Metrics::TokenizeOutcome::kTimeout
                                              : Metrics::TokenizeOutcome::kError;
    result.error = answer.error().message;
  } else if (answer->result() != http::status::ok) {
    result.error = status_text(*answer);
  } else if (auto tokens = read_tokenize_reply(answer->body()); !tokens) {
    result.error = std::move(tokens.error());
  } else {
    result.outcome = Metrics::TokenizeOutcome::kOk;
    result.tokens = std::move(*tokens);
  }
  const double seconds = std::chrono::duration<double>(steady_clock::now() - started).count();
  Metrics::observe_tokenize(provider.tokenize_instruments, result.outcome, seconds);
  co_return result;
}

Task<std::optional<std::vector<uint32_t>>> engine_token_ids(EngineTokenizeRequest request) {
  const RoutePool& route_pool = *request.route->pool;
  if (!wants_engine_tokens(request.kind, *request.ctx, route_pool)) co_return std::nullopt;
  // A disaggregated route's decode engines first, else its prefill engines.
  const RoutePool* pool = &route_pool;
  auto index = choose_tokenize_candidate(*pool, request.key, request.clock->now(),
                                         request.snapshot->breaker());
  if (!index && route_pool.prefill != nullptr) {
    pool = route_pool.prefill.get();
    index = choose_tokenize_candidate(*pool, request.key, request.clock->now(),
                                      request.snapshot->breaker());
  }
  if (!index) co_return std::nullopt;
  const Candidate& candidate = pool->candidates[*index];
  const ResolvedRoute asked{.pool = pool, .requested_model = request.route->requested_model};
  auto body = tokenize_request_body(request.kind, request.body, asked.upstream_model(*index));
  if (!body) co_return std::nullopt;
  TokenizeResult result = co_await call_tokenize(candidate, std::move(*body), request.tls);
  if (result.outcome != Metrics::TokenizeOutcome::kOk) {
    spdlog::debug("tokenize: {} for route '{}': {}; routing without token ids",
                  candidate.explain_name, route_pool.name, result.error);
    co_return std::nullopt;
  }
  co_return std::move(result.tokens);
}

}  // namespace rolter
