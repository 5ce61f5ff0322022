#include "common/json_escape.h"

#include <gtest/gtest.h>

#include <string>

namespace rolter {
namespace {

struct Case {
  std::string in;
  std::string out;  // the JSON literal, quotes included
};

std::string untrusted(std::string_view in) {
  std::string out;
  append_untrusted_json_string(out, in);
  return out;
}

TEST(JsonEscape, EscapesWhatJsonRequires) {
  const Case cases[] = {
      {"plain", R"("plain")"},
      {"a\"b\\c", R"("a\"b\\c")"},
      {"\b\f\n\r\t", R"("\b\f\n\r\t")"},
      {std::string("\x01\x1f", 2), R"("\u0001\u001f")"},
      {std::string("nul\0in", 6), R"("nul\u0000in")"},
      {"ünïcode ✓ 🚀", "\"ünïcode ✓ 🚀\""},
      {"", R"("")"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(json_string(c.in), c.out) << c.in;
    EXPECT_EQ(untrusted(c.in), c.out) << c.in;  // valid text: both agree
  }
}

TEST(JsonEscape, UntrustedBytesBecomeReplacementCharacters) {
  const Case cases[] = {
      {"\xff", R"("\ufffd")"},                      // never a UTF-8 byte
      {"a\x80z", R"("a\ufffdz")"},                  // a lone continuation byte
      {"\xc3", R"("\ufffd")"},                      // a sequence cut at the end
      {"\xc3(", R"("\ufffd(")"},                    // a lead byte without its continuation
      {"\xc0\xaf", R"("\ufffd\ufffd")"},            // an overlong '/'
      {"\xe0\x80\xaf", R"("\ufffd\ufffd\ufffd")"},  // an overlong '/' in three bytes
      {"\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},  // a UTF-16 surrogate
      {"\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},  // above U+10FFFF
      {"ok \xe2\x9c\x93 \xe2\x9c", "\"ok \xe2\x9c\x93 \\ufffd\\ufffd\""},
      {"\"\xfe\n", R"("\"\ufffd\n")"},
  };
  for (const auto& c : cases) EXPECT_EQ(untrusted(c.in), c.out) << c.out;
}

TEST(JsonEscape, AppendsToWhatIsThere) {
  std::string out = "{\"path\":";
  append_untrusted_json_string(out, "/v1/\xff");
  out.push_back('}');
  EXPECT_EQ(out, R"({"path":"/v1/\ufffd"})");
}

}  // namespace
}  // namespace rolter
