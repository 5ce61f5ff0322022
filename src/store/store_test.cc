// The store's behaviour, checked the same way on both backends: every TEST_P runs once on a
// SQLite file and once on a real PostgreSQL server started for this test binary.
#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "store/migrations.h"
#include "store/testing/postgres_server.h"

namespace rolter {
namespace {

namespace fs = std::filesystem;

PostgresEnvironment* const kPostgres = PostgresEnvironment::install();

enum class Backend { kSqlite, kPostgres };

std::string backend_name(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kSqlite ? "sqlite" : "postgres";
}

void PrintTo(Backend backend, std::ostream* os) {
  *os << (backend == Backend::kSqlite ? "sqlite" : "postgres");
}

// A new empty directory, deleted by the destructor.
class TempDir {
 public:
  TempDir() {
    std::string path = (fs::temp_directory_path() / "rolter-store-XXXXXX").string();
    if (::mkdtemp(path.data())) path_ = path;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

AuditEntry audit_of(std::string action, std::string subject, int64_t at_ms = 1000,
                    std::string actor = "ops") {
  return AuditEntry{0,      at_ms, std::move(actor), std::move(action), std::move(subject),
                    "null", "null"};
}

class StoreTest : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kSqlite) {
      ASSERT_FALSE(dir_.path().empty());
      url_ = "sqlite:" + dir_.path() + "/rolter.db";
    } else {
      auto server = kPostgres->server();
      ASSERT_TRUE(server) << server.error();
      server_ = *server;
      static int databases = 0;
      database_ = "store_" + std::to_string(++databases);
      auto url = server_->create_database(database_);
      ASSERT_TRUE(url) << url.error();
      url_ = *url;
    }
    store_ = open_store();
    ASSERT_NE(store_, nullptr);
  }

  std::unique_ptr<Store> open_store() {
    auto store = Store::open(url_);
    EXPECT_TRUE(store) << store.error();
    return store ? std::move(*store) : nullptr;
  }

  // Closes the store and opens the same database again.
  void reopen() {
    store_.reset();
    store_ = open_store();
    ASSERT_NE(store_, nullptr);
  }

  // Runs one SQL statement on the database behind the store's back.
  void execute_directly(const std::string& sql) {
    if (GetParam() == Backend::kPostgres) {
      auto done = server_->execute(sql, database_);
      ASSERT_TRUE(done) << done.error();
      return;
    }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(url_.substr(7).c_str(), &db), SQLITE_OK);
    char* error = nullptr;
    const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error);
    const std::string message = error ? error : "";
    sqlite3_free(error);
    sqlite3_close(db);
    ASSERT_EQ(rc, SQLITE_OK) << message;
  }

  std::vector<AuditEntry> all_audit() {
    auto entries = store_->audit("", 1000, 0);
    EXPECT_TRUE(entries) << entries.error();
    return entries ? *entries : std::vector<AuditEntry>{};
  }

  std::vector<Entity> all_entities() {
    auto entities = store_->entities();
    EXPECT_TRUE(entities) << entities.error();
    return entities ? *entities : std::vector<Entity>{};
  }

  TempDir dir_;                       // SQLite
  PostgresServer* server_ = nullptr;  // PostgreSQL
  std::string database_;              // PostgreSQL
  std::string url_;
  std::unique_ptr<Store> store_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest,
                         ::testing::Values(Backend::kSqlite, Backend::kPostgres), backend_name);

TEST_P(StoreTest, AppliesEveryMigrationOnceAndReopensAtTheSameVersion) {
  EXPECT_EQ(store_->backend(), GetParam() == Backend::kSqlite ? "sqlite" : "postgres");
  EXPECT_EQ(store_->schema_version(), latest_schema_version());
  ASSERT_TRUE(store_->put_setting("k", "v"));
  reopen();
  EXPECT_EQ(store_->schema_version(), latest_schema_version());
  // A second store on the same database at the same time, as two control planes would have.
  auto second = open_store();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->schema_version(), latest_schema_version());
  EXPECT_EQ(*second->setting("k"), std::optional<std::string>("v"));
}

