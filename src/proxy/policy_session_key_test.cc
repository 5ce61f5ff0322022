#include "proxy/policy_session_key.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace rolter {
namespace {

using Headers = std::map<std::string, std::string, std::less<>>;

SessionKeySource header(std::string name) { return {.header = std::move(name), .body = {}}; }
SessionKeySource body(std::string field) { return {.header = {}, .body = std::move(field)}; }

// The chain and suffixes config/schema.cc gives a route that names none.
PolicyRoute default_policy() {
  PolicyRoute p;
  p.session_keys = {header("session-id"), header("x-client-request-id"), body("prompt_cache_key")};
  p.body_path_suffixes = {"/responses", "/messages"};
  return p;
}

std::string key_of(const PolicyRoute& policy, std::string_view path, const Headers& headers,
                   std::string_view request_body) {
  auto lookup = [&](std::string_view name) -> std::string_view {
    auto it = headers.find(name);
    return it == headers.end() ? std::string_view() : std::string_view(it->second);
  };
  return policy_session_key(policy, path, lookup, request_body);
}

TEST(PolicySessionKey, Table) {
  PolicyRoute body_first;  // a body source listed before a header source
  body_first.session_keys = {body("conversation"), header("x-conv")};
  body_first.body_path_suffixes = {"/responses"};
  PolicyRoute custom;  // a custom chain and custom suffixes
  custom.session_keys = {body("user"), body("conversation"), header("x-tenant")};
  custom.body_path_suffixes = {"/chat/completions"};
  PolicyRoute no_suffixes = default_policy();
  no_suffixes.body_path_suffixes.clear();
  PolicyRoute no_chain;  // session_affinity off
  no_chain.body_path_suffixes = {"/responses"};

  struct Case {
    const char* what;
    const PolicyRoute* policy;
    std::string_view path;
    Headers headers;
    std::string_view body;
    std::string_view key;
  };
  const PolicyRoute defaults = default_policy();
  const Case cases[] = {
      {"the first header", &defaults, "/v1/chat/completions", {{"session-id", "s1"}}, "{}", "s1"},
      {"headers in chain order",
       &defaults,
       "/v1/chat/completions",
       {{"x-client-request-id", "r2"}, {"session-id", "s1"}},
       "{}",
       "s1"},
      {"the second header when the first is absent",
       &defaults,
       "/v1/chat/completions",
       {{"x-client-request-id", "r2"}},
       "{}",
       "r2"},
      {"an empty header does not count",
       &defaults,
       "/v1/responses",
       {{"session-id", ""}, {"x-client-request-id", "r2"}},
       "{}",
       "r2"},
      {"a header wins over the body",
       &defaults,
       "/v1/responses",
       {{"session-id", "s1"}},
       R"({"prompt_cache_key":"pck"})",
       "s1"},
      {"a body field on /v1/responses",
       &defaults,
       "/v1/responses",
       {},
       R"({"model":"m","input":"hi","prompt_cache_key":"pck"})",
       "pck"},
      {"a body field on /v1/messages",
       &defaults,
       "/v1/messages",
       {},
       R"({"prompt_cache_key":"pck","messages":[]})",
       "pck"},
      {"the body field is unescaped",
       &defaults,
       "/v1/responses",
       {},
       R"({"prompt_cache_key":"a\"b\u00e9"})",
       "a\"b\xc3\xa9"},
      {"no body source on /v1/chat/completions",
       &defaults,
       "/v1/chat/completions",
       {},
       R"({"prompt_cache_key":"pck"})",
       ""},
      {"no body source on /v1/completions",
       &defaults,
       "/v1/completions",
       {},
       R"({"prompt_cache_key":"pck"})",
       ""},
      {"a number does not count", &defaults, "/v1/responses", {}, R"({"prompt_cache_key":42})", ""},
      {"an object does not count",
       &defaults,
       "/v1/responses",
       {},
       R"({"prompt_cache_key":{"k":"v"}})",
       ""},
      {"null does not count", &defaults, "/v1/responses", {}, R"({"prompt_cache_key":null})", ""},
      {"an empty string does not count",
       &defaults,
       "/v1/responses",
       {},
       R"({"prompt_cache_key":""})",
       ""},
      {"a nested field does not count",
       &defaults,
       "/v1/responses",
       {},
       R"({"metadata":{"prompt_cache_key":"pck"}})",
       ""},
      {"the first occurrence decides",
       &defaults,
       "/v1/responses",
       {},
       R"({"prompt_cache_key":1,"prompt_cache_key":"later"})",
       ""},
      {"not JSON", &defaults, "/v1/responses", {}, R"({"prompt_cache_key":"pck")", ""},
      {"a JSON array", &defaults, "/v1/responses", {}, R"([{"prompt_cache_key":"pck"}])", ""},
      {"an empty body", &defaults, "/v1/responses", {}, "", ""},
      {"no key at all",
       &defaults,
       "/v1/responses",
       {{"x-session-id", "other"}},
       R"({"input":"hi"})",
       ""},
      {"without suffixes no body source applies",
       &no_suffixes,
       "/v1/responses",
       {},
       R"({"prompt_cache_key":"pck"})",
       ""},
      {"header before body even when the body is listed first",
       &body_first,
       "/v1/responses",
       {{"x-conv", "h"}},
       R"({"conversation":"b"})",
       "h"},
      {"the body source when the header is absent",
       &body_first,
       "/v1/responses",
       {},
       R"({"conversation":"b"})",
       "b"},
      {"custom suffixes: body sources on chat completions",
       &custom,
       "/v1/chat/completions",
       {},
       R"({"conversation":"c","user":"u"})",
       "u"},
      {"custom chain: the second body field when the first is not a string",
       &custom,
       "/v1/chat/completions",
       {},
       R"({"conversation":"c","user":7})",
       "c"},
      {"custom suffixes: /v1/responses is no longer one",
       &custom,
       "/v1/responses",
       {},
       R"({"user":"u"})",
       ""},
      {"custom chain: its header",
       &custom,
       "/v1/chat/completions",
       {{"x-tenant", "t"}},
       R"({"user":"u"})",
       "t"},
      {"no chain: no key",
       &no_chain,
       "/v1/responses",
       {{"session-id", "s1"}},
       R"({"prompt_cache_key":"pck"})",
       ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(key_of(*c.policy, c.path, c.headers, c.body), c.key);
  }
}

