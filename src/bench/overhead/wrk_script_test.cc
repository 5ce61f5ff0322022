#include "bench/overhead/wrk_script.h"

#include <gtest/gtest.h>

namespace rolter::bench::overhead {
namespace {

TEST(WrkScriptTest, ParsesTheDoneLineAmongWrksOwnOutput) {
  const std::string out =
      "Running 5s test @ http://127.0.0.1:8080/v1/chat/completions\n"
      "  1 threads and 32 connections\n"
      "ROLTER_WRK {\"requests\":150000,\"duration_us\":5000000,\"connect\":0,\"read\":1,"
      "\"write\":0,\"status\":2,\"timeout\":3,\"p50_us\":180,\"p99_us\":950,\"p999_us\":2100,"
      "\"mean_us\":210.5,\"max_us\":8000}\n"
      "Requests/sec:  30000.00\n";
  auto s = parse_wrk_output(out);
  ASSERT_TRUE(s) << s.error();
  EXPECT_EQ(s->requests, 150000u);
  EXPECT_DOUBLE_EQ(s->duration_s, 5.0);
  EXPECT_DOUBLE_EQ(s->rps(), 30000.0);
  EXPECT_EQ(s->errors(), 6u);
  EXPECT_EQ(s->status_errors, 2u);
  EXPECT_DOUBLE_EQ(s->p99_us, 950);
  EXPECT_DOUBLE_EQ(s->mean_us, 210.5);
}

TEST(WrkScriptTest, RejectsMissingOrBrokenSummaries) {
  EXPECT_FALSE(parse_wrk_output("Running 5s test\nRequests/sec: 1\n"));
  EXPECT_FALSE(parse_wrk_output("ROLTER_WRK {\"requests\":1\n"));
  auto partial = parse_wrk_output("ROLTER_WRK {\"requests\":1,\"duration_us\":1}\n");
  ASSERT_FALSE(partial);
  EXPECT_NE(partial.error().find("connect"), std::string::npos);
}

TEST(WrkScriptTest, ScriptSetsMethodBodyHeadersAndPrintsTheMarker) {
  const std::string lua =
      wrk_script(R"({"a":"b\c"})", {{"content-type", "application/json"}, {"x-q", "say \"hi\""}});
  EXPECT_NE(lua.find("wrk.method = \"POST\""), std::string::npos);
  EXPECT_NE(lua.find(R"(wrk.body = "{\"a\":\"b\\c\"}")"), std::string::npos) << lua;
  EXPECT_NE(lua.find(R"(wrk.headers["x-q"] = "say \"hi\"")"), std::string::npos) << lua;
  EXPECT_NE(lua.find("done = function(summary, latency, requests)"), std::string::npos);
  EXPECT_NE(lua.find(std::string(kWrkMarker)), std::string::npos);
}

TEST(WrkScriptTest, LuaQuoteEscapesControlBytes) {
  EXPECT_EQ(lua_quote("a\nb"), "\"a\\010b\"");
  EXPECT_EQ(lua_quote("\x01"
                      "1"),
            "\"\\0011\"");  // three digits: the '1' stays a '1'
}

}  // namespace
}  // namespace rolter::bench::overhead
