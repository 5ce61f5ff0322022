#include "control/admin_api.h"

#include <prometheus/counter.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>

#include "balance/policy/policy_thresholds.h"
#include "common/percent_decode.h"
#include "config/loader.h"
#include "control/catalog.h"
#include "control/usage_query.h"
#include "http/tokens.h"
#include "observe/metrics.h"
#include "ui/embedded_assets.h"
#include "usage/usage_json.h"

namespace rolter {
namespace {

using json = nlohmann::json;

constexpr std::string_view kApi = "/api/v1/";
constexpr std::string_view kInternal = "/internal/";
// SPEC §10: telemetry older than 60 s is not shown; rows older than an hour are pruned.
constexpr int64_t kTelemetryFreshMs = 60'000;
constexpr int64_t kTelemetryKeepMs = 3'600'000;
constexpr int64_t kPruneEveryMs = 60'000;
// A node that has not been heard from for this long is "stale", then "down". Nodes poll
// continuously and post stats every few seconds.
constexpr int64_t kNodeStaleMs = 15'000;
constexpr int64_t kNodeDownMs = 60'000;
constexpr size_t kMaxInternalBody = 4 << 20;
constexpr size_t kMaxApiBody = 1 << 20;

int role_rank(std::string_view role) {
  if (role == "superadmin") return 2;
  if (role == "admin") return 1;
  return 0;
}

ControlResponse answer(unsigned status, const json& body) {
  ControlResponse r;
  r.status = status;
  // Names from a request's path may hold any bytes: never let them fail the answer.
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

ControlResponse fail(const ControlError& e) {
  json err{{"message", e.message},
           {"type", e.type},
           {"param", e.param.empty() ? json(nullptr) : json(e.param)},
           {"code", e.code.empty() ? json(nullptr) : json(e.code)}};
  return answer(e.status, json{{"error", err}});
}

// An error of the API's own, its type following its status.
ControlError control_error(unsigned status, std::string message, std::string param = "",
                           std::string code = "") {
  ControlError e;
  e.status = status;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  if (status == 401) e.type = "authentication_error";
  if (status == 403) e.type = "permission_error";
  if (status == 404) e.type = "not_found_error";
  if (status >= 500) e.type = "api_error";
  return e;
}

ControlResponse fail(unsigned status, std::string message, std::string param = "",
                     std::string code = "") {
  return fail(control_error(status, std::move(message), std::move(param), std::move(code)));
}

// The value of `name` in a query string, decoded; "" when absent.
std::string query_param(std::string_view query, std::string_view name) {
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    const auto eq = pair.find('=');
    if (pair.substr(0, eq) == name) {
      return eq == std::string_view::npos
                 ? ""
                 : percent_decode(pair.substr(eq + 1), /*plus_is_space=*/true);
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return "";
}

std::optional<uint64_t> parse_u64(std::string_view text) {
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

bool valid_node_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
           c == ':';
  });
}

ControlResponse not_an_object() {
  return fail(400, "expected a JSON object (nested at most 32 deep)", "", "invalid_json");
}

json listed(const ListedEntity& e) {
  json j = e.json;
  j["read_only"] = e.read_only;
  return j;
}

// How deeply a request's JSON may nest: rolter.toml's tables go four deep, and the converters
// recurse once per level, so a body of a million '[' must not reach them.
constexpr int kMaxJsonDepth = 32;

// The deepest nesting of objects and arrays in `text`, counted outside strings; stops counting
// past kMaxJsonDepth.
int json_depth(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size() && deepest <= kMaxJsonDepth; ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return deepest;
}

json parse_body(std::string_view body, bool& ok) {
  if (json_depth(body) > kMaxJsonDepth) {
    ok = false;
    return nullptr;
  }
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  ok = !j.is_discarded();
  return j;
}

}  // namespace

struct AdminApi::Instruments {
  prometheus::Family<prometheus::Counter>* requests = nullptr;
  prometheus::Family<prometheus::Counter>* polls = nullptr;
  prometheus::Counter* internal_refused = nullptr;
};

AdminApi::AdminApi(ControlPlane& control, Metrics* metrics, std::string ui_dir)
    : control_(control),
      dashboard_({.assets = embedded_assets(), .dev_dir = std::move(ui_dir)}),
      instruments_(std::make_unique<Instruments>()) {
  if (metrics == nullptr) return;
  auto& registry = metrics->registry();
  instruments_->requests = &prometheus::BuildCounter()
                                .Name("rolter_admin_api_requests_total")
                                .Help("Admin API requests by method and status class")
                                .Register(registry);
  instruments_->polls = &prometheus::BuildCounter()
                             .Name("rolter_snapshot_polls_total")
                             .Help("Gateway snapshot polls answered, by result")
                             .Register(registry);
  instruments_->internal_refused =
      &prometheus::BuildCounter()
           .Name("rolter_internal_api_refused_total")
           .Help("Internal API requests refused for a missing or wrong node token")
           .Register(registry)
           .Add({});
}

AdminApi::~AdminApi() = default;

bool AdminApi::serves(std::string_view path) const {
  return path.starts_with(kApi) || path == "/api/v1" || path.starts_with(kInternal) ||
         Dashboard::serves(path);
}

ControlResponse AdminApi::handle(const ControlRequest& request) {
  const auto q = request.target.find('?');
  const std::string_view path = request.target.substr(0, q);
  const std::string_view query =
      q == std::string_view::npos ? std::string_view() : request.target.substr(q + 1);
  if (Dashboard::serves(path)) return dashboard_.serve(request, path);
  ControlResponse r;
  try {
    r = path.starts_with(kInternal) ? internal(request, path, query) : api(request, path, query);
  } catch (const std::exception& e) {
    // A request the handlers did not foresee (the fuzz target looks for them) is answered, not
    // allowed to take down the worker.
    spdlog::error("admin API: {} {}: {}", request.method, path, e.what());
    r = fail(500, "internal error");
  }
  if (instruments_->requests != nullptr && path.starts_with("/api/")) {
    const std::string status_class = std::to_string(r.status / 100) + "xx";
    instruments_->requests
        ->Add({{"method", std::string(request.method)}, {"code_class", status_class}})
        .Increment();
  }
  return r;
}

ControlResponse AdminApi::internal(const ControlRequest& request, std::string_view path,
                                   std::string_view query) {
  if (!control_.node_token_ok(bearer_token(request.authorization))) {
    if (instruments_->internal_refused != nullptr) instruments_->internal_refused->Increment();
    return fail(401,
                "the internal API needs the node token (Authorization: Bearer, from "
                "ROLTER_NODE_TOKEN)");
  }
  const std::string node_id(request.header("x-rolter-node-id"));
  if (!valid_node_id(node_id)) {
    return fail(400, "missing or malformed x-rolter-node-id", "x-rolter-node-id");
  }
  const uint64_t serving = parse_u64(request.header("x-rolter-snapshot-version")).value_or(0);
  touch_node(node_id, request.header("x-rolter-node-version"), serving);
  if (path == "/internal/snapshot") {
    if (request.method != "GET") return fail(405, "GET only");
    const std::string seen_text = query_param(query, "version");
    const auto seen = seen_text.empty() ? std::optional<uint64_t>(0) : parse_u64(seen_text);
    if (!seen) return fail(400, "version must be an unsigned integer", "version");
    auto count = [&](const char* result) {
      if (instruments_->polls != nullptr) {
        instruments_->polls->Add({{"result", result}}).Increment();
      }
    };
    const uint64_t version = control_.version();
    if (*seen != version) {
      ControlResponse r;
      r.content_type = "application/toml";
      r.body = control_.document();
      r.headers.emplace_back("x-rolter-snapshot-version", std::to_string(version));
      count("updated");
      return r;
    }
    ControlResponse r;
    r.status = 304;
    r.headers.emplace_back("x-rolter-snapshot-version", std::to_string(version));
    if (!request.after_wait && !control_.shutting_down()) {
      r.wait_after = version;
    } else {
      count("not_modified");
    }
    return r;
  }
  if (request.method != "POST") return fail(405, "POST only");
  if (request.body.size() > kMaxInternalBody) return fail(413, "body too large");
  if (path == "/internal/v1/usage") {
    if (json_depth(request.body) > kMaxJsonDepth) return not_an_object();
    auto rows = parse_usage_rows(request.body);
    if (!rows) return fail(400, rows.error(), "rows", "invalid_usage");
    auto accepted = ingest_usage(*rows);
    if (!accepted) return fail(accepted.error());
    return answer(200, json{{"accepted", *accepted}});
  }
  bool ok = false;
  json body = parse_body(request.body, ok);
  if (!ok || !body.is_object()) return not_an_object();
  if (path == "/internal/adaptive-telemetry") {
    auto accepted = ingest_adaptive_telemetry(node_id, body);
    if (!accepted) return fail(accepted.error());
    return answer(200, json{{"accepted", *accepted}});
  }
  if (path == "/internal/node-stats") {
    if (auto put = ingest_node_stats(node_id, body); !put) return fail(put.error());
    return answer(200, json{{"accepted", true}});
  }
  return fail(404, "no such endpoint: " + std::string(path));
}

void AdminApi::touch_node(const std::string& node_id, std::string_view node_version,
                          uint64_t snapshot_version) {
  Store* store = control_.store();
  if (store == nullptr) return;
  auto touched =
      store->touch_node(node_id, std::string(node_version), snapshot_version, control_.now_ms());
  if (!touched) spdlog::warn("store: cannot record node {}: {}", node_id, touched.error());
}

tl::expected<size_t, ControlError> AdminApi::ingest_adaptive_telemetry(const std::string& node_id,
                                                                       const json& body) {
  auto error = [](unsigned status, std::string message, std::string param = "") {
    return tl::unexpected(control_error(status, std::move(message), std::move(param)));
  };
  Store* store = control_.store();
  if (store == nullptr) return error(503, "this control plane has no store");
  if (!body.is_object() || !body.contains("routes") || !body["routes"].is_array()) {
    return error(400, "expected a list", "routes");
  }
  const int64_t now = control_.now_ms();
  std::vector<TelemetryRow> rows;
  for (const auto& route : body["routes"]) {
    if (!route.is_object() || !route.contains("route") || !route["route"].is_string()) {
      return error(400, "every entry needs a string route", "routes");
    }
    rows.push_back({node_id, route["route"].get<std::string>(), now, route.dump()});
  }
  if (auto added = store->add_telemetry(rows); !added) {
    return error(500, "the store failed: " + added.error());
  }
  if (now - last_prune_ms_.load() >= kPruneEveryMs) {
    last_prune_ms_.store(now);
    if (auto pruned = store->prune_telemetry(now - kTelemetryKeepMs); !pruned) {
      spdlog::warn("store: cannot prune telemetry: {}", pruned.error());
    }
  }
  return rows.size();
}

tl::expected<void, ControlError> AdminApi::ingest_node_stats(const std::string& node_id,
                                                             const json& body) {
  Store* store = control_.store();
  if (store == nullptr)
    return tl::unexpected(control_error(503, "this control plane has no store"));
  if (auto put = store->put_node_stats(node_id, body.dump(), control_.now_ms()); !put) {
    return tl::unexpected(control_error(500, "the store failed: " + put.error()));
  }
  return {};
}

tl::expected<size_t, ControlError> AdminApi::ingest_usage(const std::vector<UsageRow>& rows) {
  Store* store = control_.store();
  if (store == nullptr)
    return tl::unexpected(control_error(503, "this control plane has no store"));
  if (auto added = store->add_usage(rows); !added) {
    return tl::unexpected(control_error(500, "the store failed: " + added.error()));
  }
  return rows.size();
}

namespace {

// One admin API call, its caller authenticated: what the handlers of the route table read.
struct ApiCall {
  ControlPlane& control;
  const Principal& principal;
  std::string_view method;
  std::string_view path;  // as requested, for messages
  std::string name;       // the percent-decoded segment after the resource; "" = none
  std::string_view query;
  std::string_view body;

