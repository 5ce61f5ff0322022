#include "sim/engine.h"

#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include <chrono>

#include "sim/gemini_format.h"
#include "sim/gemini_request.h"
#include "sim/stop_sequences.h"
#include "sim/text_generator.h"
#include "tokenizer/tokenizer.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

std::string id_suffix(size_t engine, uint64_t seq) {
  return "sim" + std::to_string(engine) + "n" + std::to_string(seq);
}

std::string completion_id(ApiKind api, size_t engine, uint64_t seq) {
  const std::string suffix = id_suffix(engine, seq);
  switch (api) {
    case ApiKind::kChat:
      return "chatcmpl-" + suffix;
    case ApiKind::kCompletions:
      return "cmpl-" + suffix;
    case ApiKind::kResponses:
      return "resp_" + suffix;
    case ApiKind::kMessages:
      return "msg_" + suffix;
    case ApiKind::kEmbeddings:
    case ApiKind::kGeminiEmbed:
    case ApiKind::kGeminiBatchEmbed:
      return "embd-" + suffix;
    case ApiKind::kGemini:
      return "gen-" + suffix;
  }
  return suffix;
}

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Escapes a Prometheus label value.
std::string label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

// A body kept for /sim/stats: its JSON, the text itself when it is not JSON (show what arrived),
// null when there is none.
Json parse_for_stats(const std::string& raw) {
  if (raw.empty()) return nullptr;
  Json json = Json::parse(raw, nullptr, false);
  if (json.is_discarded()) return raw;
  return json;
}

// Headers kept for /sim/stats as one object; repeated names are joined with ", ".
Json headers_for_stats(const HeaderList& list) {
  Json headers = Json::object();
  for (const auto& [name, value] : list) {
    auto it = headers.find(name);
    if (it == headers.end()) {
      headers[name] = value;
    } else {
      *it = it->get<std::string>() + ", " + value;
    }
  }
  return headers;
}

// vLLM's max_model_len when the max_model_len fault does not set one (never enforced then), as
// /v1/models and /tokenize report it.
constexpr size_t kMaxModelLen = 32768;

}  // namespace

std::vector<uint32_t> prompt_token_ids(ApiRequest& request) {
  std::vector<uint32_t> ids;
  if (!request.prompt_ids.empty()) {
    ids = std::move(request.prompt_ids);
  } else {
    tokenizer::tokenize(request.prompt_text, ids);
  }
  return ids;
}

Engine::Engine(EngineOptions options)
    : options_(std::move(options)),
      latency_(options_.latency),
      model_(options_.model, &kv_forwarder_) {
  if (options_.models.empty()) options_.models.push_back("sim-model");
  if (!options_.kv_registry) options_.kv_registry = std::make_shared<KvTransferRegistry>();
  if (options_.engine_id.empty()) {
    options_.engine_id = "sim-" + std::to_string(::getpid()) + "-" + std::to_string(options_.index);
  }
  kv_forwarder_.engine = this;
}

void Engine::set_kv_publisher(KvEventPublisher* publisher, double epoch_unix_s) {
  kv_publisher_ = publisher;
  kv_epoch_unix_s_ = epoch_unix_s;
}

void Engine::KvForwarder::on_kv_events(double at_ms, std::span<const KvEvent> events) {
  if (engine->kv_publisher_ == nullptr) return;
  Faults& f = engine->options_.faults;
  KvFaults kv{.skip_seq = f.kv_skip_seq, .garbage = f.kv_garbage, .silent = f.kv_silent};
  engine->kv_publisher_->publish(engine->kv_epoch_unix_s_ + at_ms / 1000.0, events, kv);
  f.kv_skip_seq = kv.skip_seq;
  f.kv_garbage = kv.garbage;
}

bool Engine::is_adapter(std::string_view model) const {
  if (model.empty()) return false;
  for (const auto& served : options_.models) {
    if (served == model) return false;
  }
  return true;
}

size_t Engine::max_model_len() const {
  const int64_t set = options_.faults.max_model_len;
  return set > 0 ? static_cast<size_t>(set) : kMaxModelLen;
}