TEST_P(StoreTest, RefusesADatabaseMigratedByANewerBuild) {
  execute_directly("INSERT INTO schema_migrations (version) VALUES (9999)");
  store_.reset();
  auto store = Store::open(url_);
  ASSERT_FALSE(store);
  EXPECT_NE(store.error().find("schema version 9999 is newer"), std::string::npos) << store.error();
}

TEST_P(StoreTest, PutsReplacesAndDeletesEntitiesEachWithItsAuditEntry) {
  ASSERT_TRUE(store_->put_entity({EntityKind::kRoute, "qwen3", R"({"v":1})"},
                                 audit_of("route.create", "route/qwen3", 1000)));
  ASSERT_TRUE(store_->put_entity({EntityKind::kRoute, "qwen3", R"({"v":2})"},
                                 audit_of("route.update", "route/qwen3", 2000)));
  auto entities = all_entities();
  ASSERT_EQ(entities.size(), 1u);
  EXPECT_EQ(entities[0].kind, EntityKind::kRoute);
  EXPECT_EQ(entities[0].name, "qwen3");
  EXPECT_EQ(entities[0].json, R"({"v":2})");

  ASSERT_TRUE(store_->delete_entity(EntityKind::kRoute, "qwen3",
                                    audit_of("route.delete", "route/qwen3", 3000)));
  EXPECT_TRUE(all_entities().empty());
  // Deleting what is not there is not an error, and is still audited.
  ASSERT_TRUE(store_->delete_entity(EntityKind::kRoute, "qwen3",
                                    audit_of("route.delete", "route/qwen3", 4000)));

  auto audit = all_audit();
  ASSERT_EQ(audit.size(), 4u);
  EXPECT_EQ(audit[0].action, "route.delete");
  EXPECT_EQ(audit[0].at_ms, 4000);
  EXPECT_EQ(audit[2].action, "route.update");
  EXPECT_EQ(audit[3].action, "route.create");
  EXPECT_EQ(audit[3].subject, "route/qwen3");
  EXPECT_EQ(audit[3].actor, "ops");
  EXPECT_EQ(audit[3].before_json, "null");
  for (size_t i = 1; i < audit.size(); ++i) EXPECT_LT(audit[i].id, audit[i - 1].id);
}

TEST_P(StoreTest, ListsEntitiesByKindThenName) {
  const Entity put[] = {
      {EntityKind::kKey, "k", "{}"},           {EntityKind::kRoute, "b", "{}"},
      {EntityKind::kProvider, "z", "{}"},      {EntityKind::kRoute, "B", "{}"},
      {EntityKind::kProviderGroup, "g", "{}"}, {EntityKind::kRoute, "a", "{}"},
      {EntityKind::kProvider, "a", "{}"},
  };
  for (const auto& entity : put) {
    ASSERT_TRUE(store_->put_entity(entity, audit_of("x.create", entity.name)));
  }
  std::vector<std::string> order;
  for (const auto& entity : all_entities()) {
    order.push_back(std::string(entity_kind_name(entity.kind)) + "/" + entity.name);
  }
  // Bytewise within a kind ("B" < "a"), on both backends whatever the server's collation.
  const std::vector<std::string> expected = {"provider/a", "provider/z",       "route/B", "route/a",
                                             "route/b",    "provider_group/g", "key/k"};
  EXPECT_EQ(order, expected);
}

