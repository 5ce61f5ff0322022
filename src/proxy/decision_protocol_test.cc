#include "proxy/decision_protocol.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace rolter {
namespace {

using Json = nlohmann::json;

PolicyRoute::Decision two_models() {
  PolicyRoute::Decision d;
  d.model = "jev-latest";
  d.instructions = "Pick the smallest model that can handle the request well.";
  d.criteria = {{"qwen3-0.6b", "fast, simple requests"}, {"qwen3-32b", std::nullopt}};
  return d;
}

// ---------------------------------------------------------------------------------------------
// The request body.

TEST(DecisionRequestBody, EmbedsAJsonBodyAndNamesEveryModel) {
  const std::string client = R"({"model":"r","messages":[{"role":"user","content":"h\u00e9"}]})";
  const Json body = Json::parse(decision_request_body(client, two_models()));
  EXPECT_EQ(body["state"], Json::parse(client));
  EXPECT_EQ(body["model"], "jev-latest");
  const Json& q = body["questions"]["model_selection"];
  EXPECT_EQ(q["type"], "choice");
  EXPECT_EQ(q["instructions"], "Pick the smallest model that can handle the request well.");
  EXPECT_EQ(q["criteria"], Json::parse(R"({"qwen3-0.6b":"fast, simple requests",
                                           "qwen3-32b":null})"));
  // The body is embedded byte for byte, not re-serialised.
  EXPECT_NE(decision_request_body(client, two_models()).find(client), std::string::npos);
}

TEST(DecisionRequestBody, TextWhenNotJsonOrOverTheBound) {
  struct Case {
    const char* what;
    std::string client;
    std::string state;  // the expected string value of `state`
  };
  const std::string big = R"({"input":")" + std::string(kMaxDecisionStateBytes, 'a') + R"("})";
  // A two-byte character straddling the bound is dropped whole.
  std::string straddle(kMaxDecisionStateBytes - 1, 'b');
  straddle += "\xc3\xa9tail";
  const Case cases[] = {
      {"not JSON", "{\"input\": \"unterminated", "{\"input\": \"unterminated"},
      {"empty", "", ""},
      {"over 64 KiB: its prefix", big, big.substr(0, kMaxDecisionStateBytes)},
      {"a character cut at the bound", straddle, std::string(kMaxDecisionStateBytes - 1, 'b')},
      {"invalid UTF-8 becomes '?'", "not json \xff\xfe", "not json ??"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const Json body = Json::parse(decision_request_body(c.client, two_models()));
    ASSERT_TRUE(body["state"].is_string());
    EXPECT_EQ(body["state"].get<std::string>(), c.state);
    EXPECT_EQ(body["model"], "jev-latest");
  }
  // Exactly at the bound a JSON body is still embedded.
  const std::string at_bound =
      R"({"input":")" + std::string(kMaxDecisionStateBytes - 12, 'a') + R"("})";
  ASSERT_EQ(at_bound.size(), kMaxDecisionStateBytes);
  EXPECT_TRUE(Json::parse(decision_request_body(at_bound, two_models()))["state"].is_object());
}

// ---------------------------------------------------------------------------------------------
// The reply.

TEST(ReadDecisionReply, Table) {
  using Probabilities = std::vector<std::pair<std::string, double>>;
  struct Case {
    const char* what;
    std::string_view body;
    bool votes;
    std::string_view choice = {};
    Probabilities probabilities = {};
    double confidence = 0;
  };
  const Case cases[] = {
      {"valid",
       R"({"answers":{"model_selection":{"choice":"b","probabilities":{"a":0.1,"b":0.9},
           "confidence":0.9}}})",
       true,
       "b",
       {{"a", 0.1}, {"b", 0.9}},
       0.9},
      {"fields in any order, extra fields ignored",
       R"({"id":1,"answers":{"other":{},"model_selection":{"confidence":1,"extra":[1],
           "probabilities":{"a":1,"b":0},"choice":"a"}}})",
       true,
       "a",
       {{"a", 1.0}, {"b", 0.0}},
       1.0},
      {"a low confidence still votes (it scales the weight)",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":{"a":0.6,"b":0.4},
           "confidence":0.2}}})",
       true,
       "a",
       {{"a", 0.6}, {"b", 0.4}},
       0.2},
      {"no probabilities: the choice gets 1",
       R"({"answers":{"model_selection":{"choice":"a","confidence":0.5}}})",
       true,
       "a",
       {{"a", 1.0}},
       0.5},
      {"empty probabilities: the choice gets 1",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":{},"confidence":0.5}}})",
       true,
       "a",
       {{"a", 1.0}},
       0.5},
      {"a model named twice: the first value",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":{"a":0.7,"a":0.2},
           "confidence":0.5}}})",
       true,
       "a",
       {{"a", 0.7}},
       0.5},
      {"confidence 0", R"({"answers":{"model_selection":{"choice":"a","confidence":0}}})", false},
      {"confidence 1.5", R"({"answers":{"model_selection":{"choice":"a","confidence":1.5}}})",
       false},
      {"confidence -1", R"({"answers":{"model_selection":{"choice":"a","confidence":-1}}})", false},
      {"confidence a string",
       R"({"answers":{"model_selection":{"choice":"a","confidence":"0.9"}}})", false},
      {"confidence null", R"({"answers":{"model_selection":{"choice":"a","confidence":null}}})",
       false},
      {"no confidence", R"({"answers":{"model_selection":{"choice":"a"}}})", false},
      {"no choice", R"({"answers":{"model_selection":{"confidence":0.9}}})", false},
      {"choice not a string", R"({"answers":{"model_selection":{"choice":1,"confidence":0.9}}})",
       false},
      {"a probability above 1",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":{"a":1.2},
           "confidence":0.9}}})",
       false},
      {"a negative probability",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":{"a":-0.1},
           "confidence":0.9}}})",
       false},
      {"a probability not a number",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":{"a":"0.5"},
           "confidence":0.9}}})",
       false},
      {"probabilities not an object",
       R"({"answers":{"model_selection":{"choice":"a","probabilities":[0.5],
           "confidence":0.9}}})",
       false},
      {"no model_selection", R"({"answers":{"other":{"choice":"a","confidence":0.9}}})", false},
      {"missing answers", R"({"model_selection":{"choice":"a","confidence":0.9}})", false},
      {"answers not an object", R"({"answers":[]})", false},
      {"truncated", R"({"answers":{"model_selection":{"choice":"a","confidence":0.9)", false},
      {"not JSON", "<html>502 Bad Gateway</html>", false},
      {"empty", "", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto verdict = read_decision_reply(c.body);
    ASSERT_EQ(verdict.has_value(), c.votes) << (verdict ? verdict->choice : verdict.error());
    if (!verdict) continue;
    EXPECT_EQ(verdict->choice, c.choice);
    EXPECT_EQ(verdict->probabilities, c.probabilities);
    EXPECT_DOUBLE_EQ(verdict->confidence, c.confidence);
  }
}

// A verdict keeps only the route's models, however many the service named.
TEST(KeepRouteModels, DropsModelsTheRouteDoesNotServe) {
  DecisionVerdict v;
  v.choice = "gpt-9";
  v.probabilities = {{"qwen3-32b", 0.5}, {"gpt-9", 0.3}, {"qwen3-0.6b", 0.2}, {"x", 0.0}};
  keep_route_models(v, two_models());
  const std::vector<std::pair<std::string, double>> expected = {{"qwen3-32b", 0.5},
                                                                {"qwen3-0.6b", 0.2}};
  EXPECT_EQ(v.probabilities, expected);
  EXPECT_EQ(v.choice, "") << "a choice outside the route is cleared";
  v.choice = "qwen3-0.6b";
  keep_route_models(v, two_models());
  EXPECT_EQ(v.choice, "qwen3-0.6b");
}

}  // namespace
}  // namespace rolter
