#include "control/catalog.h"

#include <gtest/gtest.h>

#include "config/loader.h"

namespace rolter {
namespace {

using json = nlohmann::json;

constexpr const char* kConfig = R"(
[[providers]]
name = "a"
base_url = "http://127.0.0.1:9001"
[[providers]]
name = "b"
[[providers.instances]]
base_url = "http://127.0.0.1:9002"
[[providers.instances]]
base_url = "http://127.0.0.1:9003"

[[routes]]
name = "weighted"
strategy = "weighted"
targets = [{provider = "a", model = "m", weight = 3}, {provider = "b", model = "m", weight = 1}]
[[routes]]
name = "rr"
strategy = "round_robin"
targets = [{provider = "a", model = "m", weight = 3}, {provider = "b", model = "m", weight = 1}]
[[routes]]
name = "policy-weights"
strategy = "policy"
targets = [{provider = "a", model = "m", weight = 1}, {provider = "b", model = "m", weight = 4}]
[[routes]]
name = "policy-plugins"
strategy = "policy"
targets = [{provider = "a", model = "m", weight = 1}, {provider = "b", model = "m", weight = 4}]
[routes.policy.least_inflight]
weight = 1
[[routes]]
name = "policy-some-unweighted"
strategy = "policy"
targets = [{provider = "a", model = "m"}, {provider = "b", model = "m"}]
[[routes]]
name = "adaptive"
strategy = "adaptive"
targets = [{provider = "a", model = "m"}, {provider = "b", model = "m"}]

[[provider_groups]]
slug = "fleet"
strategy = "weighted"
members = [{provider = "a", weight = 1, upstream_model = "up"}, {provider = "b", weight = 1}]
)";

const json* find(const json& catalog, std::string_view name) {
  for (const auto& e : catalog["data"]) {
    if (e["name"] == name) return &e;
  }
  return nullptr;
}

TEST(Catalog, ShareOnlyWhereTheStrategyReadsWeights) {
  auto loaded = load_config_text(kConfig, "catalog");
  ASSERT_TRUE(loaded) << loaded.error().front().to_string();
  const json catalog = catalog_json(loaded->config, [](std::string_view kind,
                                                       const std::string& name) {
    return kind == "route" && name == "rr";
  });
  struct Case {
    const char* name;
    bool reads_weights;
    std::vector<json> shares;
  };
  const Case cases[] = {
      {"weighted", true, {0.75, 0.25}},
      {"rr", false, {nullptr, nullptr}},
      {"policy-weights", true, {0.2, 0.8}},        // target-weight mode
      {"policy-plugins", false, {nullptr, nullptr}},  // a plugin decides
      {"policy-some-unweighted", false, {nullptr, nullptr}},
      {"adaptive", true, {0.5, 0.5}},  // its fallback stack
      {"fleet", true, {0.5, 0.5}},
  };
  for (const Case& c : cases) {
    const json* e = find(catalog, c.name);
    ASSERT_NE(e, nullptr) << c.name;
    EXPECT_EQ((*e)["reads_weights"], c.reads_weights) << c.name;
    EXPECT_EQ((*e)["weights_note"].is_null(), c.reads_weights) << c.name;
    ASSERT_EQ((*e)["targets"].size(), c.shares.size()) << c.name;
    for (size_t i = 0; i < c.shares.size(); ++i) {
      const json& share = (*e)["targets"][i]["share"];
      if (c.shares[i].is_null()) {
        EXPECT_TRUE(share.is_null()) << c.name << " " << i;
      } else {
        EXPECT_NEAR(share.get<double>(), c.shares[i].get<double>(), 1e-9) << c.name << " " << i;
      }
    }
  }
  const json& rr = *find(catalog, "rr");
  EXPECT_EQ(rr["weights_note"], "strategy round_robin ignores weights");
  EXPECT_EQ(rr["read_only"], true);
  EXPECT_EQ((*find(catalog, "weighted"))["read_only"], false);
  EXPECT_EQ((*find(catalog, "weighted"))["targets"][1]["instances"], 2);
  const json& fleet = *find(catalog, "fleet");
  EXPECT_EQ(fleet["kind"], "provider_group");
  EXPECT_EQ(fleet["targets"][0]["model"], "up");
  EXPECT_TRUE(fleet["targets"][1]["model"].is_null());  // passthrough
}

TEST(Catalog, StrategiesForThePicker) {
  const json strategies = strategies_json();
  std::map<std::string, json> by_name;
  for (const auto& s : strategies["data"]) by_name[s["name"].get<std::string>()] = s;
  EXPECT_EQ(by_name.size(), 17u);
  EXPECT_EQ(by_name["adaptive"]["per_route"], false);
  EXPECT_EQ(by_name["round_robin"]["per_route"], true);
  EXPECT_EQ(by_name["policy"]["per_route"], true);
  EXPECT_EQ(by_name["precise_cache_aware"]["telemetry"], "kv_events");
  EXPECT_EQ(by_name["lmcache_aware"]["telemetry"], "lmcache");
  EXPECT_TRUE(by_name["weighted"]["telemetry"].is_null());
  EXPECT_EQ(by_name["weighted"]["reads_weights"], true);
  EXPECT_EQ(by_name["random"]["reads_weights"], false);
  // One default: what a route that names no strategy gets (RouteConfig's own default).
  size_t defaults = 0;
  for (const auto& [name, s] : by_name) defaults += s["default"].get<bool>() ? 1 : 0;
  EXPECT_EQ(defaults, 1u);
  EXPECT_EQ(by_name[RouteConfig{}.strategy]["default"], true);
  for (const auto& [name, s] : by_name) EXPECT_FALSE(s["summary"].get<std::string>().empty()) << name;
}

}  // namespace
}  // namespace rolter