void Engine::note_request(std::string_view path) {
  if (path.rfind("/sim/", 0) == 0) return;
  auto it = by_path_.find(path);
  if (it == by_path_.end()) it = by_path_.emplace(std::string(path), 0).first;
  ++it->second;
}

RequestPlan Engine::begin(ApiKind api, std::string_view path, std::string_view body,
                          HeaderList headers) {
  note_request(path);
  RequestPlan plan;
  plan.api = api;
  plan.seq = requests_++;
  ++in_flight_;
  peak_in_flight_ = std::max(peak_in_flight_, in_flight_);
  last_path_.assign(path);
  last_body_.assign(body);
  last_headers_ = std::move(headers);

  const ErrorShape shape = error_shape(api);
  auto request = read_request(api, path, body);
  if (!request) {
    last_model_.clear();
    plan.status = 400;
    plan.body = render_error(shape, 400, request.error());
    return plan;
  }
  last_model_ = request->model;
  // Checked before the faults, as a real server validates a request before it is scheduled.
  if (options_.faults.max_model_len > 0 && request->prompt_tokens > max_model_len()) {
    plan.status = 400;
    plan.body = render_context_length_error(shape, max_model_len(), request->prompt_tokens);
    return plan;
  }

  plan.fault = decide_faults(options_.faults, options_.seed, options_.index, plan.seq);
  switch (plan.fault.action) {
    case FaultAction::kRateLimit:
      plan.status = 429;
      plan.body = render_error(shape, 429, "simulated rate limit");
      return plan;
    case FaultAction::kError:
      plan.status = plan.fault.status;
      plan.body = render_error(shape, plan.fault.status, "simulated engine error");
      return plan;
    case FaultAction::kNone:
      break;
  }

  const std::string& model = request->model.empty() ? options_.models.front() : request->model;
  if (is_embeddings(api)) {
    plan_embeddings(*request, model, plan);
  } else {
    const std::optional<KvTransferParams>& kv = request->kv_transfer;
    if (kv && !check_kv_role(*kv, shape, *request, plan)) return plan;
    plan_generation(*request, model, plan);
    // Held only where a decode can find them: an engine that listens (set_listen_address).
    plan.model_request->hold_kv = plan.remote_decode && listen_port_ != 0;
    if (kv && kv->do_remote_prefill && !claim_remote_kv(*kv, shape, plan)) return plan;
    answered_completion_tokens_ += plan.completion.completion_tokens();
  }
  answered_prompt_tokens_ += request->prompt_tokens;
  return plan;
}

Engine::TokenizeAnswer Engine::tokenize(std::string_view body, HeaderList headers) {
  ++tokenize_requests_;
  last_tokenize_body_.assign(body);
  last_tokenize_headers_ = std::move(headers);
  auto reject = [&](std::string_view message) {
    ++tokenize_rejected_;
    return TokenizeAnswer{400, render_error(false, 400, message)};
  };
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return reject("the request body is not valid JSON");
  if (!json.is_object()) return reject("the request body must be a JSON object");
  // vLLM tells its two request shapes apart by the field they carry.
  std::optional<ApiKind> api;
  if (json.contains("messages")) {
    api = ApiKind::kChat;
  } else if (json.contains("prompt")) {
    api = ApiKind::kCompletions;
  } else {
    return reject("either 'messages' or 'prompt' is required");
  }
  auto request = read_api_request(*api, json);
  if (!request) return reject(request.error());
  const std::vector<uint32_t> ids = prompt_token_ids(*request);
  const Json answer = {{"count", ids.size()}, {"max_model_len", max_model_len()}, {"tokens", ids}};
  return TokenizeAnswer{200, answer.dump()};
}

void Engine::plan_embeddings(const ApiRequest& request, const std::string& model,
                             RequestPlan& plan) const {
  const size_t dims = request.dimensions.value_or(options_.embedding_dims);
  std::vector<Embedding> data;
  for (const auto& input : request.inputs) {
    data.push_back({embed_text(options_.seed, input, dims)});
  }
  if (is_gemini(plan.api)) {
    plan.body = gemini_embeddings(data, plan.api == ApiKind::kGeminiBatchEmbed);
  } else {
    plan.body = render_embeddings(model, data, request.prompt_tokens, request.encoding);
  }
  plan.delay = latency_.embedding_time(request.prompt_tokens);
}

