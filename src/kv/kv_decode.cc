// Reads the msgpack into nlohmann's DOM (non-throwing, depth-bounded), then walks it into a
// KvBatch. The DOM costs allocations, but a batch is small and arrives off the request path; see
// kv_bench.cc for the rate.
#include "kv/kv_decode.h"

#include <xxhash.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

namespace rolter {
namespace {

using nlohmann::json;
using Value = json::value_t;

// nlohmann's DOM builder (what from_msgpack uses, in its non-throwing mode), refusing to nest
// deeper than kMaxDepth: the reader recurses once per level, so a few kilobytes of one-element
// arrays would otherwise overflow the stack. A batch nests 4 deep (batch, events, event, hashes);
// the bound leaves room for the fields newer engines add. json_sax_dom_parser is in nlohmann's
// detail namespace, but it is the documented from_msgpack's own builder.
class BoundedDom : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  static constexpr size_t kMaxDepth = 32;

  explicit BoundedDom(json& root) : json_sax_dom_parser(root, /*allow_exceptions_=*/false) {}

  bool start_object(size_t size) { return enter() && json_sax_dom_parser::start_object(size); }
  bool end_object() { return leave() && json_sax_dom_parser::end_object(); }
  bool start_array(size_t size) { return enter() && json_sax_dom_parser::start_array(size); }
  bool end_array() { return leave() && json_sax_dom_parser::end_array(); }
  bool too_deep() const { return too_deep_; }

 private:
  bool enter() {
    too_deep_ = ++depth_ > kMaxDepth;
    return !too_deep_;
  }
  bool leave() {
    --depth_;
    return true;
  }

  size_t depth_ = 0;
  bool too_deep_ = false;
};

// Positions of the array-like encoding (vLLM's msgspec structs with array_like=True, tag first).
namespace stored_pos {
constexpr size_t kBlockHashes = 1, kParent = 2, kTokenIds = 3, kBlockSize = 4, kLoraId = 5,
                 kMedium = 6, kLoraName = 7;
}
namespace removed_pos {
constexpr size_t kBlockHashes = 1, kMedium = 2;
}

// An integer in [0, 2^32): a token id or a block size.
bool read_u32(const json& value, uint32_t& out) {
  uint64_t x = 0;
  if (value.is_number_unsigned()) {
    x = value.get<uint64_t>();
  } else if (value.is_number_integer() && value.get<int64_t>() >= 0) {
    x = static_cast<uint64_t>(value.get<int64_t>());
  } else {
    return false;
  }
  if (x > std::numeric_limits<uint32_t>::max()) return false;
  out = static_cast<uint32_t>(x);
  return true;
}

// One event, in either encoding: a field by its position (array-like) or its name (map).
class EventView {
 public:
  explicit EventView(const json& event) : event_(event) {}

  // The field, or nullptr when it is left out or nil (both mean "the default").
  const json* field(size_t position, const char* name) const {
    const json* value = nullptr;
    if (event_.is_array()) {
      if (position < event_.size()) value = &event_[position];
    } else {
      auto it = event_.find(name);
      if (it != event_.end()) value = &*it;
    }
    return value != nullptr && !value->is_null() ? value : nullptr;
  }

 private:
  const json& event_;
};

// Walks one batch's DOM; the first error stops it and names the event and field.
class Decoder {
 public:
  tl::expected<DecodedKvBatch, std::string> run(const json& root);

 private:
  bool event(const json& value);
  bool block_stored(const EventView& view, KvEventRecord& record);
  bool block_removed(const EventView& view, KvEventRecord& record);
  bool hash(const json& value, EngineBlockHash& out);
  bool hashes(const json* value, std::vector<EngineBlockHash>& out);
  bool token_ids(const json* value, std::vector<uint32_t>& out);
  bool optional_string(const json* value, const char* name, std::string& out);

  bool fail(std::string what) {
    error_ = "event " + std::to_string(index_) + ": " + std::move(what);
    return false;
  }

  DecodedKvBatch out_;
  size_t index_ = 0;
  std::string error_;
};

tl::expected<DecodedKvBatch, std::string> Decoder::run(const json& root) {
  const json* ts = nullptr;
  const json* events = nullptr;
  const json* rank = nullptr;
  if (root.is_array()) {
    if (root.size() < 2) return tl::unexpected(std::string("batch array has fewer than 2 items"));
    ts = &root[0];
    events = &root[1];
    if (root.size() > 2) rank = &root[2];
  } else if (root.is_object()) {
    auto it = root.find("ts");
    if (it == root.end()) return tl::unexpected(std::string("batch has no ts"));
    ts = &*it;
    it = root.find("events");
    if (it == root.end()) return tl::unexpected(std::string("batch has no events"));
    events = &*it;
    it = root.find("data_parallel_rank");
    if (it != root.end()) rank = &*it;
  } else {
    return tl::unexpected(std::string("batch is not an array or a map"));
  }

  if (!ts->is_number()) return tl::unexpected(std::string("ts is not a number"));
  out_.batch.ts = ts->get<double>();
  if (rank != nullptr && !rank->is_null()) {
    const bool fits = rank->is_number_unsigned()
                          ? rank->get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()}
                          : rank->is_number_integer();
    if (!fits) return tl::unexpected(std::string("data_parallel_rank is not a 64-bit integer"));
    out_.batch.data_parallel_rank = rank->get<int64_t>();
  }
  if (!events->is_array()) return tl::unexpected(std::string("events is not an array"));

  out_.batch.events.reserve(events->size());
  for (const json& value : *events) {
    if (!event(value)) return tl::unexpected(std::move(error_));
    ++index_;
  }
  return std::move(out_);
}

