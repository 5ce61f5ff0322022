// Translation between the client's API and a target's API (SPEC §16): a chat-completions request
// routed to an Anthropic or Gemini target, or an Anthropic Messages request routed to an
// OpenAI-compatible one. The forwarder picks first and translates after, per attempt, so the
// strategies always read the client's conversation and a retry on a target of another kind gets
// a body made for that kind.
//
// Each direction is a Translator: four pure steps with no I/O, one per part of an exchange. A
// request body becomes the target's path and body; a whole (not streamed) answer, an error, and
// an SSE stream come back in the client's shape. The stream step is incremental and keeps its own
// state, so it takes the upstream's bytes as they arrive, split anywhere, and emits only whole
// client events.
//
// Nothing here throws on any input: a body that cannot be read, or a field that has no
// equivalent in the target's API (n > 1 to Anthropic, logprobs), is a TranslateError naming the
// field, never a silent drop.
//
//   const Translator* t = find_translator(Api::kChat, Api::kAnthropic);
//   auto request = t->request(body, {.model = "claude-sonnet-4-5"});
//   if (!request) return reply(request.error().status, request.error().message);
//   // ... send request->path and request->body, then for a stream:
//   auto stream = t->stream({.model = "claude-sonnet-4-5"});
//   stream->feed(chunk, out);   // per chunk read
//   stream->finish(out);        // at the end, clean or broken
//
// Thread-safety: a Translator is immutable and may be shared by all threads; a StreamTranslator
// belongs to one exchange.
#pragma once

#include <tl/expected.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rolter {

// An API shape: what a client speaks, or what a target serves.
enum class Api {
  kChat,      // OpenAI chat completions (/v1/chat/completions), any OpenAI-compatible server
  kMessages,  // Anthropic Messages (/v1/messages)
  kGemini,    // Google Generative Language API (generateContent, streamGenerateContent)
};

// What could not be translated, or why the body could not be read. `status` is the HTTP status to
// answer with (400 for the client's body, 502 for an upstream answer that makes no sense).
struct TranslateError {
  unsigned status = 400;
  std::string message;  // names the field: "n > 1 cannot be translated to Anthropic Messages"
  std::string param;    // the offending field's name, when there is one ("n", "logprobs")
};

struct TranslateOptions {
  std::string model;  // the target's model name, written into the body or the path
  // Anthropic needs max_tokens: used when the client's request sets none (SPEC §16:
  // anthropic.default_max_tokens).
  unsigned default_max_tokens = 4096;
  // Unix seconds for a chat completion's `created`, from the caller's clock (the translators read
  // none).
  int64_t created = 0;
};

// The target's side of a translated request.
struct TranslatedRequest {
  std::string path;     // path and query to send, from the API root: "/v1/messages",
                        // "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
  std::string body;     // JSON
  bool stream = false;  // the client asked for a stream (the target will send SSE)
};

// An error answer in the client's shape.
struct TranslatedError {
  unsigned status = 502;
  std::string body;  // JSON
};

// Turns an upstream SSE stream into the client's SSE stream, event by event.
class StreamTranslator {
 public:
  virtual ~StreamTranslator() = default;
  // Appends to `out` the client events that `bytes` (the next bytes of the upstream's SSE body,
  // split anywhere, even inside a UTF-8 sequence or a "\r\n") complete. Bytes of an incomplete
  // event are kept for the next call.
  virtual void feed(std::string_view bytes, std::string& out) = 0;
  // The upstream body ended. `clean` is false when it broke (reset, timeout): `out` then gets the
  // client API's stream error event. A clean end that lacked the upstream's own end (no
  // message_stop, no finish) is treated as broken. Appends whatever closing events the client
  // API expects (the final usage chunk and "data: [DONE]" for chat completions). Call once.
  virtual void finish(bool clean, std::string& out) = 0;
  // Usage seen so far, in the client's terms (prompt / completion / cached prompt tokens).
  struct Usage {
    uint64_t input_tokens = 0;
    uint64_t output_tokens = 0;
    uint64_t cached_tokens = 0;
  };
  virtual Usage usage() const = 0;
};

class Translator {
 public:
  virtual ~Translator() = default;
  // The client's request body, as the target's path and body.
  virtual tl::expected<TranslatedRequest, TranslateError> request(
      std::string_view client_body, const TranslateOptions& options) const = 0;
  // A whole 2xx answer of the target, as the client's answer body.
  virtual tl::expected<std::string, TranslateError> response(
      std::string_view upstream_body, const TranslateOptions& options) const = 0;
  // A non-2xx answer of the target (its status and body, which may be anything), as the client's
  // error with the nearest status.
  virtual TranslatedError error(unsigned upstream_status, std::string_view upstream_body) const = 0;
  // A new stream translation for one exchange.
  virtual std::unique_ptr<StreamTranslator> stream(const TranslateOptions& options) const = 0;
};

// The translator from `client` to `target`; nullptr when none is needed (the same API) or none
// exists. The returned object lives for the whole program.
const Translator* find_translator(Api client, Api target);

}  // namespace rolter
