// ControlPlane: the state behind `rolter control-plane` and the all-in-one `rolter serve`
// (SPEC §1, §10): the config file, the store, and the effective document it publishes.
//
// Every change goes the same way: merge it into a candidate document (control/config_document.h),
// validate that with the code of `rolter check`, let the local data plane (if any) build a snapshot
// from it, write the change and its audit row to the store in one transaction, then publish: the
// version moves on, long polls are woken, and the local data plane swaps its snapshot. A change
// that fails any step changes nothing. The version is kept in the store, so it only grows across
// restarts, and it moves only when the document's text does.
//
// Thread-safety: every public method may be called from any thread; writes are serialised.
#pragma once

#include <nlohmann/json.hpp>
#include <tl/expected.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/mutex.h"
#include "control/config_document.h"
#include "store/store.h"

namespace rolter {

// An answer the admin API turns into the OpenAI error shape.
struct ControlError {
  unsigned status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  // the offending field, "" when none
  std::string code;
};

// Who made a request: an admin token's name and role.
struct Principal {
  std::string name;
  std::string role;  // "superadmin" | "admin" | "viewer"
};

struct ListedEntity {
  EntityKind kind;
  std::string name;
  nlohmann::json json;     // the rolter.toml table's keys; never a key's digest or salt
  bool read_only = false;  // from the config file
};

class ControlPlane {
 public:
  // Builds a snapshot for the local data plane from a document and its version. Returns the
  // publication (called only once the change is stored) or the problems.
  using Prepare = std::function<tl::expected<std::function<void()>, std::vector<std::string>>(
      const std::string& document, uint64_t version)>;

  struct Options {
    std::string config_path;          // "" = everything lives in the store
    Store* store = nullptr;           // null = read-only: the API refuses writes
    std::string admin_token;          // ROLTER_ADMIN_TOKEN, "" = none
    std::string node_token;           // ROLTER_NODE_TOKEN, "" = the internal API is closed
    Prepare prepare;                  // empty = no local data plane
    std::function<int64_t()> now_ms;  // wall clock, unix ms
  };

  explicit ControlPlane(Options options);

  // Reads the file and the store and publishes the first document. Returns the problems.
  std::vector<std::string> start() EXCLUDES(mu_);
  // Rereads the config file; on failure the running document stays. Returns the problems.
  std::vector<std::string> reload_file() EXCLUDES(mu_);
  // True when the config file changed since it was last read (by mtime, size or inode).
  bool file_changed() const EXCLUDES(mu_);
  bool has_config_file() const { return !options_.config_path.empty(); }

  uint64_t version() const;
  std::string document() const EXCLUDES(mu_);
  bool has_store() const { return options_.store != nullptr; }
  Store* store() const { return options_.store; }
  int64_t now_ms() const { return options_.now_ms(); }

  // Long polls: `wake` runs once, on the publishing thread, when the version differs from `seen`
  // (at once if it already does), or at shutdown().
  uint64_t on_change(uint64_t seen, std::function<void()> wake) EXCLUDES(waiters_mu_);
  void forget(uint64_t ticket) EXCLUDES(waiters_mu_);
  // Wakes every waiter; from now on polls answer at once.
  void shutdown() EXCLUDES(waiters_mu_);
  bool shutting_down() const { return shutting_down_.load(); }

  // Authentication (constant-time comparisons).
  std::optional<Principal> admin(std::string_view bearer) const EXCLUDES(mu_);
  bool node_token_ok(std::string_view bearer) const;

