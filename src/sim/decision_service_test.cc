#include "sim/decision_service.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

std::string request(const Json& state, const Json& criteria) {
  return Json{{"state", state},
              {"model", "jev-latest"},
              {"questions",
               {{"model_selection",
                 {{"type", "choice"}, {"instructions", "pick"}, {"criteria", criteria}}}}}}
      .dump();
}

Json chat(std::string_view text) {
  return Json{{"model", "r"}, {"messages", {{{"role", "user"}, {"content", text}}}}};
}

const Json kDescribed = {{"qwen3-32b", "reasoning, math, code"},
                         {"qwen3-0.6b", "fast, simple requests"}};
const Json kUndescribed = {{"m-8b", nullptr}, {"m-0.6b", nullptr}, {"m-32b", nullptr}};

TEST(DecisionService, Table) {
  struct Case {
    const char* what;
    Json state;
    Json criteria;
    std::string choice;
    double confidence;
  };
  const Case cases[] = {
      {"a greeting: the fast model", chat("hello there!"), kDescribed, "qwen3-0.6b", 0.9},
      {"prove and write code: the reasoning model",
       chat("Prove that sqrt(2) is irrational and write code that checks it"), kDescribed,
       "qwen3-32b", 0.9},
      {"one keyword: hard, less sure", chat("what does this function do?"), kDescribed, "qwen3-32b",
       0.6},
      {"a long prompt is a signal", chat(std::string(kLongPrompt + 1, 'a')), kDescribed,
       "qwen3-32b", 0.6},
      {"no descriptions, easy: the smallest by name", chat("hi"), kUndescribed, "m-0.6b", 0.9},
      {"no descriptions, hard: the largest by name", chat("Derive the equation step by step"),
       kUndescribed, "m-32b", 0.9},
      {"a string state is the text", "please debug this algorithm", kUndescribed, "m-32b", 0.9},
      {"completions prompt", Json{{"prompt", "prove the theorem"}}, kUndescribed, "m-32b", 0.9},
      {"responses input", Json{{"input", {{{"role", "user"}, {"content", "hello"}}}}}, kUndescribed,
       "m-0.6b", 0.9},
      {"content parts and an Anthropic system prompt",
       Json{{"system", "you are a math tutor"},
            {"messages",
             {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "a proof please"}}}}}}}},
       kUndescribed, "m-32b", 0.9},
      {"no state: easy", nullptr, kUndescribed, "m-0.6b", 0.9},
      {"one model: it is the choice", chat("prove it"), Json{{"only", nullptr}}, "only", 0.6},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const auto reply = answer_systemone(request(c.state, c.criteria));
    ASSERT_TRUE(reply) << reply.error();
    const Json& selection = (*reply)["answers"]["model_selection"];
    EXPECT_EQ(selection["choice"], c.choice);
    EXPECT_DOUBLE_EQ(selection["confidence"].get<double>(), c.confidence);
    double sum = 0;
    for (const auto& [model, p] : selection["probabilities"].items()) {
      EXPECT_TRUE(c.criteria.contains(model));
      sum += p.get<double>();
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
    EXPECT_EQ(selection["probabilities"].size(), c.criteria.size());
    const double chosen = selection["probabilities"][c.choice].get<double>();
    EXPECT_DOUBLE_EQ(chosen, c.criteria.size() == 1 ? 1.0 : kChoiceProbability);
  }
}

TEST(DecisionService, BadRequests) {
  EXPECT_FALSE(answer_systemone("not json"));
  EXPECT_FALSE(answer_systemone("[]"));
  EXPECT_FALSE(answer_systemone(R"({"state":{}})"));
  EXPECT_FALSE(answer_systemone(request(chat("hi"), Json::object())));
  EXPECT_FALSE(answer_systemone(request(chat("hi"), Json::array({"a", "b"}))));
}

TEST(ModelSizeHint, Table) {
  EXPECT_DOUBLE_EQ(model_size_hint("qwen3-0.6b"), 0.6);
  EXPECT_DOUBLE_EQ(model_size_hint("qwen3-32b"), 32);
  EXPECT_DOUBLE_EQ(model_size_hint("Llama-3.1-8B-Instruct"), 8);
  EXPECT_DOUBLE_EQ(model_size_hint("sim-model"), 0);
  EXPECT_DOUBLE_EQ(model_size_hint("bert-base"), 0);
  EXPECT_DOUBLE_EQ(model_size_hint("x-7bit"), 0) << "b must end a word";
}

TEST(Difficulty, CountsDistinctKeywordsAndLength) {
  EXPECT_EQ(difficulty("hello"), 0);
  EXPECT_EQ(difficulty("PROVE it, prove it again"), 1);
  EXPECT_EQ(difficulty("prove this and implement that"), 2);
  EXPECT_EQ(difficulty(std::string(kLongPrompt + 1, 'x')), 1);
}

}  // namespace
}  // namespace rolter::sim
