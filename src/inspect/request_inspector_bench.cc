// Inspector cost per request: a typical ~4 KiB multi-turn chat body, and a 256 KiB body (long
// document in one message), on the zero-copy padded path and on the copying path.
#include <benchmark/benchmark.h>

#include <string>

#include "inspect/model_rewrite.h"
#include "inspect/request_inspector.h"

namespace rolter {
namespace {

// A chat body of about `target_bytes`: a system prompt, then user/assistant turns of ~300 bytes,
// the last assistant turn calling a tool.
std::string chat_body(size_t target_bytes) {
  std::string body =
      R"({"model":"qwen3","stream":true,"temperature":0.7,"messages":[)"
      R"({"role":"system","content":"You are a helpful assistant. Answer concisely and cite sources."})";
  const std::string turn(300, 'w');
  int i = 0;
  while (body.size() + 400 < target_bytes) {
    body += i % 2 == 0 ? R"(,{"role":"user","content":[{"type":"text","text":")"
                       : R"(,{"role":"assistant","content":")";
    body += turn;
    body += std::to_string(i);
    body += i % 2 == 0 ? R"("}]})" : R"("})";
    ++i;
  }
  body += R"(,{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",)"
          R"("function":{"name":"search","arguments":"{\"q\":\"weather\"}"}}]})"
          R"(,{"role":"tool","tool_call_id":"call_1","content":"sunny"}]})";
  return body;
}

// One user message holding a long document with escapes, like a pasted file.
std::string long_document_body(size_t target_bytes) {
  std::string body = R"({"model":"qwen3","messages":[{"role":"user","content":")";
  const std::string line = R"(The quick brown fox jumps over the lazy dog. \"quoted\"\n)";
  while (body.size() + line.size() + 8 < target_bytes) body += line;
  body += R"("}]})";
  return body;
}

void run(benchmark::State& state, const std::string& body, bool padded) {
  std::string buffer = body;
  buffer.reserve(body.size() + RequestInspector::kPadding);
  RequestInspector inspector;
  RequestFacts facts;
  InspectHeaders headers;
  headers.session_id = "session-1";
  const size_t capacity = padded ? buffer.capacity() : buffer.size();
  for (auto _ : state) {
    auto ok = inspector.inspect(buffer.data(), buffer.size(), capacity, ApiKind::kChatCompletions,
                                headers, facts);
    if (!ok) state.SkipWithError(ok.error().message.c_str());
    benchmark::DoNotOptimize(facts.prompt_digest);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
  state.counters["body_bytes"] = static_cast<double>(body.size());
}

void BM_Inspect_Chat4KiB(benchmark::State& state) { run(state, chat_body(4096), true); }
void BM_Inspect_Chat4KiB_Copy(benchmark::State& state) { run(state, chat_body(4096), false); }
void BM_Inspect_Chat256KiB(benchmark::State& state) { run(state, chat_body(256 * 1024), true); }
void BM_Inspect_Document256KiB(benchmark::State& state) {
  run(state, long_document_body(256 * 1024), true);
}
void BM_Inspect_Document256KiB_Copy(benchmark::State& state) {
  run(state, long_document_body(256 * 1024), false);
}

void BM_RewriteModel_Chat4KiB(benchmark::State& state) {
  const std::string body = chat_body(4096);
  RequestInspector inspector;
  RequestFacts facts;
  if (!inspector.inspect(body, ApiKind::kChatCompletions, {}, facts)) {
    state.SkipWithError("inspect failed");
    return;
  }
  for (auto _ : state) {
    auto pieces = rewrite_model(body, facts, "Qwen/Qwen3-8B");
    benchmark::DoNotOptimize(pieces);
  }
}

BENCHMARK(BM_Inspect_Chat4KiB);
BENCHMARK(BM_Inspect_Chat4KiB_Copy);
BENCHMARK(BM_Inspect_Chat256KiB);
BENCHMARK(BM_Inspect_Document256KiB);
BENCHMARK(BM_Inspect_Document256KiB_Copy);
BENCHMARK(BM_RewriteModel_Chat4KiB);

}  // namespace
}  // namespace rolter
