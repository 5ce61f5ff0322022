// GET /api/v1/usage and POST /internal/v1/usage, through AdminApi::handle() over a SQLite store.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "control/admin_api.h"
#include "control/usage_query.h"
#include "usage/usage_json.h"

namespace rolter {
namespace {

using json = nlohmann::json;

constexpr int64_t kHour = 3'600'000;
constexpr int64_t kJan1 = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

TEST(UsageInstantTest, ReadsUnixMsDatesAndTimes) {
  const struct {
    std::string text;
    std::optional<int64_t> want;
  } kCases[] = {
      {"1767225600000", kJan1},
      {"0", 0},
      {"2026-01-01", kJan1},
      {"2026-01-01T10:00:00Z", kJan1 + 10 * kHour},
      {"2024-02-29", 1'709'164'800'000},
      {"1970-01-01T00:00:01Z", 1000},
      {"", std::nullopt},
      {"-5", std::nullopt},
      {"12ab", std::nullopt},
      {"2026-02-30", std::nullopt},
      {"2026-13-01", std::nullopt},
      {"2026-1-01", std::nullopt},
      {"2026-01-01T24:00:00Z", std::nullopt},
      {"2026-01-01T10:00:00", std::nullopt},
      {"2026-01-01 10:00:00Z", std::nullopt},
  };
  for (const auto& c : kCases) EXPECT_EQ(parse_usage_instant(c.text), c.want) << c.text;
}

class UsageApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("rolter-usage-api-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    auto store = Store::open("sqlite:" + (dir_ / "rolter.db").string());
    ASSERT_TRUE(store) << store.error();
    store_ = std::move(*store);
    control_ = std::make_unique<ControlPlane>(ControlPlane::Options{
        .store = store_.get(),
        .admin_token = "admin-token",
        .node_token = "node-token",
        .now_ms = [] { return kJan1 + 30 * kHour; },
    });
    ASSERT_TRUE(control_->start().empty());
    api_ = std::make_unique<AdminApi>(*control_, nullptr);
  }
  void TearDown() override {
    api_.reset();
    control_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  ControlResponse call(std::string_view method, std::string_view target,
                       std::string_view authorization, std::string_view body = "") {
    ControlRequest request{.method = method,
                           .target = target,
                           .authorization = authorization,
                           .header = [](std::string_view name) -> std::string_view {
                             return name == "x-rolter-node-id" ? "node-1" : "";
                           },
                           .body = body};
    return api_->handle(request);
  }
  json get(std::string_view target, unsigned want_status = 200) {
    auto r = call("GET", target, "Bearer admin-token");
    EXPECT_EQ(r.status, want_status) << target << ": " << r.body;
    return json::parse(r.body);
  }
  ControlResponse post_usage(const std::vector<UsageRow>& rows) {
    const std::string body = usage_rows_json(rows);
    return call("POST", "/internal/v1/usage", "Bearer node-token", body);
  }

  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<ControlPlane> control_;
  std::unique_ptr<AdminApi> api_;
};

TEST_F(UsageApiTest, ANodesBatchIsOneStoreWriteAndSumsByDayAndKey) {
  const std::vector<UsageRow> batch = {
      {{kJan1, "ci", "ml", "qwen3", "m1"},
       {.requests = 2,
        .input_tokens = 100,
        .cached_input_tokens = 50,
        .output_tokens = 20,
        .estimated = 1,
        .usd = 0.5}},
      {{kJan1 + kHour, "ops", "", "qwen3", "m1"}, {.requests = 1, .input_tokens = 10, .usd = 0.25}},
      {{kJan1 + 24 * kHour, "ci", "ml", "llama", "m2"}, {.requests = 4, .usd = 1}},
  };
  auto posted = post_usage(batch);
  ASSERT_EQ(posted.status, 200u) << posted.body;
  EXPECT_EQ(json::parse(posted.body)["accepted"], 3);
  EXPECT_EQ(get("/api/v1/usage/stats")["store_writes"], 1);

  const json by_day = get("/api/v1/usage?group_by=day,key&from=2026-01-01&to=2026-01-03");
  EXPECT_EQ(by_day["group_by"], json::array({"day", "key"}));
  ASSERT_EQ(by_day["data"].size(), 3u);
  EXPECT_EQ(by_day["data"][0]["day"], "2026-01-01");
  EXPECT_EQ(by_day["data"][0]["start_ms"], kJan1);
  EXPECT_EQ(by_day["data"][0]["key"], "ci");
  EXPECT_EQ(by_day["data"][0]["requests"], 2);
  EXPECT_EQ(by_day["data"][0]["cached_input_tokens"], 50);
  EXPECT_EQ(by_day["data"][0]["estimated"], 1);
  EXPECT_EQ(by_day["data"][2]["day"], "2026-01-02");
  EXPECT_EQ(by_day["totals"]["requests"], 7);
  EXPECT_DOUBLE_EQ(by_day["totals"]["usd"].get<double>(), 1.75);

  const json team = get("/api/v1/usage?team=ml&group_by=hour");
  ASSERT_EQ(team["data"].size(), 2u);
  EXPECT_EQ(team["data"][1]["hour"], "2026-01-02T00:00:00Z");
  EXPECT_EQ(team["to_ms"], nullptr);
  EXPECT_EQ(get("/api/v1/usage?route=qwen3&key=ops")["totals"]["requests"], 1);
  EXPECT_EQ(get("/api/v1/usage?from=2026-01-03")["data"].size(), 0u);
}

TEST_F(UsageApiTest, RefusesBadQueriesNamingTheParameter) {
  const struct {
    std::string target;
    std::string param;
  } kCases[] = {
      {"/api/v1/usage?from=yesterday", "from"},
      {"/api/v1/usage?to=2026-02-30", "to"},
      {"/api/v1/usage?from=2026-01-02&to=2026-01-01", "to"},
      {"/api/v1/usage?group_by=week", "group_by"},
      {"/api/v1/usage?group_by=day,hour", "group_by"},
      {"/api/v1/usage?group_by=key,key", "group_by"},
  };
  for (const auto& c : kCases) {
    const json error = get(c.target, 400)["error"];
    EXPECT_EQ(error["param"], c.param) << c.target;
    EXPECT_EQ(error["type"], "invalid_request_error") << c.target;
  }
  EXPECT_EQ(call("POST", "/api/v1/usage", "Bearer admin-token").status, 405u);
  EXPECT_EQ(call("GET", "/api/v1/usage", "").status, 401u);
}

TEST_F(UsageApiTest, TheInternalPostNeedsTheNodeTokenAndValidRowsAndWritesNothingElse) {
  const std::string good = usage_rows_json({{{kJan1, "ci", "", "r", "m"}, {.requests = 1}}});
  EXPECT_EQ(call("POST", "/internal/v1/usage", "Bearer admin-token", good).status, 401u);
  auto bad =
      call("POST", "/internal/v1/usage", "Bearer node-token", R"({"rows":[{"hour_ms":1000}]})");
  EXPECT_EQ(bad.status, 400u);
  EXPECT_EQ(json::parse(bad.body)["error"]["param"], "rows");
  EXPECT_EQ(call("POST", "/internal/v1/usage", "Bearer node-token", std::string(100, '[')).status,
            400u);
  EXPECT_EQ(get("/api/v1/usage/stats")["store_writes"], 0);
  EXPECT_EQ(get("/api/v1/usage")["data"].size(), 0u);
}

TEST_F(UsageApiTest, AViewerReads) {
  auto created = control_->create_admin_token("watcher", "viewer", Principal{"ops", "superadmin"});
  ASSERT_TRUE(created);
  auto r = call("GET", "/api/v1/usage?group_by=model", "Bearer " + created->second);
  EXPECT_EQ(r.status, 200u) << r.body;
}

}  // namespace
}  // namespace rolter
