#include "sim/stop_sequences.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace rolter::sim {
namespace {

TEST(StopSequencesTest, CutsBeforeTheEarliestStop) {
  struct Case {
    const char* what;
    std::vector<std::string> stops;
    std::vector<std::string> want;
    const char* hit;
  };
  const std::vector<std::string> text = {"the", " engine", " routes", " a", " token"};
  const Case cases[] = {
      {"no stops", {}, text, ""},
      {"absent", {"xyz"}, text, ""},
      {"empty stop ignored", {""}, text, ""},
      {"space: after the first word", {" "}, {"the"}, " "},
      {"letter inside a piece", {"g"}, {"the", " en"}, "g"},
      {"on a piece boundary", {" routes"}, {"the", " engine"}, " routes"},
      {"at the very start", {"th"}, {}, "th"},
      {"earliest wins", {"token", "rout"}, {"the", " engine", " "}, "rout"},
      {"tie: first listed", {"eng", "en"}, {"the", " "}, "eng"},
      {"across pieces", {"e en"}, {"th"}, "e en"},
  };
  for (const Case& k : cases) {
    std::vector<std::string> pieces = text;
    EXPECT_EQ(cut_at_stop(pieces, k.stops), k.hit) << k.what;
    EXPECT_EQ(pieces, k.want) << k.what;
  }
}

}  // namespace
}  // namespace rolter::sim