tl::expected<ApiRequest, std::string> Engine::read_request(ApiKind api, std::string_view path,
                                                           std::string_view body) const {
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return tl::make_unexpected("the request body is not valid JSON");
  auto request = read_api_request(api, json);
  if (!request) return request;
  // Gemini names the model and the streaming in the path, not the body.
  if (auto gemini = parse_gemini_path(path)) {
    request->model = std::move(gemini->model);
    request->stream = gemini->stream;
  }
  return request;
}

void Engine::plan_text(const ApiRequest& request, Completion& c) const {
  const size_t wanted = request.max_tokens.value_or(options_.max_tokens_default);
  const size_t length = std::min(wanted, options_.max_tokens_cap);
  // Completions answer each prompt of a batch; the other APIs have the one conversation.
  const std::vector<std::string> conversation = {request.prompt_text};
  const auto& prompts = request.inputs.empty() ? conversation : request.inputs;
  c.choices = generate_choices(options_.seed, prompts, request.n, length);
  // The text is made up, so only the client's cap or a stop sequence can cut it: a
  // default-length answer, or one ended by the engine's own --max-tokens-cap below the client's,
  // "stops" as if at end of text.
  c.hit_max_tokens = request.max_tokens.has_value() && *request.max_tokens <= length;
  if (request.stop.empty()) return;
  c.stop_hits.resize(c.choices.size());
  for (size_t i = 0; i < c.choices.size(); ++i) {
    c.stop_hits[i] = cut_at_stop(c.choices[i], request.stop);
  }
}

void Engine::plan_tool_call(const ApiRequest& request, Completion& c, uint64_t seq) const {
  ToolCall call;
  // Gemini calls carry no id.
  if (c.api == ApiKind::kMessages) call.id = "toolu_" + id_suffix(options_.index, seq);
  if (c.api == ApiKind::kChat) call.id = "call_" + id_suffix(options_.index, seq);
  call.name = request.tool->name;
  call.arguments = tool_arguments(options_.seed, *request.tool);
  // The call is emitted whole, whatever the max tokens: its pieces are the argument fragments.
  c.choices = {split_arguments(call.arguments)};
  c.tool_call = std::move(call);
}

void Engine::plan_generation(ApiRequest& request, const std::string& model, RequestPlan& plan) {
  Completion& c = plan.completion;
  c.api = plan.api;
  c.id = completion_id(plan.api, options_.index, plan.seq);
  c.model = model;
  c.created = unix_now();
  c.prompt_tokens = request.prompt_tokens;
  if (request.tool) {
    plan_tool_call(request, c, plan.seq);
  } else {
    plan_text(request, c);
  }
  c.include_usage = request.include_usage;
  plan.stream = request.stream;
  // One model sequence paces every choice: n choices and batched prompts cost no extra time or
  // KV room here, unlike vLLM, which runs them as parallel sequences.
  ModelRequest mr;
  mr.id = next_model_id_++;
  mr.tokens = prompt_token_ids(request);
  mr.output_tokens = c.length();
  if (is_adapter(request.model)) mr.adapter = request.model;
  plan.model_request = std::move(mr);
}

bool Engine::check_kv_role(const KvTransferParams& kv, ErrorShape shape, ApiRequest& request,
                           RequestPlan& plan) {
  if (kv.do_remote_decode) {
    if (options_.role == EngineRole::kDecode) {
      plan.status = 400;
      plan.body = render_error(shape, 400,
                               "kv_transfer_params: this engine (role decode) is a KV consumer "
                               "and cannot serve do_remote_decode");
      return false;
    }
    // vLLM's proxy asks a prefill worker for one token, not streamed; the engine holds to that
    // whatever the body says, so the answer always carries the parameters.
    request.max_tokens = 1;
    request.stream = false;
    plan.remote_decode = true;
  } else if (kv.do_remote_prefill && options_.role == EngineRole::kPrefill) {
    plan.status = 400;
    plan.body = render_error(shape, 400,
                             "kv_transfer_params: this engine (role prefill) is a KV producer and "
                             "cannot serve do_remote_prefill");
    return false;
  }
  return true;
}

