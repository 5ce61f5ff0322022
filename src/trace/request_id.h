// A request's id (SPEC §17): the client's `x-request-id` when it is 1 to 128 visible ASCII
// characters (0x21 to 0x7e), else a new UUIDv7 (RFC 9562 §5.7: 48 bits of Unix milliseconds, then
// random bits), so ids the gateway makes sort by time. The id lives in a fixed buffer: taking or
// making one allocates nothing.
//
//   RequestId id;
//   id.assign(request["x-request-id"], wall_clock.unix_nanos() / 1'000'000, random);
//   res.set("x-request-id", id.view());
//
// Thread-safety: plain values and pure functions; assign() uses the caller's Random.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/random.h"

namespace rolter {

inline constexpr size_t kMaxRequestIdLength = 128;
inline constexpr size_t kUuidLength = 36;  // 8-4-4-4-12 hex digits

// 1 to kMaxRequestIdLength characters, each visible ASCII (no space, no control, no 8-bit byte).
bool is_valid_request_id(std::string_view id);

// Writes a UUIDv7 for `unix_ms` (its low 48 bits) with 74 random bits from `random` to `out`:
// exactly kUuidLength lowercase characters, no terminator.
void write_uuid_v7(uint64_t unix_ms, Random& random, char* out);

class RequestId {
 public:
  // The client's id when valid; otherwise a new UUIDv7 (`client_id` empty or invalid).
  // Returns true when the client's id was taken.
  bool assign(std::string_view client_id, uint64_t unix_ms, Random& random);
  std::string_view view() const { return {chars_.data(), size_}; }

 private:
  std::array<char, kMaxRequestIdLength> chars_{};
  size_t size_ = 0;
};

}  // namespace rolter
