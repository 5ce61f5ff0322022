// Engine: the state and behaviour of one simulated vLLM-like engine, free of any networking.
//
// The HTTP server (engine_server.h) hands each inference request to begin(), which counts it,
// reads it, decides its faults and prepares the answer and its model request (prompt token ids
// from the shared tokenizer, output length, LoRA adapter). The server submits that to model()
// (engine_model.h: queue, KV cache, LoRA, prefill and decode pace, in virtual milliseconds since
// the server started), paces the answer by the model's events, and reports how it ended through
// finish(). Embeddings bypass the model and take latency().embedding_time().
//
// Prompt tokens: the shared tokenizer over the conversation text (chat: message contents in
// order; completions: the prompt text, or a token-id array as is; responses: instructions and
// input; messages: system then messages; Gemini: systemInstruction then contents' text parts),
// so a client can predict the ids and the KV events.
//
// The answer is text from text_generator.h cut at the first stop sequence (stop_sequences.h), or
// one tool call (tool_calls.h's rule), whose argument fragments are its output tokens. A prompt
// longer than the max_model_len fault (when set) is a 400 context-length error in the API's shape.
//
// LoRA rule (as vLLM serves adapters under their own names): a request whose `model` is
// non-empty and not one of the served --model names addresses the adapter of that name.
//
// Prefill/decode disaggregation (SPEC section 18, vLLM's NixlConnector handshake): a chat or
// completions request with kv_transfer_params.do_remote_decode (step 1; refused 400 by a
// `decode` engine) is prefilled and answered after one token, never streamed, its blocks held in
// the model (ModelRequest::hold_kv); the server then calls start_hold(), which registers the
// hold with the process's KvTransferRegistry and returns the kv_transfer_params of the answer.
// A request with do_remote_prefill (step 2; refused 400 by a `prefill` engine) claims that hold
// in begin(): unusable parameters are answered 503 with a message starting
// "kv_transfer_params:"; usable ones make the model pull the blocks instead of prefilling
// (ModelRequest::kv_from_remote). release_hold() gives held blocks back to the prefix cache.
//
// KV events of the model go to the publisher given to set_kv_publisher(), with the engine's
// kv_* faults applied.
//
// Thread-safety: not thread-safe. The owning server serialises every call (one strand per
// engine).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/api_format.h"
#include "sim/api_request.h"
#include "sim/engine_model.h"
#include "sim/faults.h"
#include "sim/kv_publisher.h"
#include "sim/kv_transfer_params.h"
#include "sim/kv_transfer_registry.h"
#include "sim/latency_model.h"

namespace rolter::sim {

struct EngineOptions {
  size_t index = 0;
  uint64_t seed = 0;
  // Served model names for /v1/models; the first one answers requests without a model.
  std::vector<std::string> models = {"sim-model"};
  size_t max_tokens_default = 16;  // output tokens when the request names no max
  size_t max_tokens_cap = 4096;    // upper bound on any request's output tokens
  size_t embedding_dims = 16;
  LatencyParams latency;  // embeddings' delay; the model takes ttft/token as its constant parts
  EngineModelParams model;
  Faults faults;
  EngineRole role = EngineRole::kBoth;
  // Unique per engine and per process ("sim-<pid>-<index>"): the remote_engine_id of its holds.
  std::string engine_id;
  // The holds of the engines of this process; begin() makes a private one when null.
  std::shared_ptr<KvTransferRegistry> kv_registry;
  double kv_hold_ms = 30000;  // wall-clock ms a step 1's blocks stay held for a pull
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// How an inference request ended, for the counters.
enum class Outcome {
  kCompleted,  // answered in full
  kCancelled,  // the client went away (closed, reset, or a write failed) before the end
  kFaulted,    // answered with an injected 429 or error status
  kDropped,    // the stream was cut by the drop fault
  kRejected,   // 400: bad JSON or a body of the wrong shape
};

struct RequestPlan {
  ApiKind api = ApiKind::kChat;
  uint64_t seq = 0;  // per-engine request number, 0-based
  // The status and body to answer with when the request is not a stream; for a stream, the
  // status is 200 and the body empty. Error statuses come with their error body here.
  int status = 200;
  std::string body;
  bool stream = false;
  FaultDecision fault;
  Completion completion;  // the generated answer (chat, completions, responses, messages)
  // Embeddings: when the answer is due, measured from the request's arrival.
  LatencyModel::Duration delay{0};
  // Generating APIs that are answered (not errors): what to submit to the model. The body of a
  // non-streaming answer is rendered once the model finishes (it reports the cache hit).
  std::optional<ModelRequest> model_request;
  // Step 1 of a disaggregated request: when the model finishes, call start_hold() and add the
  // kv_transfer_params it returns to the answer.
  bool remote_decode = false;

