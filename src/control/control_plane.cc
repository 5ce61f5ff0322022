#include "control/control_plane.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "control/secrets.h"
#include "control/toml_json.h"
#include "balance/strategy_names.h"

namespace rolter {
namespace {

using json = nlohmann::json;

constexpr std::string_view kPolicySetting = "adaptive_routing_policy";
constexpr std::string_view kVersionSetting = "snapshot_version";
constexpr std::string_view kDigestSetting = "snapshot_digest";
// Key fields only the control plane writes: a key's secret never comes from a request.
constexpr std::string_view kKeySecretFields[] = {"key_env", "key_sha256", "key_salt"};
constexpr std::string_view kPolicyKeys[] = {"enabled",     "latency_weight",    "cost_weight",
                                            "load_weight", "exploration_ratio", "min_samples"};

ControlError error(unsigned status, std::string message, std::string param = "",
                   std::string code = "", std::string type = "") {
  ControlError e;
  e.status = status;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  if (!type.empty()) {
    e.type = std::move(type);
  } else if (status >= 500) {
    e.type = "api_error";
  } else if (status == 403) {
    e.type = "permission_error";
  } else if (status == 404) {
    e.type = "not_found_error";
  }
  return e;
}

ControlError store_error(const std::string& what) {
  spdlog::error("store: {}", what);
  return error(500, "the store failed: " + what, "", "store_error");
}

tl::expected<std::string, std::string> read_file(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return tl::unexpected(path + ": cannot open");
  std::string text;
  char buffer[8192];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof buffer, file)) > 0) text.append(buffer, n);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed) return tl::unexpected(path + ": cannot read");
  return text;
}

json policy_json(const AdaptiveRoutingConfig& p) {
  return json{{"enabled", p.enabled},
              {"latency_weight", p.latency_weight},
              {"cost_weight", p.cost_weight},
              {"load_weight", p.load_weight},
              {"exploration_ratio", p.exploration_ratio},
              {"min_samples", p.min_samples}};
}

std::string sha256_hex(std::string_view text) { return salted_sha256_hex("", text); }

// The file's tables of one kind, as JSON.
std::vector<ListedEntity> file_entities(const std::string& file_text, EntityKind kind) {
  std::vector<ListedEntity> out;
  if (file_text.empty()) return out;
  try {
    const toml::table root = toml::parse(file_text);
    const auto* array = root[entity_array(kind)].as_array();
    if (array == nullptr) return out;
    for (const auto& element : *array) {
      const auto* table = element.as_table();
      if (table == nullptr) continue;
      ListedEntity e{kind, (*table)[entity_name_key(kind)].value_or(std::string()),
                     toml_to_json(*table), /*read_only=*/true};
      out.push_back(std::move(e));
    }
  } catch (const toml::parse_error&) {
    // The file was validated before it was kept; nothing to list otherwise.
  }
  return out;
}

// Text without control characters that JSON can carry (valid UTF-8).
bool printable_utf8(const std::string& text) {
  for (unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) return false;
  }
  try {
    (void)json(text).dump();
  } catch (const json::exception&) {
    return false;
  }
  return true;
}

std::string kind_action(EntityKind kind) { return std::string(entity_kind_name(kind)); }

}  // namespace

ControlPlane::ControlPlane(Options options) : options_(std::move(options)) {}

ControlPlane::FileStamp ControlPlane::stamp() const {
  struct stat st {};
  if (options_.config_path.empty() || ::stat(options_.config_path.c_str(), &st) != 0) return {};
  return FileStamp{static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                   static_cast<int64_t>(st.st_size), static_cast<uint64_t>(st.st_ino)};
}

bool ControlPlane::file_changed() const {
  if (options_.config_path.empty()) return false;
  MutexLock lock(mu_);
  return stamp() != loaded_stamp_;
}

uint64_t ControlPlane::version() const { return published_version_.load(); }

std::string ControlPlane::document() const {
  MutexLock lock(mu_);
  return doc_.text;
}

