#include "trace/request_trace.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/testing/counting_new.h"

namespace rolter {
namespace {

constexpr std::string_view kParentSampled =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr std::string_view kParentNotSampled =
    "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00";

struct Fixture {
  ManualWallClock clock{1'700'000'000'000'000'000};
  SeededRandom random{5};
  SpanQueue queue{64};
  TraceDeps deps{.clock = &clock, .random = &random, .queue = &queue};
  RequestTrace trace;

  std::vector<Span> drain() {
    std::vector<Span> out;
    Span span;
    while (queue.try_pop(span)) out.push_back(std::move(span));
    return out;
  }
};

const SpanAttribute* find(const Span& span, std::string_view key) {
  for (const auto& a : span.attributes) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

std::string text(const Span& span, std::string_view key) {
  const SpanAttribute* a = find(span, key);
  return a != nullptr && std::holds_alternative<std::string>(a->value)
             ? std::get<std::string>(a->value)
             : "<absent>";
}

int64_t number(const Span& span, std::string_view key) {
  const SpanAttribute* a = find(span, key);
  return a != nullptr && std::holds_alternative<int64_t>(a->value) ? std::get<int64_t>(a->value)
                                                                   : -1;
}

// The decision table: (collector, ratio, parent) -> sampled flag sent upstream, recorded.
TEST(RequestTrace, SamplingAndRecording) {
  struct Case {
    bool exporting;
    double ratio;
    std::string_view traceparent;
    bool sampled;
    bool recording;
  };
  const Case cases[] = {
      {true, 1.0, "", true, true},
      {true, 0.0, "", false, false},
      {true, 0.0, kParentSampled, true, true},
      {true, 1.0, kParentNotSampled, false, false},
      {true, 1.0, "00-bad", true, true},  // an invalid parent: a new trace, sampled by ratio
      {false, 1.0, "", false, false},     // no collector: nothing of its own
      {false, 0.0, kParentSampled, true, false},  // ...but the caller's decision goes on
  };
  for (const Case& c : cases) {
    Fixture f;
    f.trace.begin(f.deps, {.exporting = c.exporting, .sample_ratio = c.ratio},
                  {.traceparent = c.traceparent});
    EXPECT_EQ(f.trace.sampled(), c.sampled) << c.traceparent << " at " << c.ratio;
    EXPECT_EQ(f.trace.recording(), c.recording) << c.traceparent << " at " << c.ratio;
    const std::string_view sent = f.trace.start_attempt();
    ASSERT_EQ(sent.size(), kTraceparentLength);
    EXPECT_EQ(sent.substr(53), c.sampled ? "01" : "00");
    f.trace.end();
  }
}

TEST(RequestTrace, TheClientsTraceGoesUpstreamUnderANewParent) {
  Fixture f;
  f.trace.begin(f.deps, {.exporting = true, .sample_ratio = 0},
                {.traceparent = kParentSampled, .tracestate = "v=1"});
  EXPECT_TRUE(f.trace.keeps_tracestate());
  EXPECT_EQ(f.trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
  const std::string first(f.trace.start_attempt());
  const std::string second(f.trace.start_attempt());
  EXPECT_EQ(first.substr(0, 36), "00-4bf92f3577b34da6a3ce929d0e0e4736-");
  EXPECT_NE(first.substr(36, 16), "00f067aa0ba902b7");  // the attempt's own span, not the client's
  EXPECT_NE(first.substr(36, 16), second.substr(36, 16));
  EXPECT_EQ(f.trace.upstream_traceparent(), second);
}

TEST(RequestTrace, InvalidOrSeveralTraceparentsStartANewTrace) {
  Fixture f;
  f.trace.begin(f.deps, {}, {.traceparent = "00-zz", .tracestate = "v=1"});
  EXPECT_FALSE(f.trace.keeps_tracestate());
  EXPECT_NE(f.trace.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
  f.trace.begin(f.deps, {}, {.traceparent = kParentSampled, .several_traceparents = true});
  EXPECT_FALSE(f.trace.keeps_tracestate());
  EXPECT_FALSE(f.trace.sampled());
}

TEST(RequestTrace, SecondsSinceBeginCountFromTheLatestBegin) {
  Fixture f;
  f.trace.begin(f.deps, {}, {});
  f.clock.advance(5'000'000);
  EXPECT_DOUBLE_EQ(f.trace.seconds_since_begin(), 0.005);
  f.trace.begin_unread(f.deps);  // the next request, unread: its own clock
  f.clock.advance(1'000'000);
  EXPECT_DOUBLE_EQ(f.trace.seconds_since_begin(), 0.001);
  f.clock.set(0);  // a wall clock set back reads 0, never negative
  EXPECT_EQ(f.trace.seconds_since_begin(), 0.0);
}

TEST(RequestTrace, RequestIds) {
  Fixture f;
  f.trace.begin(f.deps, {}, {.request_id = "client-id-1"});
  EXPECT_EQ(f.trace.request_id(), "client-id-1");
  f.trace.begin(f.deps, {}, {.request_id = "not valid"});
  EXPECT_EQ(f.trace.request_id().size(), kUuidLength);
  EXPECT_EQ(f.trace.request_id().substr(0, 13), "018bcfe5-6800");  // the clock's millisecond
  f.trace.begin_unread(f.deps);
  EXPECT_EQ(f.trace.request_id().size(), kUuidLength);
}

TEST(RequestTrace, SpansOfARecordedRequest) {
  Fixture f;
  f.trace.begin(f.deps, {.exporting = true, .sample_ratio = 1.0},
                {.request_id = "r-1", .traceparent = kParentSampled, .tracestate = "v=1"});
  f.trace.set_http("POST", "/v1/chat/completions");
  f.trace.set_gen_ai_request("chat", "m");
  f.trace.start_route();
  f.clock.advance(1000);
  f.trace.end_route(
      {.route = "m", .strategy = "round_robin", .winner = "a/up", .reason = "pick", .attempt = 1});
  f.trace.start_attempt();
  f.clock.advance(5000);
  f.trace.end_attempt({.endpoint = "a@http://x",
                       .target = "a/up",
                       .provider_name = "openai",
                       .model = "up",
                       .attempt = 1,
                       .status = 503,
                       .error = "status 503"});
  f.trace.start_route();
  f.trace.end_route({.route = "m", .strategy = "round_robin", .winner = "b/up", .attempt = 2});
  const std::string second(f.trace.start_attempt());
  f.clock.advance(7000);
  f.trace.end_attempt({.endpoint = "b@http://y",
                       .target = "b/up",
                       .provider_name = "openai",
                       .model = "up",
                       .attempt = 2,
                       .status = 200,
                       .relayed = true,
                       .ttft_s = 0.007,
                       .input_tokens = 3,
                       .output_tokens = 1});
  f.trace.set_served_by("m", "b/up", 2);
  f.trace.set_status(200);
  f.trace.end();
  EXPECT_FALSE(f.trace.recording());

  const std::vector<Span> spans = f.drain();
  ASSERT_EQ(spans.size(), 5u);
  const Span& request = spans.back();
  EXPECT_EQ(request.name, "rolter.request");
  EXPECT_EQ(request.kind, SpanKind::kServer);
  EXPECT_TRUE(request.remote_parent);
  EXPECT_EQ(request.trace_state, "v=1");
  char parent_hex[16];
  write_hex(request.parent_span_id, parent_hex);
  EXPECT_EQ(std::string_view(parent_hex, 16), "00f067aa0ba902b7");
  EXPECT_EQ(text(request, "rolter.request_id"), "r-1");
  EXPECT_EQ(text(request, "http.request.method"), "POST");
  EXPECT_EQ(text(request, "http.route"), "/v1/chat/completions");
  EXPECT_EQ(number(request, "http.response.status_code"), 200);
  EXPECT_EQ(text(request, "gen_ai.operation.name"), "chat");
  EXPECT_EQ(text(request, "gen_ai.request.model"), "m");
  EXPECT_EQ(text(request, "gen_ai.response.model"), "up");
  EXPECT_EQ(text(request, "gen_ai.provider.name"), "openai");
  EXPECT_EQ(number(request, "gen_ai.usage.input_tokens"), 3);
  EXPECT_EQ(number(request, "gen_ai.usage.output_tokens"), 1);
  EXPECT_EQ(number(request, "rolter.attempts"), 2);
  EXPECT_EQ(request.end_unix_nano - request.start_unix_nano, 13000u);

  for (size_t i = 0; i + 1 < spans.size(); ++i) {
    EXPECT_EQ(spans[i].trace_id, request.trace_id);
    EXPECT_EQ(spans[i].parent_span_id, request.span_id) << spans[i].name;
    EXPECT_FALSE(spans[i].remote_parent);
  }
  EXPECT_EQ(spans[0].name, "rolter.route");
  EXPECT_EQ(text(spans[0], "rolter.winner"), "a/up");
  EXPECT_EQ(spans[0].end_unix_nano - spans[0].start_unix_nano, 1000u);
  EXPECT_EQ(spans[1].name, "rolter.upstream");
  EXPECT_EQ(spans[1].kind, SpanKind::kClient);
  EXPECT_EQ(number(spans[1], "rolter.attempt"), 1);
  EXPECT_EQ(spans[1].status, SpanStatus::kError);
  EXPECT_EQ(spans[3].name, "rolter.upstream");
  EXPECT_EQ(number(spans[3], "rolter.attempt"), 2);
  EXPECT_EQ(spans[3].status, SpanStatus::kUnset);
  // The traceparent sent on the second attempt names the second upstream span.
  char span_hex[16];
  write_hex(spans[3].span_id, span_hex);
  EXPECT_EQ(second.substr(36, 16), std::string_view(span_hex, 16));
}

// SPEC §2's budget: a request that is not recorded allocates nothing for its id, its trace and
// its traceparents.
TEST(RequestTrace, ARequestNotRecordedAllocatesNothing) {
  Fixture f;
  f.trace.begin(f.deps, {.exporting = true, .sample_ratio = 0}, {});  // warm the thread's state
  alloc_count::allocations = 0;
  alloc_count::counting = true;
  for (int i = 0; i < 100; ++i) {
    f.trace.begin(f.deps, {.exporting = true, .sample_ratio = 0},
                  {.request_id = i % 2 ? "client" : "", .traceparent = kParentNotSampled});
    f.trace.set_http("POST", "/v1/chat/completions");
    f.trace.set_gen_ai_request("chat", "m");
    f.trace.start_route();
    f.trace.end_route({.route = "m"});
    f.trace.start_attempt();
    f.trace.end_attempt({.status = 200, .relayed = true});
    f.trace.set_status(200);
    f.trace.end();
  }
  alloc_count::counting = false;
  EXPECT_EQ(alloc_count::allocations.load(), 0);
}

}  // namespace
}  // namespace rolter
