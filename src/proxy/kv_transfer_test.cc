#include "proxy/kv_transfer.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace rolter {
namespace {

using nlohmann::json;

TEST(KvTransferTest, StepOneAsksForOneUnstreamedTokenAndARemoteDecode) {
  const std::string body =
      R"({"model":"chat","messages":[{"role":"user","content":"hi"}],"stream":true,)"
      R"("stream_options":{"include_usage":true},"max_tokens":300,"max_completion_tokens":300,)"
      R"("temperature":0.5})";
  const auto first = prefill_request_body(body, "llama-8b");
  ASSERT_TRUE(first.has_value());
  const json doc = json::parse(*first);
  EXPECT_EQ(doc["model"], "llama-8b");
  EXPECT_EQ(doc["stream"], false);
  EXPECT_FALSE(doc.contains("stream_options"));
  EXPECT_EQ(doc["max_tokens"], 1);
  EXPECT_EQ(doc["max_completion_tokens"], 1);
  EXPECT_EQ(doc["temperature"], 0.5);
  EXPECT_EQ(doc["messages"], json::parse(body)["messages"]);
  EXPECT_EQ(doc["kv_transfer_params"],
            json::parse(R"({"do_remote_decode":true,"do_remote_prefill":false,)"
                        R"("remote_engine_id":null,"remote_block_ids":null,"remote_host":null,)"
                        R"("remote_port":null})"));
  // max_completion_tokens is added only when the client set it.
  const auto plain = prefill_request_body(R"({"prompt":"x"})", "m");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(json::parse(*plain).contains("max_completion_tokens"));
}

TEST(KvTransferTest, StepOneRefusesWhatIsNotAnObject) {
  EXPECT_FALSE(prefill_request_body("[1,2]", "m").has_value());
  EXPECT_FALSE(prefill_request_body("{\"model\":", "m").has_value());
  EXPECT_FALSE(prefill_request_body("", "m").has_value());
}

TEST(KvTransferTest, TheParamsAreTakenByteForByte) {
  const std::string params =
      "{ \"do_remote_prefill\" : true,\"remote_engine_id\":\"e-1\",\"remote_block_ids\":[3, 1,"
      "2],\"remote_host\":\"10.0.0.7\",\"remote_port\":5600,\"tp_size\":1,\"x\":1.50e0}";
  const std::string answer = "{\"id\":\"cmpl-1\",\"choices\":[{\"text\":\"a\"}],"
                             "\"kv_transfer_params\":  " + params + " \n,\"usage\":{}}";
  const auto got = kv_transfer_params_of(answer);
  ASSERT_TRUE(got.has_value()) << got.error();
  EXPECT_EQ(*got, params);
  const std::string second =
      with_kv_transfer_params(R"({"model":"chat","stream":true})", *got);
  EXPECT_EQ(second, "{\"model\":\"chat\",\"stream\":true,\"kv_transfer_params\":" + params + "}");
}

TEST(KvTransferTest, AnswersWithoutUsableParamsAreErrors) {
  for (const char* answer : {"not json", "[1]", "{\"id\":1}", "{\"kv_transfer_params\":null}",
                             "{\"kv_transfer_params\":[1]}", "{\"kv_transfer_params\":{\"a\":}}"}) {
    EXPECT_FALSE(kv_transfer_params_of(answer).has_value()) << answer;
  }
}

TEST(KvTransferTest, StepTwoKeepsTheClientsBodyAndItsWhitespace) {
  EXPECT_EQ(with_kv_transfer_params("{}", "{\"a\":1}"), "{\"kv_transfer_params\":{\"a\":1}}");
  EXPECT_EQ(with_kv_transfer_params("{ \n }", "{}"), "{\"kv_transfer_params\":{} \n }");
  EXPECT_EQ(with_kv_transfer_params("{\"m\":1}\n", "{}"), "{\"m\":1,\"kv_transfer_params\":{}}\n");
  EXPECT_TRUE(carries_kv_transfer_params(R"({"kv_transfer_params":{}})"));
  EXPECT_TRUE(carries_kv_transfer_params("{\"model\":\"m\",\"kv_transfer_params\" : {}}"));
  EXPECT_FALSE(carries_kv_transfer_params(R"({"messages":"kv_transfer_params"})"));
  EXPECT_FALSE(carries_kv_transfer_params(R"({"messages":"say \"kv_transfer_params\": 1"})"));
}

}  // namespace
}  // namespace rolter
