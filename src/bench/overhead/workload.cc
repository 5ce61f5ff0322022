#include "bench/overhead/workload.h"

namespace rolter::bench::overhead {

std::string request_body(bool stream) {
  return stream ? R"({"model":"bench","messages":[{"role":"user","content":"hi"}],"stream":true})"
                : R"({"model":"bench","messages":[{"role":"user","content":"hi"}]})";
}

std::string completion_body() {
  return R"({"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,)"
         R"("model":"bench","choices":[{"index":0,"message":{"role":"assistant",)"
         R"("content":"Hello from the bench upstream."},"finish_reason":"stop"}],)"
         R"("usage":{"prompt_tokens":9,"completion_tokens":6,"total_tokens":15}})";
}

std::string sse_body(int chunks) {
  std::string out;
  for (int i = 0; i < chunks; ++i) {
    const bool last = i + 1 == chunks;
    out += R"(data: {"id":"chatcmpl-bench","object":"chat.completion.chunk",)"
           R"("created":1700000000,"model":"bench","choices":[{"index":0,"delta":{)";
    out += i == 0 ? R"("role":"assistant",)" : "";
    out += R"("content":"tok )" + std::to_string(i) + R"("},"finish_reason":)";
    out += last ? R"("stop"}]})" : R"(null}]})";
    out += "\n\n";
  }
  return out + "data: [DONE]\n\n";
}

}  // namespace rolter::bench::overhead
