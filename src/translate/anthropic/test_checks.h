// Test helper for the translate/anthropic tests: checks fields of a produced JSON document
// against values written out by hand, one JSON pointer each, so a table case reads as
// "this field must be this value" without building the expected document with the code under test.
//
// Thread-safety: test-only, single-threaded.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rolter::anthropic {

struct FieldCheck {
  std::string pointer;  // "/messages/0/content/1/source/type"
  std::string json;     // the expected value as JSON text; kAbsent: the field must not exist
};

inline const std::string kAbsent = "<absent>";

inline nlohmann::json parse_or_fail(const std::string& text, const std::string& context) {
  auto doc = nlohmann::json::parse(text, nullptr, false);
  EXPECT_FALSE(doc.is_discarded()) << context << ": not JSON: " << text;
  return doc;
}

inline void expect_fields(const nlohmann::json& doc, const std::vector<FieldCheck>& checks,
                          const std::string& context) {
  for (const auto& check : checks) {
    const nlohmann::json::json_pointer pointer(check.pointer);
    if (check.json == kAbsent) {
      EXPECT_FALSE(doc.contains(pointer))
          << context << ": " << check.pointer << " should be absent in " << doc.dump();
      continue;
    }
    const auto expected = nlohmann::json::parse(check.json, nullptr, false);
    ASSERT_FALSE(expected.is_discarded()) << context << ": bad expectation " << check.json;
    if (!doc.contains(pointer)) {
      ADD_FAILURE() << context << ": " << check.pointer << " missing in " << doc.dump();
      continue;
    }
    EXPECT_EQ(doc[pointer], expected) << context << ": " << check.pointer << " in " << doc.dump();
  }
}

}  // namespace rolter::anthropic