  // Entities.
  std::vector<ListedEntity> entities(EntityKind kind) const EXCLUDES(mu_);
  std::optional<ListedEntity> entity(EntityKind kind, const std::string& name) const
      EXCLUDES(mu_);
  // Creates (`create`) or replaces an entity. `json` is the request's object.
  tl::expected<ListedEntity, ControlError> put_entity(EntityKind kind, const std::string& name,
                                                      nlohmann::json json, bool create,
                                                      const Principal& actor) EXCLUDES(mu_);
  tl::expected<void, ControlError> delete_entity(EntityKind kind, const std::string& name,
                                                 const Principal& actor) EXCLUDES(mu_);
  // A key: like put_entity, and the key's text is returned once, at creation.
  tl::expected<std::pair<ListedEntity, std::string>, ControlError> create_key(
      nlohmann::json json, const Principal& actor) EXCLUDES(mu_);

  // The adaptive routing policy in force, and a change to it (merged over it, sanitised).
  nlohmann::json adaptive_policy() const EXCLUDES(mu_);
  tl::expected<nlohmann::json, ControlError> put_adaptive_policy(const nlohmann::json& change,
                                                                 const Principal& actor)
      EXCLUDES(mu_);
  // Routes and provider groups of strategy "adaptive" in the running document.
  std::vector<std::string> adaptive_routes() const EXCLUDES(mu_);

  // Admin tokens: the token's text is returned once.
  tl::expected<std::pair<AdminToken, std::string>, ControlError> create_admin_token(
      const std::string& name, const std::string& role, const Principal& actor) EXCLUDES(mu_);
  tl::expected<void, ControlError> revoke_admin_token(const std::string& id,
                                                      const Principal& actor) EXCLUDES(mu_);

 private:
  struct Waiter {
    uint64_t seen;
    std::function<void()> wake;
  };
  struct State {
    std::string file_text;
    nlohmann::json file_policy;  // the file's [adaptive_routing] (or {}), as JSON
    std::vector<Entity> entities;
    std::string policy;  // the stored policy JSON, "" = the file's
  };

  // Builds, validates and prepares `next`; on success runs `store_write`, then publishes.
  tl::expected<void, ControlError> commit(State next,
                                          const std::function<StoreResult<void>()>& store_write,
                                          const std::optional<DocumentOrigin>& subject)
      REQUIRES(mu_);
  // put_entity() and create_key() without the check for secret fields; takes mu_.
  // `action_override` names the audit action ("" = "<kind>.create" / "<kind>.update").
  tl::expected<ListedEntity, ControlError> write_entity(EntityKind kind, const std::string& name,
                                                        nlohmann::json body, bool create,
                                                        const Principal& actor,
                                                        const std::string& action_override)
      EXCLUDES(mu_);
  std::vector<std::string> reload_locked() REQUIRES(mu_);
  // Moves the published version on and wakes the long polls that wait for it.
  void publish(uint64_t version) EXCLUDES(waiters_mu_);
  void refresh_tokens_locked() REQUIRES(mu_);
  nlohmann::json audit_view(EntityKind kind, const std::string& json) const;
  AuditEntry audit(const Principal& actor, std::string action, std::string subject,
                   std::string before, std::string after) const;

  Options options_;
  mutable Mutex mu_;  // serialises writes
  State state_ GUARDED_BY(mu_);
  ConfigDocument doc_ GUARDED_BY(mu_);
  uint64_t version_ GUARDED_BY(mu_) = 0;
  std::string digest_ GUARDED_BY(mu_);
  std::vector<AdminToken> tokens_ GUARDED_BY(mu_);
  std::vector<std::string> adaptive_routes_ GUARDED_BY(mu_);
  struct FileStamp {
    bool operator==(const FileStamp&) const = default;
    int64_t mtime_ns = 0;
    int64_t size = -1;
    uint64_t inode = 0;
  };
  FileStamp stamp() const;
  FileStamp loaded_stamp_ GUARDED_BY(mu_);

  mutable Mutex waiters_mu_;
  std::map<uint64_t, Waiter> waiters_ GUARDED_BY(waiters_mu_);
  uint64_t next_ticket_ GUARDED_BY(waiters_mu_) = 1;
  std::atomic<uint64_t> published_version_{0};
  std::atomic<bool> shutting_down_{false};
};

}  // namespace rolter