  bool is_error() const { return status >= 400; }
};

class Engine {
 public:
  explicit Engine(EngineOptions options);

  size_t index() const { return options_.index; }
  const EngineOptions& options() const { return options_; }
  const LatencyModel& latency() const { return latency_; }
  EngineModel& model() { return model_; }
  const EngineModel& model() const { return model_; }

  // Sends the model's KV events to `publisher` (not owned; may be null), stamping batches with
  // unix time epoch_unix_s + model ms / 1000.
  void set_kv_publisher(KvEventPublisher* publisher, double epoch_unix_s);

  const Faults& faults() const { return options_.faults; }
  void set_faults(const Faults& faults) { options_.faults = faults; }
  bool is_adapter(std::string_view model) const;
  // The max_model_len fault when set, else vLLM's usual 32768 (reported, not enforced).
  size_t max_model_len() const;

  // POST /tokenize, as vLLM serves it: a body with `messages` (read as a chat request) or
  // `prompt` (read as a completions request; a token-id array is returned as is) answers
  // {"count":N,"max_model_len":M,"tokens":[...]} with exactly the ids a request of the same
  // conversation puts in the KV cache (prompt_token_ids()). Errors are 400 with an OpenAI error
  // body. Counted apart from the inference requests (stats_json()'s "tokenize").
  struct TokenizeAnswer {
    int status = 200;
    std::string body;
  };
  TokenizeAnswer tokenize(std::string_view body, HeaderList headers = {});

  // Counts a request to a path other than the inference APIs (health, metrics, models). Paths
  // under /sim/ are the test hooks and are not counted.
  void note_request(std::string_view path);

  // Starts an inference request on `api`: counts it, remembers its model, body and headers for
  // /sim/stats, reads it and decides its faults. The request is in flight until finish().
  RequestPlan begin(ApiKind api, std::string_view path, std::string_view body, HeaderList headers);
  void finish(Outcome outcome);

  // Where the engine listens: the remote_host and remote_port of its step 1 answers. Registers
  // the engine with the KV registry; `release` must run release_hold(hold) on this engine's own
  // thread (see KvTransferRegistry::Release).
  void set_listen_address(const std::string& host, uint16_t port,
                          KvTransferRegistry::Release release);
  EngineRole role() const { return options_.role; }
  const std::string& engine_id() const { return options_.engine_id; }
  KvTransferRegistry& kv_registry() { return *options_.kv_registry; }
  // Step 1 finished (model request `model_id` of a remote_decode plan): holds its blocks until
  // `now + kv_hold_ms` and returns the answer's kv_transfer_params object (nullopt when the model
  // holds nothing for it: the engine does not listen, or the request was cancelled). The hold's
  // id is the model request id.
  std::optional<nlohmann::json> start_hold(uint64_t model_id);
  // Gives held blocks back to the prefix cache (a pull took them, or the hold expired).
  void release_hold(double now_ms, uint64_t hold_id);
  // {"engine":i,"requests":n,"by_path":{...},"cancelled":n,"completed":n,"in_flight":n,
  //  "faulted":n,"dropped":n,"rejected":n,"last_model":"...","last_path":"...",
  //  "role":"prefill"|"decode"|"both","engine_id":"sim-<pid>-<i>","remote_decode_prefills":n,
  //  "remote_prefills":n,"remote_prefill_failures":n,"kv_blocks_pulled":n (model lifetime),
  //  "kv_holds":n (live holds),
  //  "last_body":{...},"last_headers":{...} (every header of the last inference request, names
  //  in lower case: authorization, x-api-key, x-goog-api-key, anthropic-version,
  //  ...),"tokenize":{"requests":n,"rejected":n,"last_body":{...}, "last_headers":{...}}}.
  // `requests` counts inference requests only; `by_path` every path; `tokenize` the /tokenize
  // calls (last_body and last_headers: the last one's, null and {} when none).
  nlohmann::json stats_json() const;
  void reset_stats();