TEST_P(StoreTest, AChangeWhoseAuditEntryIsRefusedIsNotStored) {
  ASSERT_TRUE(store_->put_entity({EntityKind::kProvider, "a", R"({"v":1})"},
                                 audit_of("provider.create", "provider/a")));
  const AuditEntry refused = audit_of("", "provider/a");  // an entry must name its action

  auto put = store_->put_entity({EntityKind::kProvider, "a", R"({"v":2})"}, refused);
  ASSERT_FALSE(put);
  EXPECT_NE(put.error().find(GetParam() == Backend::kSqlite ? "sqlite:" : "postgres:"),
            std::string::npos)
      << put.error();
  EXPECT_FALSE(store_->put_entity({EntityKind::kProvider, "new", "{}"}, refused));
  EXPECT_FALSE(store_->delete_entity(EntityKind::kProvider, "a", refused));
  EXPECT_FALSE(store_->put_setting("s", "1", refused));
  EXPECT_FALSE(store_->add_admin_token({"t1", "ops", "admin", "00", "ff", 1, false}, refused));

  auto entities = all_entities();
  ASSERT_EQ(entities.size(), 1u);
  EXPECT_EQ(entities[0].json, R"({"v":1})");
  EXPECT_EQ(*store_->setting("s"), std::nullopt);
  EXPECT_TRUE(store_->admin_tokens()->empty());
  EXPECT_EQ(all_audit().size(), 1u);
  // The store is usable after the rollbacks.
  ASSERT_TRUE(store_->put_entity({EntityKind::kProvider, "a", R"({"v":3})"},
                                 audit_of("provider.update", "provider/a")));
  EXPECT_EQ(all_entities()[0].json, R"({"v":3})");
}

TEST_P(StoreTest, RefusesValuesHoldingANulByteOnBothBackends) {
  auto put = store_->put_entity({EntityKind::kRoute, "r", std::string("{\0}", 3)},
                                audit_of("route.create", "route/r"));
  ASSERT_FALSE(put);
  EXPECT_NE(put.error().find("NUL byte"), std::string::npos) << put.error();
  EXPECT_TRUE(all_entities().empty());
}

TEST_P(StoreTest, StoresSettings) {
  EXPECT_EQ(*store_->setting("adaptive_routing_policy"), std::nullopt);
  ASSERT_TRUE(store_->put_setting("adaptive_routing_policy", R"({"mode":"off"})"));
  EXPECT_EQ(*store_->setting("adaptive_routing_policy"),
            std::optional<std::string>(R"({"mode":"off"})"));
  ASSERT_TRUE(store_->put_setting("adaptive_routing_policy", R"({"mode":"on"})",
                                  audit_of("adaptive_routing_policy.update", "settings")));
  EXPECT_EQ(*store_->setting("adaptive_routing_policy"),
            std::optional<std::string>(R"({"mode":"on"})"));
  ASSERT_TRUE(store_->put_setting("empty", ""));
  EXPECT_EQ(*store_->setting("empty"), std::optional<std::string>(""));
  auto audit = all_audit();
  ASSERT_EQ(audit.size(), 1u);  // only the put that carried an entry
  EXPECT_EQ(audit[0].action, "adaptive_routing_policy.update");
}