std::vector<std::string> ControlPlane::start() {
  MutexLock lock(mu_);
  if (Store* store = options_.store) {
    auto entities = store->entities();
    if (!entities) return {"store: " + entities.error()};
    state_.entities = std::move(*entities);
    auto policy = store->setting(std::string(kPolicySetting));
    auto version = store->setting(std::string(kVersionSetting));
    auto digest = store->setting(std::string(kDigestSetting));
    if (!policy || !version || !digest) return {"store: cannot read the settings"};
    state_.policy = policy->value_or("");
    if (*version) version_ = std::strtoull((*version)->c_str(), nullptr, 10);
    digest_ = digest->value_or("");
    refresh_tokens_locked();
  }
  return reload_locked();
}

std::vector<std::string> ControlPlane::reload_file() {
  MutexLock lock(mu_);
  return reload_locked();
}

std::vector<std::string> ControlPlane::reload_locked() {
  State next = state_;
  next.file_policy = policy_json(AdaptiveRoutingConfig{});
  next.file_text.clear();
  if (!options_.config_path.empty()) {
    loaded_stamp_ = stamp();  // before reading: an edit during the read triggers one more reload
    auto text = read_file(options_.config_path);
    if (!text) return {text.error()};
    auto loaded = load_config_text(*text, options_.config_path);
    if (!loaded) {
      std::vector<std::string> problems;
      for (const auto& e : loaded.error()) problems.push_back(e.to_string());
      return problems;
    }
    for (const auto& warning : loaded->warnings) spdlog::warn("config: {}", warning.to_string());
    next.file_text = std::move(*text);
    next.file_policy = policy_json(loaded->config.adaptive_routing);
  }
  auto done = commit(
      std::move(next), [] { return StoreResult<void>{}; }, std::nullopt);
  if (!done) return {done.error().message};
  return {};
}

tl::expected<void, ControlError> ControlPlane::commit(
    State next, const std::function<StoreResult<void>()>& store_write,
    const std::optional<DocumentOrigin>& subject) {
  auto doc = build_document(next.file_text, next.entities, next.policy);
  if (!doc) return tl::unexpected(error(500, doc.error(), "", "invalid_document"));
  auto loaded = load_config_text(doc->text, "published configuration");
  if (!loaded) {
    // Name the field of the entity being written when the error is in it; otherwise say which
    // other entity (or section) the change broke.
    const ConfigErrors& errors = loaded.error();
    std::optional<TracedError> pick;
    for (const auto& e : errors) {
      TracedError traced = trace_error(e, doc->origins);
      const bool own = subject && traced.origin && traced.origin->kind == subject->kind &&
                       traced.origin->name == subject->name;
      if (own) {
        pick = std::move(traced);
        break;
      }
      if (!pick) pick = std::move(traced);
    }
    const bool own = subject && pick->origin && pick->origin->kind == subject->kind &&
                     pick->origin->name == subject->name;
    if (own) return tl::unexpected(error(400, pick->message, pick->field, "invalid_value"));
    std::string where = pick->field;
    if (pick->origin) {
      where = std::string(entity_kind_name(pick->origin->kind)) + " '" + pick->origin->name + "'" +
              (pick->field.empty() ? "" : ": " + pick->field);
    }
    return tl::unexpected(error(400, where + ": " + pick->message,
                                pick->origin ? std::string(entity_array(pick->origin->kind)) + "[" +
                                                   pick->origin->name + "]" +
                                                   (pick->field.empty() ? "" : "." + pick->field)
                                             : pick->field,
                                "invalid_value"));
  }
  const std::string digest = sha256_hex(doc->text);
  const uint64_t version = digest == digest_ ? std::max<uint64_t>(version_, 1) : version_ + 1;
  std::function<void()> publish_local;
  if (options_.prepare) {
    auto prepared = options_.prepare(doc->text, version);
    if (!prepared) {
      std::string message;
      for (const auto& p : prepared.error()) message += (message.empty() ? "" : "; ") + p;
      return tl::unexpected(error(400, message, "", "invalid_value"));
    }
    publish_local = std::move(*prepared);
  }
  if (auto written = store_write(); !written) return tl::unexpected(store_error(written.error()));
  if (version != version_ && options_.store != nullptr) {
    auto v = options_.store->put_setting(std::string(kVersionSetting), std::to_string(version));
    auto d = options_.store->put_setting(std::string(kDigestSetting), digest);
    if (!v || !d) spdlog::warn("store: cannot record snapshot version {}", version);
  }
  state_ = std::move(next);
  adaptive_routes_.clear();
  for (const auto& route : loaded->config.routes) {
    if (route.strategy == strategy::kAdaptive) adaptive_routes_.push_back(route.name);
  }
  for (const auto& group : loaded->config.provider_groups) {
    if (group.strategy == strategy::kAdaptive) adaptive_routes_.push_back(group.slug + "/*");
  }
  doc_ = std::move(*doc);
  version_ = version;
  digest_ = digest;
  if (publish_local) publish_local();
  publish(version);
  return {};
}