  // Prometheus text exposition with vLLM's metric names.
  std::string metrics_text() const;
  // OpenAI list of the served models.
  std::string models_json() const;

 private:
  // begin()'s answer to a valid request: the embeddings body, or the completion and its model
  // request.
  void plan_embeddings(const ApiRequest& request, const std::string& model,
                       RequestPlan& plan) const;
  void plan_generation(ApiRequest& request, const std::string& model, RequestPlan& plan);
  void plan_text(const ApiRequest& request, Completion& c) const;
  void plan_tool_call(const ApiRequest& request, Completion& c, uint64_t seq) const;
  // The kv_transfer_params part of begin(): the role checks before planning (and step 1's one
  // token), and step 2's claim after. False when `plan` became an error answer.
  bool check_kv_role(const KvTransferParams& kv, ErrorShape shape, ApiRequest& request,
                     RequestPlan& plan);
  bool claim_remote_kv(const KvTransferParams& kv, ErrorShape shape, RequestPlan& plan);
  // Parses `body` and reads it as a request of `api`; a Gemini path supplies model and stream.
  tl::expected<ApiRequest, std::string> read_request(ApiKind api, std::string_view path,
                                                     std::string_view body) const;

  // Forwards the model's KV events to the publisher.
  struct KvForwarder : KvEventSink {
    Engine* engine = nullptr;
    void on_kv_events(double at_ms, std::span<const KvEvent> events) override;
  };

  EngineOptions options_;
  LatencyModel latency_;
  KvForwarder kv_forwarder_;  // before model_, which holds a pointer to it
  EngineModel model_;
  KvEventPublisher* kv_publisher_ = nullptr;
  double kv_epoch_unix_s_ = 0;
  uint64_t next_model_id_ = 0;  // never reset, unlike requests_, so model ids stay unique

  uint64_t requests_ = 0;
  uint64_t completed_ = 0;
  uint64_t cancelled_ = 0;
  uint64_t faulted_ = 0;
  uint64_t dropped_ = 0;
  uint64_t rejected_ = 0;
  uint64_t in_flight_ = 0;
  uint64_t peak_in_flight_ = 0;  // the most requests in flight at once since the last reset
  // The usage the answers report, counted when an answer is planned (a request cancelled midway
  // still counts): what a gateway's usage records must add up to.
  uint64_t answered_prompt_tokens_ = 0;
  uint64_t answered_completion_tokens_ = 0;
  std::map<std::string, uint64_t, std::less<>> by_path_;
  std::string last_model_;
  std::string last_path_;
  std::string last_body_;  // raw; parsed when stats are rendered
  HeaderList last_headers_;
  std::string listen_host_;
  uint16_t listen_port_ = 0;
  uint64_t remote_decode_prefills_ = 0;   // step 1 answers (holds started)
  uint64_t remote_prefills_ = 0;          // step 2 requests whose blocks were claimed
  uint64_t remote_prefill_failures_ = 0;  // step 2 requests refused 503
  uint64_t tokenize_requests_ = 0;
  uint64_t tokenize_rejected_ = 0;
  std::string last_tokenize_body_;  // raw, like last_body_
  HeaderList last_tokenize_headers_;
};

// The token ids a request puts in the engine's KV cache: a completions token-array prompt as
// sent, else the shared tokenizer over its prompt text (the conversation template of
// api_request.h). Both the model request and /tokenize read them here, so they always agree.
std::vector<uint32_t> prompt_token_ids(ApiRequest& request);

}  // namespace rolter::sim
