#include "control/control_plane.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "config/loader.h"
#include "control/config_document.h"
#include "control/toml_json.h"
#include "fleet/load_tracker.h"
#include "snapshot/snapshot.h"

namespace rolter {
namespace {

using json = nlohmann::json;

const Principal kOps{"ops", "superadmin"};

json provider(const std::string& name) {
  return json{{"name", name}, {"base_url", "http://127.0.0.1:9"}};
}

json route(const std::string& name, const std::string& provider_name) {
  return json{{"name", name},
              {"strategy", "round_robin"},
              {"targets", json::array({json{{"provider", provider_name}, {"model", "m"}}})}};
}

class ControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rolter-control-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    open();
  }
  void TearDown() override {
    control_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  void open(ControlPlane::Prepare prepare = {}) {
    control_.reset();
    store_.reset();
    auto store = Store::open("sqlite:" + (dir_ / "rolter.db").string());
    ASSERT_TRUE(store) << store.error();
    store_ = std::move(*store);
    control_ = std::make_unique<ControlPlane>(ControlPlane::Options{
        .store = store_.get(),
        .admin_token = "env-admin-token",
        .node_token = "node-token",
        .prepare = std::move(prepare),
        .now_ms = [] { return int64_t{1700000000000}; },
    });
    ASSERT_TRUE(control_->start().empty());
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ControlPlane> control_;
};

TEST(TomlJson, RoundTripsKeyForKey) {
  const toml::table table = toml::parse(R"(
name = "r"
strategy = "weighted"
[[targets]]
provider = "a"
model = "m"
weight = 2.5
[cost]
input = 1
)");
  const json j = toml_to_json(table);
  EXPECT_EQ(j, json::parse(R"({"name":"r","strategy":"weighted",
      "targets":[{"provider":"a","model":"m","weight":2.5}],"cost":{"input":1}})"));
  toml::table back;
  std::string problem;
  ASSERT_TRUE(json_to_toml(j, back, problem)) << problem;
  EXPECT_EQ(toml_to_json(back), j);
}

TEST(TomlJson, IntegralFloatsBecomeIntegersAndNullsAreLeftOut) {
  toml::table out;
  std::string problem;
  ASSERT_TRUE(json_to_toml(json::parse(R"({"max_loras": 8.0, "weight": 0.5, "gone": null})"), out,
                           problem));
  EXPECT_TRUE(out["max_loras"].is_integer());
  EXPECT_TRUE(out["weight"].is_floating_point());
  EXPECT_FALSE(out.contains("gone"));
  EXPECT_FALSE(json_to_toml(json::parse(R"({"routes": ["a", null]})"), out, problem));
  EXPECT_NE(problem.find("routes[1]"), std::string::npos) << problem;
}

TEST(ConfigDocument, LeavesOutLocalSectionsAndTracesErrorsToTheirEntity) {
  const std::vector<Entity> entities = {
      {EntityKind::kProvider, "b", provider("b").dump()},
      {EntityKind::kRoute, "r2", route("r2", "missing").dump()},
  };
  auto doc = build_document(
      "[store]\nurl = \"sqlite:x.db\"\n[[providers]]\nname = \"a\"\nbase_url = "
      "\"http://127.0.0.1:1\"\n[[routes]]\nname = \"r1\"\n[[routes.targets]]\nprovider = "
      "\"a\"\nmodel = \"m\"\n",
      entities, "");
  ASSERT_TRUE(doc) << doc.error();
  EXPECT_EQ(doc->text.find("[store]"), std::string::npos) << doc->text;
  auto loaded = load_config_text(doc->text, "doc");
  ASSERT_FALSE(loaded);
  const TracedError traced = trace_error(loaded.error().front(), doc->origins);
  ASSERT_TRUE(traced.origin);
  EXPECT_EQ(traced.origin->kind, EntityKind::kRoute);
  EXPECT_EQ(traced.origin->name, "r2");
  EXPECT_FALSE(traced.origin->from_file);
  EXPECT_EQ(traced.field, "targets[0].provider");
}

TEST_F(ControlPlaneTest, VersionMovesOnlyWhenTheDocumentDoesAndSurvivesARestart) {
  const uint64_t first = control_->version();
  EXPECT_GE(first, 1u);
  ASSERT_TRUE(control_->put_entity(EntityKind::kProvider, "a", provider("a"), true, kOps));
  const uint64_t second = control_->version();
  EXPECT_EQ(second, first + 1);
  // The same content again: stored and audited, but the document, and so the version, stay.
  ASSERT_TRUE(control_->put_entity(EntityKind::kProvider, "a", provider("a"), false, kOps));
  EXPECT_EQ(control_->version(), second);
  EXPECT_EQ(store_->audit("", 10, 0)->size(), 2u);
  open();
  EXPECT_EQ(control_->version(), second) << "a restart keeps the version";
  ASSERT_TRUE(control_->put_entity(EntityKind::kRoute, "r", route("r", "a"), true, kOps));
  EXPECT_EQ(control_->version(), second + 1);
}

TEST_F(ControlPlaneTest, AnInvalidWriteNamesTheFieldAndStoresNothing) {
  auto refused = control_->put_entity(EntityKind::kRoute, "r", route("r", "nope"), true, kOps);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, 400u);
  EXPECT_EQ(refused.error().param, "targets[0].provider");
  EXPECT_TRUE(store_->entities()->empty());
  EXPECT_TRUE(store_->audit("", 10, 0)->empty());
}

TEST_F(ControlPlaneTest, AWriteTheLocalDataPlaneCannotBuildIsRefusedBeforeItIsStored) {
  std::atomic<int> published{0};
  open([&](const std::string& text,
           uint64_t) -> tl::expected<std::function<void()>, std::vector<std::string>> {
    if (text.find("refuse-me") != std::string::npos) {
      return tl::unexpected(std::vector<std::string>{"no"});
    }
    return [&] { ++published; };
  });
  const int before = published.load();
  auto refused =
      control_->put_entity(EntityKind::kProvider, "refuse-me", provider("refuse-me"), true, kOps);
  ASSERT_FALSE(refused);
  EXPECT_EQ(published.load(), before);
  EXPECT_TRUE(store_->entities()->empty());
  ASSERT_TRUE(control_->put_entity(EntityKind::kProvider, "a", provider("a"), true, kOps));
  EXPECT_EQ(published.load(), before + 1);
}

TEST_F(ControlPlaneTest, LongPollWaitersWakeOnAChangeOrAtShutdown) {
  std::atomic<int> woken{0};
  const uint64_t now = control_->version();
  control_->on_change(now - 1, [&] { ++woken; });
  EXPECT_EQ(woken.load(), 1) << "an old version wakes at once";
  const uint64_t ticket = control_->on_change(now, [&] { ++woken; });
  EXPECT_NE(ticket, 0u);
  EXPECT_EQ(woken.load(), 1);
  ASSERT_TRUE(control_->put_entity(EntityKind::kProvider, "a", provider("a"), true, kOps));
  EXPECT_EQ(woken.load(), 2);
  control_->on_change(control_->version(), [&] { ++woken; });
  control_->shutdown();
  EXPECT_EQ(woken.load(), 3);
}

TEST_F(ControlPlaneTest, AdminTokensAreCheckedByDigestAndRevocable) {
  EXPECT_EQ(control_->admin("env-admin-token")->role, "superadmin");
  EXPECT_FALSE(control_->admin("env-admin-tokeN"));
  auto created = control_->create_admin_token("viewer-1", "viewer", kOps);
  ASSERT_TRUE(created);
  const std::string token = created->second;
  EXPECT_EQ(control_->admin(token)->role, "viewer");
  std::string wrong = token;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_FALSE(control_->admin(wrong)) << "same id, other secret";
  const auto tokens = store_->admin_tokens();
  ASSERT_TRUE(tokens);
  for (const auto& stored : *tokens) {
    EXPECT_EQ(stored.sha256_hex.find(token), std::string::npos);
  }
  ASSERT_TRUE(control_->revoke_admin_token(created->first.id, kOps));
  EXPECT_FALSE(control_->admin(token));
  EXPECT_TRUE(control_->node_token_ok("node-token"));
  EXPECT_FALSE(control_->node_token_ok("node-tokeN"));
}

TEST_F(ControlPlaneTest, AKeyIsShownOnceAndAuthenticatesOnlyByItsSaltedDigest) {
  ASSERT_TRUE(control_->put_entity(EntityKind::kProvider, "a", provider("a"), true, kOps));
  auto created = control_->create_key(json{{"name", "team"}}, kOps);
  ASSERT_TRUE(created);
  const std::string key = created->second;
  EXPECT_FALSE(created->first.json.contains("key_sha256"));
  EXPECT_EQ(control_->document().find(key), std::string::npos);
  auto loaded = load_config_text(control_->document(), "doc");
  ASSERT_TRUE(loaded);
  LoadTracker tracker;
  auto snapshot = build_snapshot(std::move(loaded->config), tracker, BalancerDeps{}, 1, nullptr);
  ASSERT_TRUE(snapshot);
  const ApiKey* found = (*snapshot)->authenticate(key);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->name, "team");
  std::string wrong = key;
  wrong.back() = wrong.back() == '0' ? '1' : '0';
  EXPECT_EQ((*snapshot)->authenticate(wrong), nullptr);
  EXPECT_EQ((*snapshot)->authenticate(key.substr(3)), nullptr);
}

TEST_F(ControlPlaneTest, TheAdaptivePolicyIsSanitisedAndAnAllZeroBlendRefused) {
  auto zero = control_->put_adaptive_policy(
      json{{"latency_weight", 0}, {"cost_weight", -1}, {"load_weight", 0}}, kOps);
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().param, "latency_weight");
  auto set = control_->put_adaptive_policy(json{{"enabled", true}, {"exploration_ratio", 2}}, kOps);
  ASSERT_TRUE(set);
  EXPECT_EQ((*set)["exploration_ratio"], 0.5);
  EXPECT_NE(control_->document().find("exploration_ratio = 0.5"), std::string::npos)
      << control_->document();
  EXPECT_FALSE(control_->put_adaptive_policy(json{{"colour", 1}}, kOps));
}

}  // namespace
}  // namespace rolter
