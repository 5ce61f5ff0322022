// ProtoWriter: the Protocol Buffers wire format
// (https://protobuf.dev/programming-guides/encoding/), only as much of it as writing an OTLP
// request takes: varints, 64- and 32-bit fixed values, and length-delimited fields (strings, bytes,
// nested messages). It writes; it never reads.
//
// A nested message is written in place: open() writes its tag and returns a mark, close() puts
// its length in front of what was written since (moving it by the length's few bytes), so no
// message is built twice or copied into a temporary.
//
//   ProtoWriter w;
//   w.varint(1, 150);                        // 08 96 01
//   const auto m = w.open(3);                // a nested message in field 3
//   w.bytes(2, "testing");
//   w.close(m);
//   send(w.data());
//
// Fields equal to their default are written all the same: skipping them is the caller's choice.
//
// Thread-safety: one writer per thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rolter {

class ProtoWriter {
 public:
  // Where a nested message starts; pass it to close().
  struct Mark {
    size_t content_start;
  };

  // Wire type 0: uint32, uint64, enum, and (two's complement, ten bytes when negative) int64.
  void varint(uint32_t field, uint64_t value);
  void int64(uint32_t field, int64_t value) { varint(field, static_cast<uint64_t>(value)); }
  void boolean(uint32_t field, bool value) { varint(field, value ? 1 : 0); }
  // Wire type 1: fixed64, and double as its IEEE 754 bits.
  void fixed64(uint32_t field, uint64_t value);
  void float64(uint32_t field, double value);
  // Wire type 5: fixed32.
  void fixed32(uint32_t field, uint32_t value);
  // Wire type 2: string and bytes.
  void bytes(uint32_t field, std::string_view value);
  void bytes(uint32_t field, const uint8_t* data, size_t size);

  // Wire type 2 for a nested message: its tag now, its length at close().
  Mark open(uint32_t field);
  void close(Mark mark);

  const std::string& data() const { return out_; }
  std::string take() { return std::move(out_); }
  void clear() { out_.clear(); }

 private:
  void tag(uint32_t field, uint32_t wire_type) { raw_varint(uint64_t{field} << 3 | wire_type); }
  void raw_varint(uint64_t value);
  void little_endian(uint64_t value, int bytes);

  std::string out_;
};

}  // namespace rolter
