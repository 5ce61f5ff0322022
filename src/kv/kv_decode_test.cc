// decode_kv_batch over both event encodings and both batch shapes vLLM has published, the hash
// forms, and malformed payloads (which must fail with a message, never crash or throw).
#include "kv/kv_decode.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rolter {
namespace {

using nlohmann::json;
using Kind = KvEventRecord::Kind;

std::vector<uint8_t> pack(const json& value) { return json::to_msgpack(value); }

json stored_array() {
  return json::array({"BlockStored", json::array({11, 12}), 10, json::array({1, 2, 3, 4}), 2,
                      nullptr, "GPU", "adapter"});
}
json removed_array() { return json::array({"BlockRemoved", json::array({11}), "GPU"}); }
json cleared_array() { return json::array({"AllBlocksCleared"}); }

json stored_map() {
  return {{"type", "BlockStored"},     {"block_hashes", {11, 12}}, {"parent_block_hash", 10},
          {"token_ids", {1, 2, 3, 4}}, {"block_size", 2},          {"lora_id", nullptr},
          {"medium", "GPU"},           {"lora_name", "adapter"}};
}
json removed_map() { return {{"type", "BlockRemoved"}, {"block_hashes", {11}}, {"medium", "GPU"}}; }
json cleared_map() { return {{"type", "AllBlocksCleared"}}; }

DecodedKvBatch decode_ok(const json& batch) {
  const std::vector<uint8_t> bytes = pack(batch);
  auto decoded = decode_kv_batch(bytes);
  EXPECT_TRUE(decoded.has_value()) << (decoded ? "" : decoded.error());
  return decoded ? *decoded : DecodedKvBatch{};
}

void expect_three_events(const DecodedKvBatch& decoded) {
  ASSERT_EQ(decoded.batch.events.size(), 3u);
  EXPECT_EQ(decoded.skipped_events, 0u);
  const KvEventRecord& stored = decoded.batch.events[0];
  ASSERT_EQ(stored.kind, Kind::kBlockStored);
  EXPECT_EQ(stored.stored.block_hashes, (std::vector<EngineBlockHash>{11, 12}));
  EXPECT_EQ(stored.stored.parent_block_hash, std::optional<EngineBlockHash>(10));
  EXPECT_EQ(stored.stored.token_ids, (std::vector<uint32_t>{1, 2, 3, 4}));
  EXPECT_EQ(stored.stored.block_size, 2u);
  EXPECT_EQ(stored.stored.medium, "GPU");
  EXPECT_EQ(stored.stored.lora_name, "adapter");
  const KvEventRecord& removed = decoded.batch.events[1];
  ASSERT_EQ(removed.kind, Kind::kBlockRemoved);
  EXPECT_EQ(removed.removed.block_hashes, (std::vector<EngineBlockHash>{11}));
  EXPECT_EQ(removed.removed.medium, "GPU");
  EXPECT_EQ(decoded.batch.events[2].kind, Kind::kAllBlocksCleared);
}

TEST(KvDecode, ArrayBatchOfArrayEvents) {
  const DecodedKvBatch decoded = decode_ok(
      json::array({1.5, json::array({stored_array(), removed_array(), cleared_array()}), 3}));
  EXPECT_DOUBLE_EQ(decoded.batch.ts, 1.5);
  EXPECT_EQ(decoded.batch.data_parallel_rank, std::optional<int64_t>(3));
  expect_three_events(decoded);
}

TEST(KvDecode, ArrayBatchOfMapEventsWithoutRank) {
  const DecodedKvBatch decoded =
      decode_ok(json::array({7, json::array({stored_map(), removed_map(), cleared_map()})}));
  EXPECT_DOUBLE_EQ(decoded.batch.ts, 7.0);  // an integer ts
  EXPECT_FALSE(decoded.batch.data_parallel_rank.has_value());
  expect_three_events(decoded);
}

TEST(KvDecode, MapBatchOfMapEvents) {
  const DecodedKvBatch decoded =
      decode_ok({{"ts", 2.25},
                 {"events", {stored_map(), removed_map(), cleared_map()}},
                 {"data_parallel_rank", 1}});
  EXPECT_DOUBLE_EQ(decoded.batch.ts, 2.25);
  EXPECT_EQ(decoded.batch.data_parallel_rank, std::optional<int64_t>(1));
  expect_three_events(decoded);
}

TEST(KvDecode, MapBatchOfArrayEventsWithNilRank) {
  const DecodedKvBatch decoded =
      decode_ok({{"ts", 0},
                 {"events", json::array({stored_array(), removed_array(), cleared_array()})},
                 {"data_parallel_rank", nullptr}});
  EXPECT_FALSE(decoded.batch.data_parallel_rank.has_value());
  expect_three_events(decoded);
}

TEST(KvDecode, OmittedDefaultsReadAsDefaults) {
  const json events = json::array({
      json::array({"BlockStored", json::array({5}), nullptr, json::array({1, 2}), 2}),
      json::array({"BlockRemoved", json::array({5})}),
      json{{"type", "BlockStored"}, {"block_hashes", {6}}, {"token_ids", {3, 4}}},
      json{{"type", "BlockRemoved"}, {"block_hashes", {6}}},
  });
  const DecodedKvBatch decoded = decode_ok(json::array({1, events}));
  ASSERT_EQ(decoded.batch.events.size(), 4u);
  const KvBlockStored& array_stored = decoded.batch.events[0].stored;
  EXPECT_FALSE(array_stored.parent_block_hash.has_value());
  EXPECT_EQ(array_stored.block_size, 2u);
  EXPECT_EQ(array_stored.lora_name, "");
  EXPECT_EQ(array_stored.medium, "");
  EXPECT_EQ(decoded.batch.events[1].removed.medium, "");
  const KvBlockStored& map_stored = decoded.batch.events[2].stored;
  EXPECT_FALSE(map_stored.parent_block_hash.has_value());
  EXPECT_EQ(map_stored.block_size, 0u);  // left out: the instance's configured size applies
  EXPECT_EQ(map_stored.token_ids, (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(decoded.batch.events[3].removed.block_hashes, (std::vector<EngineBlockHash>{6}));
}

TEST(KvDecode, ExtraTrailingFieldsAndKeysAreIgnored) {
  json map_event = stored_map();
  map_event["extra_keys"] = json::array({1});
  json array_event = stored_array();
  array_event.push_back(json::array({"future", "field"}));
  const DecodedKvBatch decoded = decode_ok(json::array({1, json::array({array_event, map_event})}));
  ASSERT_EQ(decoded.batch.events.size(), 2u);
  EXPECT_EQ(decoded.batch.events[1].stored.lora_name, "adapter");
}

TEST(KvDecode, HashForms) {
  constexpr uint64_t kLarge = 0xFEDCBA9876543210ULL;  // > 2^63
  const std::vector<uint8_t> bytes = {0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0x03, 0x04};
  const std::string text(bytes.begin(), bytes.end());
  const json event = json::array(
      {"BlockRemoved", json::array({kLarge, UINT64_MAX, -1, -2, json::binary(bytes), text, 0})});
  const DecodedKvBatch decoded = decode_ok(json::array({1, json::array({event})}));
  ASSERT_EQ(decoded.batch.events.size(), 1u);
  const uint64_t folded = XXH3_64bits(bytes.data(), bytes.size());
  EXPECT_EQ(decoded.batch.events[0].removed.block_hashes,
            (std::vector<EngineBlockHash>{kLarge, UINT64_MAX, UINT64_MAX, UINT64_MAX - 1, folded,
                                          folded, 0}));
}

TEST(KvDecode, ByteStringParentHash) {
  const std::vector<uint8_t> parent(32, 0xab);  // a sha256-sized hash
  json event = stored_map();
  event["parent_block_hash"] = json::binary(parent);
  event["block_hashes"] = json::array({json::binary(std::vector<uint8_t>(32, 0x01))});
  const DecodedKvBatch decoded = decode_ok(json::array({1, json::array({event})}));
  ASSERT_EQ(decoded.batch.events.size(), 1u);
  EXPECT_EQ(decoded.batch.events[0].stored.parent_block_hash,
            std::optional<EngineBlockHash>(XXH3_64bits(parent.data(), parent.size())));
}

TEST(KvDecode, UnknownEventTypesAreSkippedAndCounted) {
  const json events = json::array({json::array({"BlockMoved", 1, 2}), stored_array(),
                                   json{{"type", "Teleported"}, {"x", 1}}, cleared_array()});
  const DecodedKvBatch decoded = decode_ok(json::array({1, events}));
  EXPECT_EQ(decoded.skipped_events, 2u);
  ASSERT_EQ(decoded.batch.events.size(), 2u);
  EXPECT_EQ(decoded.batch.events[0].kind, Kind::kBlockStored);
  EXPECT_EQ(decoded.batch.events[1].kind, Kind::kAllBlocksCleared);
}

TEST(KvDecode, TokenIdBounds) {
  json event = stored_map();
  event["token_ids"] = json::array({0, UINT32_MAX});
  const DecodedKvBatch decoded = decode_ok(json::array({1, json::array({event})}));
  ASSERT_EQ(decoded.batch.events.size(), 1u);
  EXPECT_EQ(decoded.batch.events[0].stored.token_ids, (std::vector<uint32_t>{0, UINT32_MAX}));
}

json with(json event, const std::string& field, json value) {
  event[field] = std::move(value);
  return event;
}
json batch_of(const json& event) { return json::array({1, json::array({stored_array(), event})}); }

TEST(KvDecode, MalformedBatchesFailWithAMessage) {
  struct Case {
    const char* name;
    std::vector<uint8_t> payload;
    const char* error;  // a part of the expected message
  };
  const std::vector<uint8_t> valid = pack(batch_of(stored_map()));
  std::vector<uint8_t> trailing = valid;
  trailing.push_back(0x01);
  const std::vector<Case> cases = {
      {"empty", {}, "not msgpack"},
      {"never-used byte", {0xc1}, "not msgpack"},
      {"garbage", {0xff, 0x00, 0xc1, 0x93, 0x12}, "not msgpack"},
      {"truncated", std::vector<uint8_t>(valid.begin(), valid.end() - 3), "not msgpack"},
      {"trailing bytes", trailing, "not msgpack"},
      {"integer batch", pack(5), "not an array or a map"},
      {"short batch", pack(json::array({1})), "fewer than 2"},
      {"string ts", pack(json::array({"now", json::array()})), "ts is not a number"},
      {"events not array", pack(json::array({1, 2})), "events is not an array"},
      {"string rank", pack(json::array({1, json::array(), "0"})), "data_parallel_rank"},
      {"huge rank", pack(json::array({1, json::array(), UINT64_MAX})), "data_parallel_rank"},
      {"map without ts", pack({{"events", json::array()}}), "no ts"},
      {"map without events", pack({{"ts", 1}}), "no events"},
      {"event is a number", pack(batch_of(3)), "event 1: is not an array or a map"},
      {"empty event", pack(batch_of(json::array())), "event 1: is an empty array"},
      {"integer tag", pack(batch_of(json::array({7}))), "event 1: type is not a string"},
      {"map without type", pack(batch_of({{"block_hashes", {1}}})), "event 1: has no type"},
      {"no hashes", pack(batch_of(json::array({"BlockRemoved"}))), "event 1: has no block_hashes"},
      {"hashes not array", pack(batch_of(with(stored_map(), "block_hashes", 5))),
       "event 1: block_hashes is not an array"},
      {"float hash", pack(batch_of(with(stored_map(), "block_hashes", {1.5}))),
       "block_hashes[0] is not"},
      {"map parent", pack(batch_of(with(stored_map(), "parent_block_hash", json::object()))),
       "parent_block_hash"},
      {"negative token", pack(batch_of(with(stored_map(), "token_ids", {1, -1}))),
       "token_ids[1] is not"},
      {"token past 2^32", pack(batch_of(with(stored_map(), "token_ids", {uint64_t{1} << 32}))),
       "token_ids[0] is not"},
      {"string token", pack(batch_of(with(stored_map(), "token_ids", {"a"}))), "token_ids[0]"},
      {"tokens not array", pack(batch_of(with(stored_map(), "token_ids", "abc"))),
       "token_ids is not an array"},
      {"negative block size", pack(batch_of(with(stored_map(), "block_size", -16))), "block_size"},
      {"string lora id", pack(batch_of(with(stored_map(), "lora_id", "x"))), "lora_id"},
      {"integer medium", pack(batch_of(with(stored_map(), "medium", 1))), "medium is not a string"},
      {"integer lora name", pack(batch_of(with(stored_map(), "lora_name", 1))), "lora_name"},
      {"array removed medium",
       pack(batch_of(json::array({"BlockRemoved", json::array({1}), json::array()}))), "medium"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto decoded = decode_kv_batch(c.payload);
    ASSERT_FALSE(decoded.has_value());
    EXPECT_NE(decoded.error().find(c.error), std::string::npos) << decoded.error();
  }
}

// The reader recurses per level: a deep payload must fail, not overflow the stack.
TEST(KvDecode, DeepNestingFailsInsteadOfOverflowingTheStack) {
  for (uint8_t open : {uint8_t{0x91}, uint8_t{0x81}}) {  // one-element arrays, or maps {"": ...}
    std::vector<uint8_t> payload = {0x92, 0x01};
    for (int i = 0; i < 200'000; ++i) {
      payload.push_back(open);
      if (open == 0x81) payload.push_back(0xa0);  // the key ""
    }
    payload.push_back(0xc0);
    auto decoded = decode_kv_batch(payload);
    ASSERT_FALSE(decoded.has_value());
    EXPECT_EQ(decoded.error(), "payload nests too deep");
  }
  // Nesting that a batch can have still reads: an unknown event with nested fields.
  json nested = json::array({1});
  for (int i = 0; i < 20; ++i) nested = json::array({nested});
  const DecodedKvBatch decoded =
      decode_ok(json::array({1, json::array({json::array({"Future", nested})})}));
  EXPECT_EQ(decoded.skipped_events, 1u);
}

TEST(KvDecode, EveryTruncationFailsCleanly) {
  const std::vector<uint8_t> valid =
      pack({{"ts", 1.25},
            {"events", {stored_map(), removed_array(), cleared_map()}},
            {"data_parallel_rank", 0}});
  ASSERT_TRUE(decode_kv_batch(valid).has_value());
  for (size_t n = 0; n < valid.size(); ++n) {
    const std::vector<uint8_t> cut(valid.begin(), valid.begin() + n);
    EXPECT_FALSE(decode_kv_batch(cut).has_value()) << n << " bytes";
  }
}

}  // namespace
}  // namespace rolter
