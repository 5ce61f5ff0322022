// The session key of a policy-mode request (SPEC §7, session_affinity): the first source of the
// route's key chain that gives a non-empty value.
//
// Header sources are tried first, in chain order, whatever their place among body sources: a
// header costs a lookup, a body field a parse. Body sources are then tried in chain order, but only
// when the request path ends with one of the route's body_path_suffixes (by default "/responses"
// and "/messages": the APIs whose `prompt_cache_key`-like fields name a conversation), and only a
// top-level field whose value is a non-empty JSON string counts (a number, object or null does
// not: those are not keys a client chose to name its session). A header present but empty does not
// count either. The body is parsed (simdjson on demand, one pass over the top-level object) only
// when a body source applies.
//
//   auto headers = [&](std::string_view name) { return std::string_view(request[name]); };
//   std::string key = policy_session_key(*pool.policy, path, headers, body);
//   ctx.policy_session_key = key;  // `key` must outlive every use of ctx
//
// Thread-safety: pure functions; any thread.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/function_ref.h"
#include "snapshot/snapshot.h"

namespace rolter {

// A request header's value by name; empty when absent.
using HeaderLookup = FunctionRef<std::string_view(std::string_view name)>;

// The session key, or an empty string when no source of the chain gives one.
std::string policy_session_key(const PolicyRoute& policy, std::string_view path,
                               HeaderLookup header, std::string_view body);

// Of `fields`, the first (in that order) that the top-level JSON object `body` holds as a non-empty
// string, unescaped. nullopt when none does, or when `body` is not a readable JSON object. When a
// field appears twice, its first occurrence decides.
std::optional<std::string> first_string_field(std::string_view body,
                                              std::span<const std::string_view> fields);

// Whether `path` ends with one of `suffixes`.
bool path_has_suffix(std::string_view path, std::span<const std::string> suffixes);

}  // namespace rolter