bool Decoder::event(const json& value) {
  const json* tag = nullptr;
  if (value.is_array()) {
    if (value.empty()) return fail("is an empty array");
    tag = &value[0];
  } else if (value.is_object()) {
    auto it = value.find("type");
    if (it == value.end()) return fail("has no type");
    tag = &*it;
  } else {
    return fail("is not an array or a map");
  }
  if (!tag->is_string()) return fail("type is not a string");

  const std::string& type = tag->get_ref<const std::string&>();
  const EventView view(value);
  KvEventRecord record;
  if (type == "BlockStored") {
    record.kind = KvEventRecord::Kind::kBlockStored;
    if (!block_stored(view, record)) return false;
  } else if (type == "BlockRemoved") {
    record.kind = KvEventRecord::Kind::kBlockRemoved;
    if (!block_removed(view, record)) return false;
  } else if (type == "AllBlocksCleared") {
    record.kind = KvEventRecord::Kind::kAllBlocksCleared;
  } else {
    ++out_.skipped_events;  // a newer engine's event: not ours to read
    return true;
  }
  out_.batch.events.push_back(std::move(record));
  return true;
}

bool Decoder::block_stored(const EventView& view, KvEventRecord& record) {
  namespace pos = stored_pos;
  KvBlockStored& stored = record.stored;
  if (!hashes(view.field(pos::kBlockHashes, "block_hashes"), stored.block_hashes)) return false;
  if (const json* parent = view.field(pos::kParent, "parent_block_hash")) {
    EngineBlockHash parent_hash = 0;
    if (!hash(*parent, parent_hash)) return fail("parent_block_hash is not an integer or bytes");
    stored.parent_block_hash = parent_hash;
  }
  if (!token_ids(view.field(pos::kTokenIds, "token_ids"), stored.token_ids)) return false;
  if (const json* size = view.field(pos::kBlockSize, "block_size")) {
    if (!read_u32(*size, stored.block_size)) {
      return fail("block_size is not an integer in [0, 2^32)");
    }
  }
  if (const json* lora_id = view.field(pos::kLoraId, "lora_id")) {
    if (!lora_id->is_number_integer()) return fail("lora_id is not an integer");
  }
  return optional_string(view.field(pos::kMedium, "medium"), "medium", stored.medium) &&
         optional_string(view.field(pos::kLoraName, "lora_name"), "lora_name", stored.lora_name);
}

bool Decoder::block_removed(const EventView& view, KvEventRecord& record) {
  namespace pos = removed_pos;
  KvBlockRemoved& removed = record.removed;
  return hashes(view.field(pos::kBlockHashes, "block_hashes"), removed.block_hashes) &&
         optional_string(view.field(pos::kMedium, "medium"), "medium", removed.medium);
}

bool Decoder::hash(const json& value, EngineBlockHash& out) {
  switch (value.type()) {
    case Value::number_unsigned:
      out = value.get<uint64_t>();
      return true;
    case Value::number_integer:  // negative: read as its two's complement
      out = static_cast<uint64_t>(value.get<int64_t>());
      return true;
    case Value::binary: {
      const json::binary_t& bytes = value.get_binary();
      out = XXH3_64bits(bytes.data(), bytes.size());
      return true;
    }
    case Value::string: {  // the same bytes as bin or str fold to the same hash
      const std::string& bytes = value.get_ref<const std::string&>();
      out = XXH3_64bits(bytes.data(), bytes.size());
      return true;
    }
    default:
      return false;
  }
}

bool Decoder::hashes(const json* value, std::vector<EngineBlockHash>& out) {
  if (value == nullptr) return fail("has no block_hashes");
  if (!value->is_array()) return fail("block_hashes is not an array");
  out.reserve(value->size());
  for (const json& item : *value) {
    EngineBlockHash h = 0;
    if (!hash(item, h)) {
      return fail("block_hashes[" + std::to_string(out.size()) + "] is not an integer or bytes");
    }
    out.push_back(h);
  }
  return true;
}

bool Decoder::token_ids(const json* value, std::vector<uint32_t>& out) {
  if (value == nullptr) return true;  // no tokens: its blocks cannot be keyed, and are counted so
  if (!value->is_array()) return fail("token_ids is not an array");
  out.reserve(value->size());
  for (const json& item : *value) {
    uint32_t id = 0;
    if (!read_u32(item, id)) {
      return fail("token_ids[" + std::to_string(out.size()) + "] is not an integer in [0, 2^32)");
    }
    out.push_back(id);
  }
  return true;
}

bool Decoder::optional_string(const json* value, const char* name, std::string& out) {
  if (value == nullptr) return true;
  if (!value->is_string()) return fail(std::string(name) + " is not a string");
  out = value->get_ref<const std::string&>();
  return true;
}

}  // namespace

tl::expected<DecodedKvBatch, std::string> decode_kv_batch(std::span<const uint8_t> payload) {
  // The parser's non-throwing mode reports an error through the SAX builder; the catch is a guard
  // at the boundary (allocation failure, or a throw nlohmann did not document).
  try {
    json root;
    BoundedDom dom(root);
    const bool parsed = json::sax_parse(payload.begin(), payload.end(), &dom,
                                        json::input_format_t::msgpack, /*strict=*/true);
    if (dom.too_deep()) return tl::unexpected(std::string("payload nests too deep"));
    if (!parsed || dom.is_errored()) return tl::unexpected(std::string("payload is not msgpack"));
    return Decoder().run(root);
  } catch (const std::exception& e) {
    return tl::unexpected(std::string("payload cannot be read: ") + e.what());
  } catch (...) {
    return tl::unexpected(std::string("payload cannot be read"));
  }
}

}  // namespace rolter
