// Where a request goes on an instance: its base URL's path joined with the request's path
// (SPEC §16, "Base URL").
//
// The base path is a prefix, with one exception that makes both spellings users paste work: when
// it ends in an API version segment ("/v1", "/v1beta") and the path begins with the same segment,
// the segment is not repeated. So base URLs "https://api.openai.com" and
// "https://api.openai.com/v1" both send "/v1/chat/completions". A path outside any version (an
// engine's "/metrics", "/tokenize" or "/health") is taken from the root the version hangs off:
// "http://vllm:8000/v1" scrapes "/metrics", as vLLM serves it.
//
//   std::string path;
//   append_upstream_path(path, "/v1", "/v1/chat/completions");  // "/v1/chat/completions"
//   append_upstream_path(path, "/openai/v1", "/v1/models");      // "/openai/v1/models"
//
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace rolter {

// The part of `base_path` that goes before `target` in the joined path (the target, query
// included, follows untouched). `base_path` has no trailing '/' ("" for none); `target` begins
// with '/'.
std::string_view upstream_base(std::string_view base_path, std::string_view target);

// The joined path.
std::string upstream_path(std::string_view base_path, std::string_view target);

}  // namespace rolter