TEST(PolicySessionKey, TheBodyIsNotReadWhenAHeaderGivesTheKey) {
  // Not JSON at all: a parse would find nothing, so a key proves the header decided alone.
  EXPECT_EQ(key_of(default_policy(), "/v1/responses", {{"session-id", "s"}}, "not json"), "s");
}

TEST(FirstStringField, FieldOrderNotBodyOrder) {
  const std::vector<std::string_view> fields = {"a", "b"};
  EXPECT_EQ(first_string_field(R"({"b":"B","a":"A"})", fields), "A");
  EXPECT_EQ(first_string_field(R"({"b":"B","a":""})", fields), "B");
  EXPECT_EQ(first_string_field(R"({"b":"B","a":[1]})", fields), "B");
  EXPECT_EQ(first_string_field(R"({"c":"C"})", fields), std::nullopt);
  EXPECT_EQ(first_string_field(R"({"a":"A"})", {}), std::nullopt);
}

TEST(PathHasSuffix, Table) {
  const std::vector<std::string> suffixes = {"/responses", "/messages"};
  EXPECT_TRUE(path_has_suffix("/v1/responses", suffixes));
  EXPECT_TRUE(path_has_suffix("/v1/messages", suffixes));
  EXPECT_FALSE(path_has_suffix("/v1/chat/completions", suffixes));
  EXPECT_FALSE(path_has_suffix("/v1/responses/x", suffixes));
  EXPECT_FALSE(path_has_suffix("/v1/responses", std::vector<std::string>{""}));
}

}  // namespace
}  // namespace rolter
