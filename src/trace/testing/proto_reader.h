// A protobuf wire-format reader for tests: the fields of a message, in order, so a test can check
// what the encoder wrote field by field. It trusts its input (the encoder's output) and fails the
// test, not the process, when a message does not parse.
//
// Thread-safety: pure functions.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace rolter::testing {

struct ProtoField {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  uint64_t value = 0;      // wire types 0, 1 and 5
  std::string_view bytes;  // wire type 2
};

inline bool read_varint(std::string_view& in, uint64_t& out) {
  out = 0;
  for (int shift = 0; shift < 70 && !in.empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    out |= uint64_t{byte & 0x7fu} << shift;
    if ((byte & 0x80) == 0) return true;
  }
  return false;
}

inline std::vector<ProtoField> read_fields(std::string_view in) {
  std::vector<ProtoField> fields;
  while (!in.empty()) {
    uint64_t tag = 0;
    if (!read_varint(in, tag)) {
      ADD_FAILURE() << "truncated tag";
      return fields;
    }
    ProtoField f{.number = static_cast<uint32_t>(tag >> 3),
                 .wire_type = static_cast<uint32_t>(tag & 7)};
    if (f.wire_type == 0) {
      if (!read_varint(in, f.value)) ADD_FAILURE() << "truncated varint";
    } else if (f.wire_type == 1 || f.wire_type == 5) {
      const size_t n = f.wire_type == 1 ? 8 : 4;
      if (in.size() < n) {
        ADD_FAILURE() << "truncated fixed value";
        return fields;
      }
      for (size_t i = 0; i < n; ++i) f.value |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
      in.remove_prefix(n);
    } else if (f.wire_type == 2) {
      uint64_t length = 0;
      if (!read_varint(in, length) || length > in.size()) {
        ADD_FAILURE() << "bad length";
        return fields;
      }
      f.bytes = in.substr(0, length);
      in.remove_prefix(length);
    } else {
      ADD_FAILURE() << "unexpected wire type " << f.wire_type;
      return fields;
    }
    fields.push_back(f);
  }
  return fields;
}

// Every field `number` of `message`.
inline std::vector<ProtoField> fields_numbered(std::string_view message, uint32_t number) {
  std::vector<ProtoField> out;
  for (const ProtoField& f : read_fields(message)) {
    if (f.number == number) out.push_back(f);
  }
  return out;
}

// The one field `number` of `message` (a test failure when there is not exactly one).
inline ProtoField field(std::string_view message, uint32_t number) {
  auto all = fields_numbered(message, number);
  if (all.size() != 1) {
    ADD_FAILURE() << "field " << number << " occurs " << all.size() << " times";
    return {};
  }
  return all.front();
}

inline double as_double(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace rolter::testing