bool Engine::claim_remote_kv(const KvTransferParams& kv, ErrorShape shape, RequestPlan& plan) {
  ModelRequest& mr = *plan.model_request;
  const std::vector<uint64_t> hashes = model_.kv_cache().chain_hashes(mr.tokens, mr.adapter);
  auto hold = options_.kv_registry->claim(kv, hashes, KvTransferRegistry::Clock::now());
  if (!hold) {
    // vLLM reports a failed KV load as an engine error; 503 lets a gateway try elsewhere.
    ++remote_prefill_failures_;
    plan.status = 503;
    plan.body = render_error(shape, 503, "kv_transfer_params: " + hold.error());
    plan.model_request.reset();
    return false;
  }
  ++remote_prefills_;
  mr.kv_from_remote = true;
  return true;
}

void Engine::set_listen_address(const std::string& host, uint16_t port,
                                KvTransferRegistry::Release release) {
  listen_host_ = host;
  listen_port_ = port;
  options_.kv_registry->add_engine(options_.engine_id, host, port, std::move(release));
}

std::optional<Json> Engine::start_hold(uint64_t model_id) {
  auto held = model_.held_block_ids(model_id);
  if (!held) return std::nullopt;
  ++remote_decode_prefills_;
  Json params = {{"do_remote_prefill", true},
                 {"do_remote_decode", false},
                 {"remote_engine_id", options_.engine_id},
                 {"remote_block_ids", held->ids},
                 {"remote_host", listen_host_},
                 {"remote_port", listen_port_},
                 {"tp_size", 1}};
  const auto hold_for = std::chrono::duration_cast<KvTransferRegistry::Clock::duration>(
      std::chrono::duration<double, std::milli>(options_.kv_hold_ms));
  options_.kv_registry->add_hold(options_.engine_id,
                                 {.id = model_id,
                                  .block_ids = std::move(held->ids),
                                  .hashes = std::move(held->hashes),
                                  .expires = KvTransferRegistry::Clock::now() + hold_for});
  return params;
}

void Engine::release_hold(double now_ms, uint64_t hold_id) { model_.release_held(now_ms, hold_id); }

void Engine::finish(Outcome outcome) {
  if (in_flight_ > 0) --in_flight_;
  switch (outcome) {
    case Outcome::kCompleted:
      ++completed_;
      break;
    case Outcome::kCancelled:
      ++cancelled_;
      break;
    case Outcome::kFaulted:
      ++faulted_;
      break;
    case Outcome::kDropped:
      ++dropped_;
      break;
    case Outcome::kRejected:
      ++rejected_;
      break;
  }
}

Json Engine::stats_json() const {
  Json by_path = Json::object();
  for (const auto& [path, n] : by_path_) by_path[path] = n;
  const Json headers = headers_for_stats(last_headers_);
  const Json body = parse_for_stats(last_body_);
  return Json{{"engine", options_.index},
              {"role", role_name(options_.role)},
              {"engine_id", options_.engine_id},
              {"remote_decode_prefills", remote_decode_prefills_},
              {"remote_prefills", remote_prefills_},
              {"remote_prefill_failures", remote_prefill_failures_},
              {"kv_blocks_pulled", model_.kv_blocks_pulled()},
              {"kv_holds", model_.held()},
              {"requests", requests_},
              {"by_path", by_path},
              {"completed", completed_},
              {"cancelled", cancelled_},
              {"faulted", faulted_},
              {"dropped", dropped_},
              {"rejected", rejected_},
              {"in_flight", in_flight_},
              {"peak_in_flight", peak_in_flight_},
              {"usage",
               {{"prompt_tokens", answered_prompt_tokens_},
                {"completion_tokens", answered_completion_tokens_}}},
              {"last_model", last_model_},
              {"last_path", last_path_},
              {"last_body", body},
              {"last_headers", headers},
              {"faults", faults_to_json(options_.faults)},
              {"tokenize",
               {{"requests", tokenize_requests_},
                {"rejected", tokenize_rejected_},
                {"last_body", parse_for_stats(last_tokenize_body_)},
                {"last_headers", headers_for_stats(last_tokenize_headers_)}}},
              {"model",
               {{"running", model_.running()},
                {"waiting", model_.waiting()},
                {"cache_usage", model_.cache_usage()},
                {"occupancy", model_.occupancy()},
                {"prefix_hit_tokens", model_.prefix_hit_tokens()},
                {"prefix_query_tokens", model_.prefix_query_tokens()},
                {"lora_misses", model_.lora_misses()},
                {"prefill_computed_tokens", model_.prefill_computed_tokens()},
                {"kv_blocks_pulled", model_.kv_blocks_pulled()},
                {"adapters", model_.resident_adapters()}}}};
}

