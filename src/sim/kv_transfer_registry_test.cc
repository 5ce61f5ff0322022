#include "sim/kv_transfer_registry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace rolter::sim {
namespace {

using Clock = KvTransferRegistry::Clock;

const std::vector<uint64_t> kPrompt = {11, 22, 33};

struct Fixture {
  KvTransferRegistry registry;
  std::vector<uint64_t> released;  // hold ids given back through the Release callback
  Clock::time_point t0 = Clock::now();

  Fixture() {
    registry.add_engine("sim-1-0", "127.0.0.1", 8100,
                        [this](uint64_t id) { released.push_back(id); });
    registry.add_engine("sim-1-1", "127.0.0.1", 8101,
                        [this](uint64_t id) { released.push_back(id); });
    registry.add_hold("sim-1-0", {.id = 7,
                                  .block_ids = {4, 5, 6},
                                  .hashes = kPrompt,
                                  .expires = t0 + std::chrono::seconds(30)});
  }
};

KvTransferParams good() {
  return {.do_remote_prefill = true,
          .remote_engine_id = "sim-1-0",
          .remote_block_ids = {4, 5, 6},
          .remote_host = "127.0.0.1",
          .remote_port = 8100};
}

TEST(KvTransferRegistry, ClaimTakesTheHoldOnceAndReleasesIt) {
  Fixture f;
  auto hold = f.registry.claim(good(), kPrompt, f.t0);
  ASSERT_TRUE(hold) << hold.error();
  EXPECT_EQ(hold->id, 7u);
  EXPECT_EQ(f.released, (std::vector<uint64_t>{7}));
  EXPECT_EQ(f.registry.holds("sim-1-0"), 0u);
  auto again = f.registry.claim(good(), kPrompt, f.t0);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().find("pulled already"), std::string::npos) << again.error();
  EXPECT_EQ(f.released.size(), 1u);
}

// Every refusal: what is wrong, a word the message must carry, and whether the hold survives.
TEST(KvTransferRegistry, RefusesUnusableParameters) {
  struct Case {
    const char* name;
    void (*change)(KvTransferParams&, std::vector<uint64_t>&);
    const char* says;
    bool hold_survives;
  };
  const Case cases[] = {
      {"malformed", [](KvTransferParams& p, auto&) { p.remote_error = "remote_port must be"; },
       "remote_port must be", true},
      {"unknown port", [](KvTransferParams& p, auto&) { p.remote_port = 9999; },
       "no engine of this rolter-sim process listens on 127.0.0.1:9999", true},
      {"unknown host", [](KvTransferParams& p, auto&) { p.remote_host = "10.0.0.1"; }, "no engine",
       true},
      {"other process", [](KvTransferParams& p, auto&) { p.remote_engine_id = "sim-2-0"; },
       "does not match the engine at 127.0.0.1:8100 ('sim-1-0')", true},
      {"id of another engine", [](KvTransferParams& p, auto&) { p.remote_engine_id = "sim-1-1"; },
       "does not match", true},
      {"blocks not held",
       [](KvTransferParams& p, auto&) {
         p.remote_block_ids = {4, 5};
       },
       "are not held for a pull", true},
      {"other engine's blocks",
       [](KvTransferParams& p, auto&) {
         p.remote_engine_id = "sim-1-1";
         p.remote_port = 8101;
       },
       "are not held", true},
      {"another prompt",
       [](KvTransferParams&, std::vector<uint64_t>& h) {
         h = {11, 22, 34};
       },
       "hold another prompt", true},
      {"shorter prompt",
       [](KvTransferParams&, std::vector<uint64_t>& h) {
         h = {11, 22};
       },
       "hold another prompt", true},
  };
  for (const Case& c : cases) {
    Fixture f;
    KvTransferParams params = good();
    std::vector<uint64_t> prompt = kPrompt;
    c.change(params, prompt);
    auto hold = f.registry.claim(params, prompt, f.t0);
    ASSERT_FALSE(hold) << c.name;
    EXPECT_NE(hold.error().find(c.says), std::string::npos) << c.name << ": " << hold.error();
    EXPECT_EQ(f.registry.holds("sim-1-0"), c.hold_survives ? 1u : 0u) << c.name;
    EXPECT_TRUE(f.released.empty()) << c.name;
  }
}