void ControlPlane::publish(uint64_t version) {
  std::vector<std::function<void()>> wake;
  {
    MutexLock lock(waiters_mu_);
    published_version_.store(version);
    for (auto it = waiters_.begin(); it != waiters_.end();) {
      if (it->second.seen != version) {
        wake.push_back(std::move(it->second.wake));
        it = waiters_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto& w : wake) w();
}

uint64_t ControlPlane::on_change(uint64_t seen, std::function<void()> wake) {
  {
    MutexLock lock(waiters_mu_);
    if (published_version_.load() == seen && !shutting_down_.load()) {
      const uint64_t ticket = next_ticket_++;
      waiters_.emplace(ticket, Waiter{seen, std::move(wake)});
      return ticket;
    }
  }
  wake();
  return 0;
}

void ControlPlane::forget(uint64_t ticket) {
  MutexLock lock(waiters_mu_);
  waiters_.erase(ticket);
}

void ControlPlane::shutdown() {
  std::vector<std::function<void()>> wake;
  {
    MutexLock lock(waiters_mu_);
    shutting_down_.store(true);
    for (auto& [ticket, waiter] : waiters_) wake.push_back(std::move(waiter.wake));
    waiters_.clear();
  }
  for (auto& w : wake) w();
}

void ControlPlane::refresh_tokens_locked() {
  if (options_.store == nullptr) return;
  auto tokens = options_.store->admin_tokens();
  if (!tokens) {
    spdlog::error("store: cannot read admin tokens: {}", tokens.error());
    return;
  }
  tokens_ = std::move(*tokens);
}

std::optional<Principal> ControlPlane::admin(std::string_view bearer) const {
  if (bearer.empty()) return std::nullopt;
  if (!options_.admin_token.empty() && equal_secrets(bearer, options_.admin_token)) {
    return Principal{"ROLTER_ADMIN_TOKEN", "superadmin"};
  }
  // "rat-<id>-<secret>": the id (no secret) finds the token; the digest decides.
  constexpr std::string_view kPrefix = "rat-";
  constexpr size_t kIdHex = 16;
  if (!bearer.starts_with(kPrefix) || bearer.size() <= kPrefix.size() + kIdHex + 1) {
    return std::nullopt;
  }
  const std::string_view id = bearer.substr(kPrefix.size(), kIdHex);
  MutexLock lock(mu_);
  for (const auto& token : tokens_) {
    if (token.id != id || token.revoked) continue;
    if (equal_secrets(salted_sha256_hex(token.salt_hex, bearer), token.sha256_hex)) {
      return Principal{token.name, token.role};
    }
  }
  return std::nullopt;
}

bool ControlPlane::node_token_ok(std::string_view bearer) const {
  return !options_.node_token.empty() && equal_secrets(bearer, options_.node_token);
}

json ControlPlane::audit_view(EntityKind kind, const std::string& text) const {
  if (text.empty()) return nullptr;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return nullptr;
  if (kind == EntityKind::kKey) {
    j.erase("key_sha256");
    j.erase("key_salt");
  }
  return j;
}

AuditEntry ControlPlane::audit(const Principal& actor, std::string action, std::string subject,
                               std::string before, std::string after) const {
  AuditEntry entry;
  entry.at_ms = options_.now_ms();
  entry.actor = actor.name;
  entry.action = std::move(action);
  entry.subject = std::move(subject);
  entry.before_json = before.empty() ? "null" : std::move(before);
  entry.after_json = after.empty() ? "null" : std::move(after);
  return entry;
}

std::vector<ListedEntity> ControlPlane::entities(EntityKind kind) const {
  MutexLock lock(mu_);
  std::vector<ListedEntity> out = file_entities(state_.file_text, kind);
  for (const auto& e : state_.entities) {
    if (e.kind != kind) continue;
    out.push_back({kind, e.name, audit_view(kind, e.json), /*read_only=*/false});
  }
  return out;
}

std::optional<ListedEntity> ControlPlane::entity(EntityKind kind, const std::string& name) const {
  for (auto& e : entities(kind)) {
    if (e.name == name) return std::move(e);
  }
  return std::nullopt;
}

tl::expected<ListedEntity, ControlError> ControlPlane::put_entity(EntityKind kind,
                                                                  const std::string& name,
                                                                  json body, bool create,
                                                                  const Principal& actor) {
  if (kind == EntityKind::kKey) {
    for (auto field : kKeySecretFields) {
      if (body.contains(field)) {
        return tl::unexpected(error(400,
                                    "a key's secret is made by the control plane: create keys "
                                    "with POST /api/v1/keys and keep the key it answers",
                                    std::string(field)));
      }
    }
  }
  return write_entity(kind, name, std::move(body), create, actor, "");
}

tl::expected<ListedEntity, ControlError> ControlPlane::write_entity(
    EntityKind kind, const std::string& name, json body, bool create, const Principal& actor,
    const std::string& action_override) {
  if (options_.store == nullptr) {
    return tl::unexpected(error(503, "this control plane has no store: the API is read-only"));
  }
  if (!body.is_object()) return tl::unexpected(error(400, "expected a JSON object"));
  body.erase("read_only");
  const std::string name_key(entity_name_key(kind));
  if (name.empty()) return tl::unexpected(error(400, "missing required key", name_key));
  if (!printable_utf8(name)) {
    return tl::unexpected(error(400, "expected printable UTF-8 text", name_key));
  }
  if (body.contains(name_key) && body[name_key] != name) {
    return tl::unexpected(
        error(400, "the " + name_key + " in the body differs from the one in the path", name_key));
  }
  body[name_key] = name;
  {
    toml::table probe;
    std::string problem;
    if (!json_to_toml(body, probe, problem)) {
      const std::string field = problem.substr(0, problem.find(':'));
      return tl::unexpected(error(400, problem, field));
    }
  }
  MutexLock lock(mu_);
  for (const auto& e : file_entities(state_.file_text, kind)) {
    if (e.name != name) continue;
    return tl::unexpected(error(create ? 409 : 403,
                                std::string(entity_kind_name(kind)) + " '" + name +
                                    "' comes from the config file and is read-only here",
                                name_key, "read_only"));
  }
  State next = state_;
  auto it = std::find_if(next.entities.begin(), next.entities.end(),
                         [&](const Entity& e) { return e.kind == kind && e.name == name; });
  std::string before;
  if (create && it != next.entities.end()) {
    return tl::unexpected(
        error(409, std::string(entity_kind_name(kind)) + " '" + name + "' already exists", name_key,
              "already_exists"));
  }
  if (!create && it == next.entities.end()) {
    return tl::unexpected(
        error(404, std::string(entity_kind_name(kind)) + " '" + name + "' does not exist"));
  }
  if (it != next.entities.end()) {
    before = it->json;
    if (kind == EntityKind::kKey) {
      // An update keeps the key's secret.
      const json old = json::parse(it->json, nullptr, false);
      for (auto field : kKeySecretFields) {
        if (!old.is_discarded() && old.contains(field)) body[std::string(field)] = old[field];
      }
    }
  }
  Entity entity{kind, name, body.dump()};
  if (it != next.entities.end()) {
    *it = entity;
  } else {
    next.entities.push_back(entity);
    std::sort(next.entities.begin(), next.entities.end(), [](const Entity& a, const Entity& b) {
      return std::pair(static_cast<int>(a.kind), a.name) <
             std::pair(static_cast<int>(b.kind), b.name);
    });
  }
  const std::string action = action_override.empty()
                                 ? kind_action(kind) + (create ? ".create" : ".update")
                                 : action_override;
  const AuditEntry entry = audit(actor, action, kind_action(kind) + "/" + name,
                                 before.empty() ? "" : audit_view(kind, before).dump(),
                                 audit_view(kind, entity.json).dump());
  auto done = commit(
      std::move(next), [&] { return options_.store->put_entity(entity, entry); },
      DocumentOrigin{kind, name, false});
  if (!done) return tl::unexpected(done.error());
  return ListedEntity{kind, name, audit_view(kind, entity.json), false};
}

tl::expected<void, ControlError> ControlPlane::delete_entity(EntityKind kind,
                                                             const std::string& name,
                                                             const Principal& actor) {
  if (options_.store == nullptr) {
    return tl::unexpected(error(503, "this control plane has no store: the API is read-only"));
  }
  MutexLock lock(mu_);
  for (const auto& e : file_entities(state_.file_text, kind)) {
    if (e.name == name) {
      return tl::unexpected(error(403,
                                  std::string(entity_kind_name(kind)) + " '" + name +
                                      "' comes from the config file and is read-only here",
                                  std::string(entity_name_key(kind)), "read_only"));
    }
  }
  State next = state_;
  auto it = std::find_if(next.entities.begin(), next.entities.end(),
                         [&](const Entity& e) { return e.kind == kind && e.name == name; });
  if (it == next.entities.end()) {
    return tl::unexpected(
        error(404, std::string(entity_kind_name(kind)) + " '" + name + "' does not exist"));
  }
  const AuditEntry entry =
      audit(actor, kind_action(kind) + (kind == EntityKind::kKey ? ".revoke" : ".delete"),
            kind_action(kind) + "/" + name, audit_view(kind, it->json).dump(), "");
  next.entities.erase(it);
  return commit(
      std::move(next), [&] { return options_.store->delete_entity(kind, name, entry); },
      std::nullopt);
}

tl::expected<std::pair<ListedEntity, std::string>, ControlError> ControlPlane::create_key(
    json body, const Principal& actor) {
  if (!body.is_object()) return tl::unexpected(error(400, "expected a JSON object"));
  for (auto field : kKeySecretFields) {
    if (body.contains(field)) {
      return tl::unexpected(error(400, "a key's secret is made by the control plane and shown once",
                                  std::string(field)));
    }
  }
  if (!body.contains("name") || !body["name"].is_string()) {
    return tl::unexpected(error(400, "missing required key (a string)", "name"));
  }
  const std::string name = body["name"].get<std::string>();
  const std::string salt = random_hex(8);
  const std::string key = "rk-" + salt + "-" + random_hex(24);
  body["key_salt"] = salt;
  body["key_sha256"] = salted_sha256_hex(salt, key);
  auto created =
      write_entity(EntityKind::kKey, name, std::move(body), /*create=*/true, actor, "key.create");
  if (!created) return tl::unexpected(created.error());
  return std::pair(std::move(*created), key);
}

json ControlPlane::adaptive_policy() const {
  MutexLock lock(mu_);
  json policy = state_.file_policy;
  if (!state_.policy.empty()) {
    const json stored = json::parse(state_.policy, nullptr, false);
    if (stored.is_object()) policy.update(stored);
  }
  return policy;
}

std::vector<std::string> ControlPlane::adaptive_routes() const {
  MutexLock lock(mu_);
  return adaptive_routes_;
}

tl::expected<json, ControlError> ControlPlane::put_adaptive_policy(const json& change,
                                                                   const Principal& actor) {
  if (options_.store == nullptr) {
    return tl::unexpected(error(503, "this control plane has no store: the API is read-only"));
  }
  if (!change.is_object()) return tl::unexpected(error(400, "expected a JSON object"));
  json policy = adaptive_policy();
  const json before = policy;
  for (const auto& [key, value] : change.items()) {
    if (std::find(std::begin(kPolicyKeys), std::end(kPolicyKeys), key) == std::end(kPolicyKeys)) {
      return tl::unexpected(error(400, "unknown key", key));
    }
    if (key == "enabled") {
      if (!value.is_boolean()) return tl::unexpected(error(400, "expected true or false", key));
    } else if (key == "min_samples") {
      if (!value.is_number_integer() || value.get<int64_t>() < 0) {
        return tl::unexpected(error(400, "expected a non-negative integer", key));
      }
    } else if (!value.is_number() || !std::isfinite(value.get<double>())) {
      return tl::unexpected(error(400, "expected a finite number", key));
    }
    policy[key] = value;
  }
  // SPEC §6.10: negative weights count as 0, exploration is kept within [0, 0.5].
  for (const char* weight : {"latency_weight", "cost_weight", "load_weight"}) {
    policy[weight] = std::max(0.0, policy[weight].get<double>());
  }
  policy["exploration_ratio"] = std::clamp(policy["exploration_ratio"].get<double>(), 0.0, 0.5);
  if (policy["latency_weight"].get<double>() + policy["cost_weight"].get<double>() +
          policy["load_weight"].get<double>() ==
      0) {
    return tl::unexpected(error(400,
                                "an all-zero blend is refused: give latency_weight, cost_weight "
                                "or load_weight a positive value (to turn adaptive routing off, "
                                "set enabled = false)",
                                "latency_weight"));
  }
  MutexLock lock(mu_);
  State next = state_;
  next.policy = policy.dump();
  const AuditEntry entry = audit(actor, "adaptive_routing_policy.update", "adaptive_routing_policy",
                                 before.dump(), policy.dump());
  auto done = commit(
      std::move(next),
      [&] {
        return options_.store->put_setting(std::string(kPolicySetting), policy.dump(), entry);
      },
      std::nullopt);
  if (!done) return tl::unexpected(done.error());
  return policy;
}

tl::expected<std::pair<AdminToken, std::string>, ControlError> ControlPlane::create_admin_token(
    const std::string& name, const std::string& role, const Principal& actor) {
  if (options_.store == nullptr) {
    return tl::unexpected(error(503, "this control plane has no store: the API is read-only"));
  }
  if (name.empty() || name.size() > 64) {
    return tl::unexpected(error(400, "expected 1 to 64 characters", "name"));
  }
  if (role != "superadmin" && role != "admin" && role != "viewer") {
    return tl::unexpected(error(400, "expected superadmin, admin or viewer", "role"));
  }
  AdminToken token;
  token.id = random_hex(8);
  token.name = name;
  token.role = role;
  token.salt_hex = random_hex(8);
  token.created_ms = options_.now_ms();
  const std::string text = "rat-" + token.id + "-" + random_hex(24);
  token.sha256_hex = salted_sha256_hex(token.salt_hex, text);
  const json view{{"id", token.id}, {"name", name}, {"role", role}};
  MutexLock lock(mu_);
  auto added = options_.store->add_admin_token(
      token, audit(actor, "admin_token.create", "admin_token/" + token.id, "", view.dump()));
  if (!added) return tl::unexpected(store_error(added.error()));
  refresh_tokens_locked();
  return std::pair(token, text);
}

tl::expected<void, ControlError> ControlPlane::revoke_admin_token(const std::string& id,
                                                                  const Principal& actor) {
  if (options_.store == nullptr) {
    return tl::unexpected(error(503, "this control plane has no store: the API is read-only"));
  }
  MutexLock lock(mu_);
  auto it = std::find_if(tokens_.begin(), tokens_.end(),
                         [&](const AdminToken& t) { return t.id == id && !t.revoked; });
  if (it == tokens_.end()) {
    return tl::unexpected(error(404, "admin token '" + id + "' does not exist"));
  }
  const json view{{"id", it->id}, {"name", it->name}, {"role", it->role}};
  auto revoked = options_.store->revoke_admin_token(
      id, audit(actor, "admin_token.revoke", "admin_token/" + id, view.dump(), ""));
  if (!revoked) return tl::unexpected(store_error(revoked.error()));
  refresh_tokens_locked();
  return {};
}

}  // namespace rolter