void Engine::reset_stats() {
  // in_flight_ is live state, not a counter: requests still running will call finish().
  requests_ = completed_ = cancelled_ = faulted_ = dropped_ = rejected_ = 0;
  peak_in_flight_ = in_flight_;
  remote_decode_prefills_ = remote_prefills_ = remote_prefill_failures_ = 0;
  answered_prompt_tokens_ = answered_completion_tokens_ = 0;
  by_path_.clear();
  last_model_.clear();
  last_path_.clear();
  last_body_.clear();
  last_headers_.clear();
  tokenize_requests_ = tokenize_rejected_ = 0;
  last_tokenize_body_.clear();
  last_tokenize_headers_.clear();
}

std::string Engine::metrics_text() const {
  const std::string labels = "{model_name=\"" + label_value(options_.models.front()) + "\"}";
  std::string out;
  auto metric = [&](const char* name, const char* type, const char* help, double value) {
    out += "# HELP ";
    out += name;
    out += ' ';
    out += help;
    out += "\n# TYPE ";
    out += name;
    out += ' ';
    out += type;
    out += '\n';
    out += name;
    out += labels;
    out += ' ';
    // Integral values print without a fraction, as Prometheus clients do for counts.
    if (value == static_cast<double>(static_cast<int64_t>(value))) {
      out += std::to_string(static_cast<int64_t>(value));
    } else {
      out += std::to_string(value);
    }
    out += '\n';
  };
  metric("vllm:num_requests_running", "gauge", "Number of requests currently running on GPU.",
         static_cast<double>(model_.running()));
  metric("vllm:num_requests_waiting", "gauge", "Number of requests waiting to be processed.",
         static_cast<double>(model_.waiting()));
  metric("vllm:gpu_cache_usage_perc", "gauge", "GPU KV-cache usage. 1 means 100 percent usage.",
         model_.cache_usage());
  metric("vllm:prefix_cache_queries_total", "counter",
         "Prefix cache queries, in terms of number of queried tokens.",
         static_cast<double>(model_.prefix_query_tokens()));
  metric("vllm:prefix_cache_hits_total", "counter",
         "Prefix cache hits, in terms of number of cached tokens.",
         static_cast<double>(model_.prefix_hit_tokens()));
  // The simulator's own prefill/decode counters (vLLM has no metric for these).
  metric("rolter_sim:remote_decode_prefills_total", "counter",
         "Step-1 (do_remote_decode) requests answered with kv_transfer_params.",
         static_cast<double>(remote_decode_prefills_));
  metric("rolter_sim:remote_prefills_total", "counter",
         "Step-2 (do_remote_prefill) requests whose KV blocks were pulled.",
         static_cast<double>(remote_prefills_));
  metric("rolter_sim:remote_prefill_failures_total", "counter",
         "Step-2 requests refused 503: unusable kv_transfer_params.",
         static_cast<double>(remote_prefill_failures_));
  metric("rolter_sim:kv_blocks_pulled_total", "counter", "KV blocks pulled from prefill engines.",
         static_cast<double>(model_.kv_blocks_pulled()));
  metric("rolter_sim:prefill_computed_tokens_total", "counter",
         "Prompt tokens prefilled here (not cached, not pulled).",
         static_cast<double>(model_.prefill_computed_tokens()));
  return out;
}

std::string Engine::models_json() const {
  Json data = Json::array();
  for (const auto& m : options_.models) {
    data.push_back({{"id", m},
                    {"object", "model"},
                    {"created", 0},
                    {"owned_by", "rolter-sim"},
                    {"root", m},
                    {"max_model_len", max_model_len()}});
  }
  return Json{{"object", "list"}, {"data", data}}.dump();
}

}  // namespace rolter::sim