TEST_P(StoreTest, AddsListsAndRevokesAdminTokens) {
  const AdminToken later{"tb", "ci", "viewer", "0a0b", "ab12", 2000, false};
  const AdminToken earlier{"ta", "ops", "superadmin", "0c0d", "cd34", 1000, false};
  ASSERT_TRUE(store_->add_admin_token(later, audit_of("admin_token.create", "admin_token/tb")));
  ASSERT_TRUE(store_->add_admin_token(earlier, audit_of("admin_token.create", "admin_token/ta")));
  auto duplicate = store_->add_admin_token(earlier, audit_of("admin_token.create", "x"));
  EXPECT_FALSE(duplicate);

  auto tokens = store_->admin_tokens();
  ASSERT_TRUE(tokens) << tokens.error();
  ASSERT_EQ(tokens->size(), 2u);
  const AdminToken& first = (*tokens)[0];
  EXPECT_EQ(first.id, "ta");
  EXPECT_EQ(first.name, "ops");
  EXPECT_EQ(first.role, "superadmin");
  EXPECT_EQ(first.salt_hex, "0c0d");
  EXPECT_EQ(first.sha256_hex, "cd34");
  EXPECT_EQ(first.created_ms, 1000);
  EXPECT_FALSE(first.revoked);
  EXPECT_EQ((*tokens)[1].id, "tb");

  ASSERT_TRUE(store_->revoke_admin_token("tb", audit_of("admin_token.revoke", "admin_token/tb")));
  EXPECT_TRUE((*store_->admin_tokens())[1].revoked);
  EXPECT_FALSE((*store_->admin_tokens())[0].revoked);
  auto missing = store_->revoke_admin_token("nope", audit_of("admin_token.revoke", "x"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("nope"), std::string::npos) << missing.error();
  EXPECT_EQ(all_audit().size(), 3u);  // two creates and one revoke
}

TEST_P(StoreTest, FiltersPagesAndOrdersTheAuditLogNewestFirst) {
  struct Put {
    std::string actor, action, subject, before, after;
  };
  const Put puts[] = {
      {"ops", "route.create", "route/qwen3", "null", R"({"model":"Qwen3"})"},
      {"env:ROLTER_ADMIN_TOKEN", "provider.create", "provider/a", "null", "{}"},
      {"ci", "route.update", "route/llama", R"({"w":1})", R"({"w":2})"},
      {"ops", "key.create", "key/100%_off!", "null", "{}"},
      {"ci", "route.delete", "route/qwen3", R"({"model":"QWEN3"})", "null"},
  };
  int64_t at = 1000;
  for (const auto& p : puts) {
    ASSERT_TRUE(store_->put_setting(
        "s", "v", AuditEntry{0, at++, p.actor, p.action, p.subject, p.before, p.after}));
  }
  auto actions = [&](const std::string& contains, int limit, int offset) {
    std::vector<std::string> out;
    auto entries = store_->audit(contains, limit, offset);
    EXPECT_TRUE(entries) << entries.error();
    if (entries) {
      for (const auto& e : *entries) out.push_back(e.action);
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(actions("", 10, 0),
            (V{"route.delete", "key.create", "route.update", "provider.create", "route.create"}));
  EXPECT_EQ(actions("", 2, 0), (V{"route.delete", "key.create"}));
  EXPECT_EQ(actions("", 2, 2), (V{"route.update", "provider.create"}));
  EXPECT_EQ(actions("", 2, 4), (V{"route.create"}));
  EXPECT_EQ(actions("", 0, 0), V{});
  EXPECT_EQ(actions("", -5, -5), V{});
  // Each column, ignoring case.
  EXPECT_EQ(actions("qwen3", 10, 0), (V{"route.delete", "route.create"}));  // subject, json
  EXPECT_EQ(actions("QWEN3", 10, 0), (V{"route.delete", "route.create"}));
  EXPECT_EQ(actions("admin_token", 10, 0), V{"provider.create"});  // actor
  EXPECT_EQ(actions("ROUTE.UPD", 10, 0), V{"route.update"});       // action
  EXPECT_EQ(actions("\"w\":1", 10, 0), V{"route.update"});         // before
  EXPECT_EQ(actions("\"w\":2", 10, 0), V{"route.update"});         // after
  EXPECT_EQ(actions("route", 1, 1), V{"route.update"});
  // LIKE's wildcards in the needle are plain characters.
  EXPECT_EQ(actions("100%_", 10, 0), V{"key.create"});
  EXPECT_EQ(actions("0%", 10, 0), V{"key.create"});
  EXPECT_EQ(actions("_", 10, 0), (V{"key.create", "provider.create"}));
  EXPECT_EQ(actions("off!", 10, 0), V{"key.create"});  // the escape character itself
  EXPECT_EQ(actions("nothing", 10, 0), V{});

  auto entries = *store_->audit("", 10, 0);
  EXPECT_EQ(entries.back().at_ms, 1000);
  EXPECT_EQ(entries.back().after_json, R"({"model":"Qwen3"})");
  EXPECT_EQ(entries.front().before_json, R"({"model":"QWEN3"})");
}

TEST_P(StoreTest, TouchesNodesAndRecordsTheirStats) {
  ASSERT_TRUE(store_->touch_node("node-b", "0.1.0", 7, 1000));
  ASSERT_TRUE(store_->put_node_stats("node-a", R"({"rps":3})", 1500));  // creates the row
  ASSERT_TRUE(store_->touch_node("node-a", "0.2.0", 8, 2000));
  ASSERT_TRUE(store_->put_node_stats("node-b", R"({"rps":1})", 2500));
  ASSERT_TRUE(store_->touch_node("node-b", "0.1.1", UINT64_MAX, 3000));

  auto nodes = store_->nodes();
  ASSERT_TRUE(nodes) << nodes.error();
  ASSERT_EQ(nodes->size(), 2u);
  const NodeRecord& a = (*nodes)[0];
  EXPECT_EQ(a.node_id, "node-a");
  EXPECT_EQ(a.version, "0.2.0");
  EXPECT_EQ(a.snapshot_version, 8u);
  EXPECT_EQ(a.last_contact_ms, 2000);
  EXPECT_EQ(a.stats_json, R"({"rps":3})");
  EXPECT_EQ(a.stats_at_ms, 1500);
  const NodeRecord& b = (*nodes)[1];
  EXPECT_EQ(b.node_id, "node-b");
  EXPECT_EQ(b.version, "0.1.1");
  EXPECT_EQ(b.snapshot_version, UINT64_MAX);  // round-trips through a signed column
  EXPECT_EQ(b.last_contact_ms, 3000);
  EXPECT_EQ(b.stats_json, R"({"rps":1})");
  EXPECT_EQ(b.stats_at_ms, 2500);

  ASSERT_TRUE(store_->touch_node("node-c", "0.1.0", 1, 4000));
  EXPECT_EQ((*store_->nodes())[2].stats_json, "null");
  EXPECT_EQ((*store_->nodes())[2].stats_at_ms, 0);
}

TEST_P(StoreTest, KeepsTheNewestTelemetryPerNodeAndRouteAndPrunesOldRows) {
  ASSERT_TRUE(store_->add_telemetry({
      {"n1", "qwen3", 1000, R"({"i":1})"},
      {"n1", "qwen3", 3000, R"({"i":2})"},
      {"n1", "qwen3", 2000, R"({"i":3})"},  // older than the row before it
      {"n1", "llama", 1500, R"({"i":4})"},
      {"n2", "qwen3", 2500, R"({"i":5})"},
      {"n2", "qwen3", 2500, R"({"i":6})"},  // same time: the later one counts as newest
  }));
  ASSERT_TRUE(store_->add_telemetry({}));

  auto summary = [&](int64_t since) {
    std::vector<std::string> out;
    auto rows = store_->latest_telemetry(since);
    EXPECT_TRUE(rows) << rows.error();
    if (rows) {
      for (const auto& r : *rows) {
        out.push_back(r.node_id + "/" + r.route + "@" + std::to_string(r.at_ms) + r.json);
      }
    }
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(summary(0),
            (V{R"(n1/llama@1500{"i":4})", R"(n1/qwen3@3000{"i":2})", R"(n2/qwen3@2500{"i":6})"}));
  EXPECT_EQ(summary(1500),
            (V{R"(n1/llama@1500{"i":4})", R"(n1/qwen3@3000{"i":2})", R"(n2/qwen3@2500{"i":6})"}));
  EXPECT_EQ(summary(1501), (V{R"(n1/qwen3@3000{"i":2})", R"(n2/qwen3@2500{"i":6})"}));
  EXPECT_EQ(summary(2600), (V{R"(n1/qwen3@3000{"i":2})"}));
  EXPECT_EQ(summary(3001), V{});

  auto pruned = store_->prune_telemetry(2000);  // 1000 and 1500; 2000 stays
  ASSERT_TRUE(pruned) << pruned.error();
  EXPECT_EQ(*pruned, 2u);
  EXPECT_EQ(summary(0), (V{R"(n1/qwen3@3000{"i":2})", R"(n2/qwen3@2500{"i":6})"}));
  EXPECT_EQ(*store_->prune_telemetry(2000), 0u);
  EXPECT_EQ(*store_->prune_telemetry(10000), 4u);
  EXPECT_EQ(summary(0), V{});
}

UsageRow usage_row(int64_t hour_ms, std::string key, std::string team, std::string route,
                   std::string model, UsageCounts counts) {
  return UsageRow{{hour_ms, std::move(key), std::move(team), std::move(route), std::move(model)},
                  counts};
}

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kDay = 24 * kHour;
constexpr int64_t kJan1 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

TEST_P(StoreTest, AddsUsageToTheStoredCountersOneTransactionPerBatch) {
  EXPECT_EQ(store_->usage_writes(), 0u);
  ASSERT_TRUE(store_->add_usage({}));
  EXPECT_EQ(store_->usage_writes(), 0u);  // nothing to write, no transaction

  const std::vector<UsageRow> batch = {
      usage_row(kJan1, "ci", "ml", "qwen3", "m1",
                {.requests = 2,
                 .input_tokens = 100,
                 .cached_input_tokens = 40,
                 .output_tokens = 10,
                 .estimated = 1,
                 .usd = 0.000123456789}),
      usage_row(kJan1, "ci", "ml", "qwen3", "m2", {.requests = 1, .input_tokens = 5}),
  };
  ASSERT_TRUE(store_->add_usage(batch));
  ASSERT_TRUE(store_->add_usage({batch[0]}));
  EXPECT_EQ(store_->usage_writes(), 2u);

  UsageQuery all;
  all.group_by = {UsageGroup::kHour, UsageGroup::kKey, UsageGroup::kTeam, UsageGroup::kRoute,
                  UsageGroup::kModel};
  auto rows = store_->usage(all);
  ASSERT_TRUE(rows) << rows.error();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0].key, batch[0].key);
  EXPECT_EQ((*rows)[0].counts.requests, 4u);
  EXPECT_EQ((*rows)[0].counts.input_tokens, 200u);
  EXPECT_EQ((*rows)[0].counts.cached_input_tokens, 80u);
  EXPECT_EQ((*rows)[0].counts.output_tokens, 20u);
  EXPECT_EQ((*rows)[0].counts.estimated, 2u);
  EXPECT_DOUBLE_EQ((*rows)[0].counts.usd, 0.000246914);  // whole nano-dollars
  EXPECT_EQ((*rows)[1].key.model, "m2");
  EXPECT_EQ((*rows)[1].counts.requests, 1u);
}

TEST_P(StoreTest, ABatchWithARefusedRowAddsNothing) {
  const std::vector<UsageRow> batch = {
      usage_row(kJan1, "ci", "", "r", "m", {.requests = 1}),
      usage_row(kJan1, std::string("bad\0key", 7), "", "r", "m", {.requests = 1}),
  };
  EXPECT_FALSE(store_->add_usage(batch));
  EXPECT_EQ(store_->usage_writes(), 1u);
  auto rows = store_->usage({});
  ASSERT_TRUE(rows) << rows.error();
  EXPECT_TRUE(rows->empty());  // the first row went back with the second
}

TEST_P(StoreTest, SumsUsageByAnyGroupWithinTheRangeAndFilters) {
  ASSERT_TRUE(store_->add_usage({
      usage_row(kJan1, "ci", "ml", "qwen3", "m1", {.requests = 1, .usd = 1}),
      usage_row(kJan1 + kHour, "ci", "ml", "llama", "m2", {.requests = 2, .usd = 2}),
      usage_row(kJan1 + kDay, "ci", "ml", "qwen3", "m1", {.requests = 4, .usd = 4}),
      usage_row(kJan1 + kDay, "ops", "", "qwen3", "m1", {.requests = 8, .usd = 8}),
      usage_row(kJan1 + 2 * kDay, "web", "apps", "qwen3", "m1", {.requests = 16, .usd = 16}),
  }));
  struct Case {
    std::string name;
    UsageQuery query;
    // Each row's grouped fields and requests, in order: "hour_ms key team route model=requests".
    std::vector<std::string> want;
  };
  auto q = [](std::vector<UsageGroup> by, int64_t from = 0,
              int64_t to = std::numeric_limits<int64_t>::max()) {
    UsageQuery query;
    query.group_by = std::move(by);
    query.from_ms = from;
    query.to_ms = to;
    return query;
  };
  std::vector<Case> cases = {
      {"total", q({}), {"0    =31"}},
      {"nothing in range", q({}, kJan1 + 3 * kDay), {}},
      {"by day",
       q({UsageGroup::kDay}),
       {std::to_string(kJan1) + "    =3", std::to_string(kJan1 + kDay) + "    =12",
        std::to_string(kJan1 + 2 * kDay) + "    =16"}},
      {"by hour of one day",
       q({UsageGroup::kHour}, kJan1, kJan1 + kDay),
       {std::to_string(kJan1) + "    =1", std::to_string(kJan1 + kHour) + "    =2"}},
      // `from` inside an hour counts that hour; `to` is exclusive.
      {"from mid-hour", q({}, kJan1 + kHour + 1, kJan1 + kDay + 1), {"0    =14"}},
      {"by key", q({UsageGroup::kKey}), {"0 ci   =7", "0 ops   =8", "0 web   =16"}},
      {"by team", q({UsageGroup::kTeam}), {"0    =8", "0  apps  =16", "0  ml  =7"}},
      {"by model and route",
       q({UsageGroup::kModel, UsageGroup::kRoute}),
       {"0   llama m2=2", "0   qwen3 m1=29"}},
  };
  Case by_key = {"key filter", q({UsageGroup::kRoute}), {"0   llama =2", "0   qwen3 =5"}};
  by_key.query.key = "ci";
  cases.push_back(by_key);
  Case by_team = {"team and route filter", q({}), {"0    =4"}};
  by_team.query.team = "ml";
  by_team.query.route = "qwen3";
  by_team.query.from_ms = kJan1 + kDay;
  cases.push_back(by_team);
  for (const Case& c : cases) {
    auto rows = store_->usage(c.query);
    ASSERT_TRUE(rows) << c.name << ": " << rows.error();
    std::vector<std::string> got;
    for (const auto& r : *rows) {
      got.push_back(std::to_string(r.key.hour_ms) + " " + r.key.key + " " + r.key.team + " " +
                    r.key.route + " " + r.key.model + "=" + std::to_string(r.counts.requests));
    }
    EXPECT_EQ(got, c.want) << c.name;
  }
  auto spend = store_->usage(q({UsageGroup::kKey}));
  ASSERT_TRUE(spend);
  EXPECT_DOUBLE_EQ((*spend)[0].counts.usd, 7.0);
}

TEST(UsageGroupTest, NamesRoundTrip) {
  for (UsageGroup g : {UsageGroup::kModel, UsageGroup::kRoute, UsageGroup::kKey, UsageGroup::kTeam,
                       UsageGroup::kDay, UsageGroup::kHour}) {
    EXPECT_EQ(usage_group_from(usage_group_name(g)), g);
  }
  EXPECT_EQ(usage_group_from("week"), std::nullopt);
}

TEST_P(StoreTest, KeepsEverythingAcrossCloseAndReopen) {
  ASSERT_TRUE(store_->put_entity({EntityKind::kKey, "k1", R"({"budget":5})"},
                                 audit_of("key.create", "key/k1", 1234)));
  ASSERT_TRUE(store_->put_setting("policy", "on"));
  ASSERT_TRUE(store_->add_admin_token({"t1", "ops", "admin", "00", "ff", 5, false},
                                      audit_of("admin_token.create", "admin_token/t1")));
  ASSERT_TRUE(store_->touch_node("n1", "0.1.0", 3, 100));
  ASSERT_TRUE(store_->add_telemetry({{"n1", "r", 100, "{}"}}));
  const int64_t last_id = all_audit().front().id;
  reopen();

  auto entities = all_entities();
  ASSERT_EQ(entities.size(), 1u);
  EXPECT_EQ(entities[0].json, R"({"budget":5})");
  EXPECT_EQ(*store_->setting("policy"), std::optional<std::string>("on"));
  EXPECT_EQ(store_->admin_tokens()->size(), 1u);
  EXPECT_EQ(store_->nodes()->at(0).snapshot_version, 3u);
  EXPECT_EQ(store_->latest_telemetry(0)->size(), 1u);
  auto audit = all_audit();
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit.back().at_ms, 1234);
  // Ids keep increasing after a reopen.
  ASSERT_TRUE(store_->put_setting("policy", "off", audit_of("policy.update", "settings")));
  EXPECT_GT(all_audit().front().id, last_id);
}

// Threads share a store, and two stores share the database, as two control planes would.
TEST_P(StoreTest, SerialisesCallsFromManyThreadsAndStores) {
  auto second = open_store();
  ASSERT_NE(second, nullptr);
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    Store* store = t % 2 == 0 ? store_.get() : second.get();
    threads.emplace_back([store, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string name = "r" + std::to_string(t) + "_" + std::to_string(i);
        auto put = store->put_entity({EntityKind::kRoute, name, "{}"},
                                     audit_of("route.create", "route/" + name));
        EXPECT_TRUE(put) << put.error();
        auto touched = store->touch_node("n" + std::to_string(t), "v", i, i);
        EXPECT_TRUE(touched) << touched.error();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(all_entities().size(), static_cast<size_t>(kThreads * kEach));
  auto audit = all_audit();
  EXPECT_EQ(audit.size(), static_cast<size_t>(kThreads * kEach));
  for (size_t i = 1; i < audit.size(); ++i) EXPECT_LT(audit[i].id, audit[i - 1].id);
}

// Opening what cannot be opened says why, and never shows a password.
TEST(StoreOpen, FailsClearlyOnBadUrls) {
  TempDir empty;  // a socket directory where no server listens
  TempDir files;
  const std::string not_a_db = files.path() + "/text.db";
  std::ofstream(not_a_db) << "this is not a database, only a long enough line of text\n";
  struct Case {
    std::string url;
    std::string fragment;
  };
  const Case cases[] = {
      {"mysql://x", "not supported"},
      {"mysql://ops:s3cr3t-pw@db/x", "not supported"},
      {"sqlite:/nonexistent/dir/x.db", "directory \"/nonexistent/dir\" does not exist"},
      {"sqlite:" + not_a_db, "not a database"},
      {"postgresql:///postgres?host=" + empty.path() + "&user=rolter", "cannot connect"},
      {"postgresql://rolter:s3cr3t-pw@/postgres?host=" + empty.path(), "cannot connect"},
      {"postgres:///postgres?host=" + empty.path() + "&password=s3cr3t-pw", "cannot connect"},
      {"postgres://ops:s3cr3t-pw@127.0.0.1:1/rolter", "cannot connect"},
      {"postgres://ops:s3cr3t-pw@/db?host=" + empty.path() + "&bogus=1", "bogus"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.url);
    auto store = Store::open(c.url);
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().find(c.fragment), std::string::npos) << store.error();
    EXPECT_EQ(store.error().find("s3cr3t-pw"), std::string::npos) << store.error();
  }
}

TEST(StoreOpen, OpensAnInMemorySqliteDatabase) {
  auto store = Store::open("sqlite::memory:");
  ASSERT_TRUE(store) << store.error();
  EXPECT_EQ((*store)->schema_version(), latest_schema_version());
  ASSERT_TRUE((*store)->put_setting("a", "b"));
  EXPECT_EQ(*(*store)->setting("a"), std::optional<std::string>("b"));
}

// A connection that the server drops between two calls is replaced, once, transparently.
TEST(PostgresStore, ReconnectsAfterTheServerDropsTheConnection) {
  auto server = kPostgres->server();
  ASSERT_TRUE(server) << server.error();
  auto url = (*server)->create_database("reconnect");
  ASSERT_TRUE(url) << url.error();
  auto store = Store::open(*url);
  ASSERT_TRUE(store) << store.error();
  ASSERT_TRUE((*store)->put_setting("a", "1"));

  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(
        (*server)->execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = 'reconnect' AND pid <> pg_backend_pid()"));
    auto value = (*store)->setting("a");
    ASSERT_TRUE(value) << value.error();
    EXPECT_EQ(*value, std::optional<std::string>("1"));
  }
  // A transaction too: its BEGIN is what meets the dropped connection.
  ASSERT_TRUE(
      (*server)->execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                         "WHERE datname = 'reconnect' AND pid <> pg_backend_pid()"));
  auto put = (*store)->put_entity({EntityKind::kRoute, "r", "{}"}, audit_of("route.create", "r"));
  ASSERT_TRUE(put) << put.error();
  EXPECT_EQ((*store)->entities()->size(), 1u);
}

}  // namespace
}  // namespace rolter