TEST(KvTransferRegistry, AnExpiredHoldIsRefusedAndReleased) {
  Fixture f;
  auto hold = f.registry.claim(good(), kPrompt, f.t0 + std::chrono::seconds(31));
  ASSERT_FALSE(hold);
  EXPECT_NE(hold.error().find("expired"), std::string::npos) << hold.error();
  EXPECT_EQ(f.released, (std::vector<uint64_t>{7}));  // its timer would find nothing left
  EXPECT_FALSE(f.registry.drop("sim-1-0", 7));
}

TEST(KvTransferRegistry, ADroppedHoldSaysExpired) {
  Fixture f;
  EXPECT_TRUE(f.registry.drop("sim-1-0", 7));
  EXPECT_FALSE(f.registry.drop("sim-1-0", 7));
  EXPECT_TRUE(f.released.empty());  // the dropper releases the blocks itself
  auto hold = f.registry.claim(good(), kPrompt, f.t0);
  ASSERT_FALSE(hold);
  EXPECT_NE(hold.error().find("expired (--kv-hold-ms)"), std::string::npos) << hold.error();
}

TEST(KvTransferParams, ReadsTheHandshakeFields) {
  using Json = nlohmann::json;
  auto none = read_kv_transfer_params(Json{{"model", "m"}});
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  auto step1 = read_kv_transfer_params(Json::parse(
      R"({"kv_transfer_params":{"do_remote_decode":true,"do_remote_prefill":false,
          "remote_engine_id":null,"remote_block_ids":null,"remote_host":null,"remote_port":null}})"));
  ASSERT_TRUE(step1 && *step1);
  EXPECT_TRUE((*step1)->do_remote_decode);
  EXPECT_TRUE((*step1)->remote_error.empty());
  auto step2 = read_kv_transfer_params(Json::parse(
      R"({"kv_transfer_params":{"do_remote_prefill":true,"remote_engine_id":"sim-1-0",
          "remote_block_ids":[4,5],"remote_host":"h","remote_port":8100,"tp_size":1}})"));
  ASSERT_TRUE(step2 && *step2);
  EXPECT_EQ((*step2)->remote_block_ids, (std::vector<uint32_t>{4, 5}));
  EXPECT_EQ((*step2)->remote_port, 8100);
  EXPECT_TRUE((*step2)->remote_error.empty());

  // Unusable remote fields are kept as remote_error (a 503), not a failed read (a 400).
  const std::pair<const char*, const char*> unusable[] = {
      {R"({"do_remote_prefill":true,"remote_engine_id":"e","remote_block_ids":[1],"remote_host":"h"})",
       "remote_port"},
      {R"({"do_remote_prefill":true,"remote_engine_id":"e","remote_block_ids":[1],"remote_host":"h","remote_port":70000})",
       "remote_port"},
      {R"({"do_remote_prefill":true,"remote_engine_id":"e","remote_block_ids":"1","remote_host":"h","remote_port":1})",
       "remote_block_ids"},
      {R"({"do_remote_prefill":true,"remote_engine_id":"e","remote_block_ids":[-1],"remote_host":"h","remote_port":1})",
       "remote_block_ids"},
      {R"({"do_remote_prefill":true,"remote_engine_id":null,"remote_block_ids":[1],"remote_host":"h","remote_port":1})",
       "remote_engine_id"},
      {R"({"do_remote_prefill":true,"remote_engine_id":"e","remote_block_ids":[1],"remote_port":1})",
       "remote_host"},
  };
  for (const auto& [text, field] : unusable) {
    auto read = read_kv_transfer_params(Json{{"kv_transfer_params", Json::parse(text)}});
    ASSERT_TRUE(read && *read) << text;
    EXPECT_NE((*read)->remote_error.find(field), std::string::npos) << text;
  }
  // A malformed field is a bad request.
  for (const char* text : {R"("yes")", R"({"do_remote_decode":"yes"})",
                           R"({"do_remote_decode":true,"do_remote_prefill":true})"}) {
    EXPECT_FALSE(read_kv_transfer_params(Json{{"kv_transfer_params", Json::parse(text)}})) << text;
  }
}

}  // namespace
}  // namespace rolter::sim