  bool read() const { return method == "GET"; }
  // The body as a JSON object, or the 400 to answer.
  tl::expected<json, ControlResponse> object() const {
    bool ok = false;
    json j = parse_body(body, ok);
    if (!ok || !j.is_object()) return tl::unexpected(not_an_object());
    return j;
  }
};

using ApiHandler = ControlResponse (*)(const ApiCall&);

// Which names a resource takes after its segment: none, any (an entity's), or one sub-resource.
enum class Names : uint8_t { kNone, kAny, kNodes };

// One resource of /api/v1: its segment, the names it takes, the lowest role that may read it and
// that may change it (0 viewer, 1 admin, 2 superadmin), and its handler, which answers every
// method (405 for those it does not take).
struct ApiRoute {
  std::string_view segment;
  Names names;
  int read_role;
  int write_role;
  ApiHandler handler;
};

// The dashboard's rules, from the code the rest of rolter uses: the routes' catalog, the strategy
// picker's list, and the policy-mode flip thresholds. Any role may read them.
ControlResponse strategies(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  return answer(200, strategies_json());
}

ControlResponse policy_thresholds(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  const std::string targets = query_param(call.query, "targets");
  const std::string ratios = query_param(call.query, "ratios");
  auto counts = parse_target_range(targets.empty() ? "2" : targets);
  if (!counts) return fail(400, counts.error(), "targets");
  auto parsed = parse_ratios(ratios.empty() ? "1:1" : ratios);
  if (!parsed) return fail(400, parsed.error(), "ratios");
  // The very text `rolter policy-thresholds --json` prints, read back.
  json rows = json::parse(render_threshold_json(compute_thresholds(*counts, *parsed)));
  return answer(200, json{{"object", "list"}, {"data", std::move(rows)}});
}

// The catalog: the running document as the data plane reads it.
ControlResponse catalog(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  auto loaded = load_config_text(call.control.document(), "published configuration");
  if (!loaded) return fail(500, "the published configuration does not load");
  std::map<std::pair<std::string, std::string>, bool> read_only;
  for (EntityKind kind : {EntityKind::kRoute, EntityKind::kProviderGroup}) {
    for (const auto& e : call.control.entities(kind)) {
      read_only[{std::string(entity_kind_name(kind)), e.name}] = e.read_only;
    }
  }
  return answer(200,
                catalog_json(loaded->config, [&](std::string_view kind, const std::string& name) {
                  auto it = read_only.find({std::string(kind), name});
                  return it != read_only.end() && it->second;
                }));
}

ControlResponse whoami(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  return answer(200, json{{"name", call.principal.name}, {"role", call.principal.role}});
}

// /providers, /routes, /provider-groups, /keys: list and create; read, replace and delete one.
template <EntityKind kKind>
ControlResponse collection(const ApiCall& call) {
  ControlPlane& control = call.control;
  if (call.name.empty()) {
    if (call.read()) {
      json data = json::array();
      for (const auto& e : control.entities(kKind)) data.push_back(listed(e));
      return answer(200, json{{"object", "list"}, {"data", data}});
    }
    if (call.method != "POST") return fail(405, "GET or POST");
    auto j = call.object();
    if (!j) return j.error();
    if constexpr (kKind == EntityKind::kKey) {
      auto created = control.create_key(std::move(*j), call.principal);
      if (!created) return fail(created.error());
      json out = listed(created->first);
      out["key"] = created->second;  // shown once
      return answer(201, out);
    } else {
      const std::string name_key(entity_name_key(kKind));
      if (!j->contains(name_key) || !(*j)[name_key].is_string()) {
        return fail(400, "missing required key (a string)", name_key);
      }
      const std::string new_name = (*j)[name_key].template get<std::string>();
      auto created = control.put_entity(kKind, new_name, std::move(*j), true, call.principal);
      if (!created) return fail(created.error());
      return answer(201, listed(*created));
    }
  }
  if (call.read()) {
    auto e = control.entity(kKind, call.name);
    if (!e) {
      return fail(404,
                  std::string(entity_kind_name(kKind)) + " '" + call.name + "' does not exist");
    }
    return answer(200, listed(*e));
  }
  if (call.method == "PUT") {
    auto j = call.object();
    if (!j) return j.error();
    auto updated = control.put_entity(kKind, call.name, std::move(*j), false, call.principal);
    if (!updated) return fail(updated.error());
    return answer(200, listed(*updated));
  }
  if (call.method == "DELETE") {
    auto removed = control.delete_entity(kKind, call.name, call.principal);
    if (!removed) return fail(removed.error());
    return answer(200, json{{"deleted", true}, {"name", call.name}});
  }
  return fail(405, "GET, PUT or DELETE");
}

json adaptive_policy_answer(ControlPlane& control, json policy) {
  return json{{"policy", std::move(policy)},
              {"affected_routes", control.adaptive_routes()},
              {"version", control.version()}};
}

ControlResponse adaptive_policy(const ApiCall& call) {
  if (call.read()) {
    return answer(200, adaptive_policy_answer(call.control, call.control.adaptive_policy()));
  }
  if (call.method != "PUT") return fail(405, "GET or PUT");
  auto j = call.object();
  if (!j) return j.error();
  auto policy = call.control.put_adaptive_policy(*j, call.principal);
  if (!policy) return fail(policy.error());
  return answer(200, adaptive_policy_answer(call.control, *policy));
}

// What a store holds, read; a parsed JSON text or null when it does not parse.
json stored_json(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

ControlResponse adaptive_telemetry(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  Store* store = call.control.store();
  if (store == nullptr) return fail(503, "this control plane has no store");
  const int64_t now = call.control.now_ms();
  auto rows = store->latest_telemetry(now - kTelemetryFreshMs);
  if (!rows) return fail(500, "the store failed: " + rows.error());
  json data = json::array();
  for (const auto& row : *rows) {
    data.push_back(json{{"node_id", row.node_id},
                        {"route", row.route},
                        {"at_ms", row.at_ms},
                        {"age_seconds", static_cast<double>(now - row.at_ms) / 1000.0},
                        {"sample", stored_json(row.json)}});
  }
  return answer(200, json{{"object", "list"}, {"data", data}});
}

ControlResponse cluster_nodes(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  Store* store = call.control.store();
  if (store == nullptr) return fail(503, "this control plane has no store");
  auto nodes = store->nodes();
  if (!nodes) return fail(500, "the store failed: " + nodes.error());
  const int64_t now = call.control.now_ms();
  json data = json::array();
  for (const auto& n : *nodes) {
    const int64_t age = now - n.last_contact_ms;
    data.push_back(json{{"node_id", n.node_id},
                        {"version", n.version},
                        {"snapshot_version", n.snapshot_version},
                        {"last_contact_ms", n.last_contact_ms},
                        {"seconds_since_contact", static_cast<double>(age) / 1000.0},
                        {"health", age < kNodeStaleMs  ? "healthy"
                                   : age < kNodeDownMs ? "stale"
                                                       : "down"},
                        {"stats", stored_json(n.stats_json)}});
  }
  return answer(
      200, json{{"object", "list"}, {"snapshot_version", call.control.version()}, {"data", data}});
}

ControlResponse audit(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  Store* store = call.control.store();
  if (store == nullptr) return fail(503, "this control plane has no store");
  const int limit = static_cast<int>(
      std::min<uint64_t>(parse_u64(query_param(call.query, "limit")).value_or(100), 1000));
  const int offset = static_cast<int>(
      std::min<uint64_t>(parse_u64(query_param(call.query, "offset")).value_or(0), 1u << 30));
  auto rows = store->audit(query_param(call.query, "q"), limit, offset);
  if (!rows) return fail(500, "the store failed: " + rows.error());
  json data = json::array();
  for (const auto& a : *rows) {
    data.push_back(json{{"id", a.id},
                        {"at_ms", a.at_ms},
                        {"actor", a.actor},
                        {"action", a.action},
                        {"subject", a.subject},
                        {"before", stored_json(a.before_json)},
                        {"after", stored_json(a.after_json)}});
  }
  return answer(200, json{{"object", "list"}, {"data", data}});
}

// /usage: the stored usage, summed (control/usage_query.h); /usage/stats: the writes it cost.
ControlResponse usage(const ApiCall& call) {
  if (!call.read()) return fail(405, "GET only");
  Store* store = call.control.store();
  if (store == nullptr) return fail(503, "this control plane has no store");
  if (call.name == "stats") {
    return answer(200, json{{"store_writes", store->usage_writes()}});
  }
  if (!call.name.empty()) return fail(404, "no such endpoint: " + std::string(call.path));
  auto query =
      parse_usage_query([&](std::string_view name) { return query_param(call.query, name); });
  if (!query) return fail(query.error());
  auto rows = store->usage(*query);
  if (!rows) return fail(500, "the store failed: " + rows.error());
  return answer(200, usage_answer(*query, *rows));
}

ControlResponse admin_tokens(const ApiCall& call) {
  Store* store = call.control.store();
  if (store == nullptr) return fail(503, "this control plane has no store");
  if (call.name.empty() && call.read()) {
    auto tokens = store->admin_tokens();
    if (!tokens) return fail(500, "the store failed: " + tokens.error());
    json data = json::array();
    for (const auto& t : *tokens) {
      data.push_back(json{{"id", t.id},
                          {"name", t.name},
                          {"role", t.role},
                          {"created_ms", t.created_ms},
                          {"revoked", t.revoked}});
    }
    return answer(200, json{{"object", "list"}, {"data", data}});
  }
  if (call.name.empty() && call.method == "POST") {
    auto j = call.object();
    if (!j) return j.error();
    if (!j->contains("name") || !(*j)["name"].is_string()) {
      return fail(400, "missing required key (a string)", "name");
    }
    if (!j->contains("role") || !(*j)["role"].is_string()) {
      return fail(400, "missing required key: superadmin, admin or viewer", "role");
    }
    auto created = call.control.create_admin_token((*j)["name"].get<std::string>(),
                                                   (*j)["role"].get<std::string>(), call.principal);
    if (!created) return fail(created.error());
    return answer(201, json{{"id", created->first.id},
                            {"name", created->first.name},
                            {"role", created->first.role},
                            {"token", created->second}});  // shown once
  }
  if (!call.name.empty() && call.method == "DELETE") {
    auto revoked = call.control.revoke_admin_token(call.name, call.principal);
    if (!revoked) return fail(revoked.error());
    return answer(200, json{{"revoked", true}, {"id", call.name}});
  }
  return fail(405, "GET or POST on /api/v1/admin-tokens, DELETE on /api/v1/admin-tokens/{id}");
}

constexpr ApiRoute kApiRoutes[] = {
    {"catalog", Names::kNone, 0, 0, catalog},
    {"strategies", Names::kNone, 0, 0, strategies},
    {"policy-thresholds", Names::kNone, 0, 0, policy_thresholds},
    {"whoami", Names::kNone, 0, 0, whoami},
    {"providers", Names::kAny, 0, 1, collection<EntityKind::kProvider>},
    {"routes", Names::kAny, 0, 1, collection<EntityKind::kRoute>},
    {"provider-groups", Names::kAny, 0, 1, collection<EntityKind::kProviderGroup>},
    {"keys", Names::kAny, 0, 1, collection<EntityKind::kKey>},
    {"teams", Names::kAny, 0, 1, collection<EntityKind::kTeam>},
    {"adaptive-routing-policy", Names::kNone, 2, 2, adaptive_policy},
    {"adaptive-routing-telemetry", Names::kNone, 2, 2, adaptive_telemetry},
    {"cluster", Names::kNodes, 0, 0, cluster_nodes},
    {"audit", Names::kNone, 0, 0, audit},
    {"usage", Names::kAny, 0, 0, usage},
    {"admin-tokens", Names::kAny, 2, 2, admin_tokens},
};

bool takes(Names names, const std::string& name) {
  switch (names) {
    case Names::kNone:
      return name.empty();
    case Names::kAny:
      return true;
    case Names::kNodes:
      return name == "nodes";
  }
  return false;
}

}  // namespace

ControlResponse AdminApi::api(const ControlRequest& request, std::string_view path,
                              std::string_view query) {
  const auto principal = control_.admin(bearer_token(request.authorization));
  if (!principal) {
    return request.authorization.empty()
               ? fail(401, "missing admin token: send 'Authorization: Bearer <token>'")
               : fail(401, "invalid admin token", "", "invalid_token");
  }
  if (request.body.size() > kMaxApiBody) return fail(413, "body too large (1 MiB at most)");
  std::string_view rest = path.size() > kApi.size() ? path.substr(kApi.size()) : "";
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  const auto slash = rest.find('/');
  const std::string_view head = rest.substr(0, slash);
  const ApiCall call{
      .control = control_,
      .principal = *principal,
      .method = request.method,
      .path = path,
      .name = slash == std::string_view::npos ? "" : percent_decode(rest.substr(slash + 1)),
      .query = query,
      .body = request.body,
  };
  for (const ApiRoute& route : kApiRoutes) {
    if (head != route.segment || !takes(route.names, call.name)) continue;
    const int wanted = call.read() ? route.read_role : route.write_role;
    if (role_rank(principal->role) < wanted) {
      return fail(403,
                  "role '" + principal->role + "' may not " + std::string(call.method) + " " +
                      std::string(path),
                  "", "insufficient_role");
    }
    return route.handler(call);
  }
  return fail(404, "no such endpoint: " + std::string(path));
}

}  // namespace rolter
