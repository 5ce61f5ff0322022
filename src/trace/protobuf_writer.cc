#include "trace/protobuf_writer.h"

#include <bit>

namespace rolter {

void ProtoWriter::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void ProtoWriter::little_endian(uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out_.push_back(static_cast<char>(value & 0xff));
    value >>= 8;
  }
}

void ProtoWriter::varint(uint32_t field, uint64_t value) {
  tag(field, 0);
  raw_varint(value);
}

void ProtoWriter::fixed64(uint32_t field, uint64_t value) {
  tag(field, 1);
  little_endian(value, 8);
}

void ProtoWriter::float64(uint32_t field, double value) {
  fixed64(field, std::bit_cast<uint64_t>(value));
}

void ProtoWriter::fixed32(uint32_t field, uint32_t value) {
  tag(field, 5);
  little_endian(value, 4);
}

void ProtoWriter::bytes(uint32_t field, std::string_view value) {
  tag(field, 2);
  raw_varint(value.size());
  out_.append(value);
}

void ProtoWriter::bytes(uint32_t field, const uint8_t* data, size_t size) {
  bytes(field, std::string_view(reinterpret_cast<const char*>(data), size));
}

ProtoWriter::Mark ProtoWriter::open(uint32_t field) {
  tag(field, 2);
  return Mark{out_.size()};
}

void ProtoWriter::close(Mark mark) {
  const uint64_t length = out_.size() - mark.content_start;
  char prefix[10];
  size_t n = 0;
  uint64_t value = length;
  while (value >= 0x80) {
    prefix[n++] = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  prefix[n++] = static_cast<char>(value);
  out_.insert(mark.content_start, prefix, n);
}

}  // namespace rolter
