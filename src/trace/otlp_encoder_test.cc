#include "trace/otlp_encoder.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "trace/testing/proto_reader.h"

namespace rolter {
namespace {

using testing::field;
using testing::fields_numbered;
using testing::ProtoField;

template <size_t N>
TraceBytes<N> bytes_from(uint8_t first) {
  TraceBytes<N> id;
  for (size_t i = 0; i < N; ++i) id.bytes[i] = static_cast<uint8_t>(first + i);
  return id;
}

std::string_view as_view(const auto& id) {
  return {reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size()};
}

// KeyValue messages (field `number` of `message`) as key -> AnyValue message.
std::map<std::string, std::string_view> attributes(std::string_view message, uint32_t number) {
  std::map<std::string, std::string_view> out;
  for (const ProtoField& kv : fields_numbered(message, number)) {
    out[std::string(field(kv.bytes, 1).bytes)] = field(kv.bytes, 2).bytes;
  }
  return out;
}

TEST(OtlpEncoder, WritesAnExportTraceServiceRequest) {
  Span root;
  root.trace_id = bytes_from<16>(1);
  root.span_id = bytes_from<8>(0x20);
  root.parent_span_id = bytes_from<8>(0x30);
  root.remote_parent = true;
  root.name = "rolter.request";
  root.kind = SpanKind::kServer;
  root.trace_flags = 1;
  root.start_unix_nano = 1'700'000'000'000'000'001;
  root.end_unix_nano = 1'700'000'000'500'000'000;
  root.trace_state = "vendor=x";
  root.status = SpanStatus::kError;
  root.status_message = "status 502";
  root.set("http.request.method", "POST");
  root.set("http.response.status_code", int64_t{502});
  root.set("rolter.ttft_s", 0.25);
  root.set("rolter.flag", true);
  Span child;
  child.trace_id = root.trace_id;
  child.span_id = bytes_from<8>(0x40);
  child.parent_span_id = root.span_id;
  child.name = "rolter.upstream";
  child.kind = SpanKind::kClient;
  child.trace_flags = 1;
  const std::vector<Span> spans = {root, child};
  const std::string body = encode_export_request(
      {.service_name = "rolter", .service_version = "1.2.3", .host_name = "h"}, spans);

  const ProtoField resource_spans = field(body, 1);
  const auto resource = attributes(field(resource_spans.bytes, 1).bytes, 1);
  ASSERT_EQ(resource.size(), 3u);
  EXPECT_EQ(field(resource.at("service.name"), 1).bytes, "rolter");
  EXPECT_EQ(field(resource.at("service.version"), 1).bytes, "1.2.3");
  EXPECT_EQ(field(resource.at("host.name"), 1).bytes, "h");

  const std::string_view scope_spans = field(resource_spans.bytes, 2).bytes;
  const std::string_view scope = field(scope_spans, 1).bytes;
  EXPECT_EQ(field(scope, 1).bytes, "rolter");
  EXPECT_EQ(field(scope, 2).bytes, "1.2.3");
  const auto encoded = fields_numbered(scope_spans, 2);
  ASSERT_EQ(encoded.size(), 2u);

  const std::string_view s = encoded[0].bytes;
  EXPECT_EQ(field(s, 1).bytes, as_view(root.trace_id));
  EXPECT_EQ(field(s, 2).bytes, as_view(root.span_id));
  EXPECT_EQ(field(s, 3).bytes, "vendor=x");
  EXPECT_EQ(field(s, 4).bytes, as_view(root.parent_span_id));
  EXPECT_EQ(field(s, 5).bytes, "rolter.request");
  EXPECT_EQ(field(s, 6).value, 2u);  // SPAN_KIND_SERVER
  EXPECT_EQ(field(s, 7).wire_type, 1u);
  EXPECT_EQ(field(s, 7).value, root.start_unix_nano);
  EXPECT_EQ(field(s, 8).value, root.end_unix_nano);
  EXPECT_EQ(field(s, 16).wire_type, 5u);
  EXPECT_EQ(field(s, 16).value, 0x301u);  // remote parent known and set, sampled
  const std::string_view status = field(s, 15).bytes;
  EXPECT_EQ(field(status, 2).bytes, "status 502");
  EXPECT_EQ(field(status, 3).value, 2u);  // STATUS_CODE_ERROR
  const auto attrs = attributes(s, 9);
  ASSERT_EQ(attrs.size(), 4u);
  EXPECT_EQ(field(attrs.at("http.request.method"), 1).bytes, "POST");
  EXPECT_EQ(field(attrs.at("http.response.status_code"), 3).value, 502u);
  EXPECT_EQ(testing::as_double(field(attrs.at("rolter.ttft_s"), 4).value), 0.25);
  EXPECT_EQ(field(attrs.at("rolter.flag"), 2).value, 1u);

  const std::string_view c = encoded[1].bytes;
  EXPECT_EQ(field(c, 4).bytes, as_view(root.span_id));
  EXPECT_EQ(field(c, 6).value, 3u);  // SPAN_KIND_CLIENT
  EXPECT_EQ(field(c, 16).value, 0x101u);
  EXPECT_TRUE(fields_numbered(c, 3).empty());   // no trace state
  EXPECT_TRUE(fields_numbered(c, 15).empty());  // status unset
}

TEST(OtlpEncoder, ARootSpanHasNoParentField) {
  Span root;
  root.trace_id = bytes_from<16>(1);
  root.span_id = bytes_from<8>(2);
  root.name = "rolter.request";
  const std::vector<Span> spans = {root};
  const std::string body = encode_export_request({}, spans);
  const std::string_view scope_spans = field(field(body, 1).bytes, 2).bytes;
  EXPECT_TRUE(fields_numbered(field(scope_spans, 2).bytes, 4).empty());
}

}  // namespace
}  // namespace rolter
