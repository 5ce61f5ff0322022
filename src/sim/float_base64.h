// The OpenAI embeddings wire encoding `encoding_format: "base64"`: a vector of float32 values as
// their little-endian bytes, in standard base64 with padding. The openai SDKs (and LangChain
// through them) ask for it by default and decode it with Float32Array, so the byte order is
// fixed here rather than taken from the host.
//
// Thread-safety: pure function.
#pragma once

#include <span>
#include <string>

namespace rolter::sim {

// Base64 (RFC 4648 alphabet, '=' padding) of the little-endian float32 bytes of `values`.
std::string float32_base64(std::span<const float> values);

}  // namespace rolter::sim
