// rolter-sim: starts a fleet of simulated vLLM-like engines in one process (SPEC section 12).
//
// Prints one JSON line on stdout once every port is bound, so a test harness can read the ports:
//   {"engines":[{"index":0,"port":P0,"url":"http://127.0.0.1:P0"},...],"control_port":C}
// With --kv-port, each engine entry also carries "kv_port" (its ZeroMQ PUB socket) and, with
// --kv-replay, "kv_replay_port" (its ROUTER replay socket). Engine i publishes on KV_PORT+i and
// replays on KV_PORT+N+i (N engines); --kv-port 0 makes both ephemeral.
// Each entry also carries "role" ("prefill", "decode" or "both": --prefill-engines and
// --decode-engines) and "engine_id" (the remote_engine_id of its kv_transfer_params).
// Everything else goes to stderr. SIGINT/SIGTERM exit 0.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include <csignal>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sim/control_server.h"
#include "sim/engine_server.h"

namespace {

using rolter::sim::ControlServer;
using rolter::sim::EngineOptions;
using rolter::sim::EngineServer;

struct Options {
  size_t engines = 1;
  uint16_t port = 8100;
  std::string host = "127.0.0.1";
  uint64_t seed = 0;
  std::optional<uint16_t> control_port;
  double time_scale = 1.0;
  double ttft_ms = 20;
  double token_ms = 5;
  rolter::sim::EngineModelParams model;
  std::optional<uint16_t> kv_port;
  std::string kv_format = "array";
  bool kv_replay = false;
  size_t max_tokens_default = 16;
  size_t max_tokens_cap = 4096;
  size_t embedding_dims = 16;
  int64_t max_model_len = 0;
  std::vector<std::string> models = {"sim-model"};
  std::vector<std::string> faults;
  unsigned threads = 1;
  std::string log_level = "info";
  bool exit_on_stdin_close = false;
  size_t prefill_engines = 0;
  size_t decode_engines = 0;
  double kv_hold_ms = 30000;
};

std::string url_host(const std::string& host) {
  // IPv6 literals need brackets in a URL.
  return host.find(':') != std::string::npos ? "[" + host + "]" : host;
}

rolter::sim::EngineRole role_of(const Options& opt, size_t i) {
  if (i < opt.prefill_engines) return rolter::sim::EngineRole::kPrefill;
  if (i < opt.prefill_engines + opt.decode_engines) return rolter::sim::EngineRole::kDecode;
  return rolter::sim::EngineRole::kBoth;
}

int run(const Options& opt) {
  if (opt.prefill_engines + opt.decode_engines > opt.engines) {
    std::cerr << "rolter-sim: --prefill-engines " << opt.prefill_engines << " + --decode-engines "
              << opt.decode_engines << " is more than --engines " << opt.engines << "\n";
    return 2;
  }
  // One registry per process: KV transfers happen between the engines of this process only.
  auto kv_registry = std::make_shared<rolter::sim::KvTransferRegistry>();
  std::vector<EngineOptions> engine_options(opt.engines);
  for (size_t i = 0; i < opt.engines; ++i) {
    EngineOptions& e = engine_options[i];
    e.index = i;
    e.seed = opt.seed;
    e.models = opt.models;
    e.max_tokens_default = opt.max_tokens_default;
    e.max_tokens_cap = opt.max_tokens_cap;
    e.embedding_dims = opt.embedding_dims;
    e.faults.max_model_len = opt.max_model_len;  // --fault max_model_len=N may override it
    e.latency = {.ttft_ms = opt.ttft_ms, .token_ms = opt.token_ms, .time_scale = opt.time_scale};
    // --ttft-ms and --token-ms are the constant parts of prefill and decode.
    e.model = opt.model;
    e.model.prefill_ms_base = opt.ttft_ms;
    e.model.decode_ms_base = opt.token_ms;
    e.model.time_scale = opt.time_scale;
    e.role = role_of(opt, i);
    e.engine_id = "sim-" + std::to_string(::getpid()) + "-" + std::to_string(i);
    e.kv_registry = kv_registry;
    e.kv_hold_ms = opt.kv_hold_ms;
  }
  // Flags apply in order, so "--fault error_rate=0.1 --fault engine=2,error_rate=1" works.
  for (const std::string& flag : opt.faults) {
    auto parsed = rolter::sim::parse_fault_flag(flag);
    if (!parsed) {
      std::cerr << "rolter-sim: " << parsed.error() << "\n";
      return 2;
    }
    if (parsed->engine && *parsed->engine >= opt.engines) {
      std::cerr << "rolter-sim: --fault '" << flag << "' names engine " << *parsed->engine
                << " but there are only " << opt.engines << "\n";
      return 2;
    }
    for (auto& e : engine_options) {
      if (parsed->engine && *parsed->engine != e.index) continue;
      (void)rolter::sim::apply_fault_settings(parsed->settings, e.faults);  // checked above
    }
  }

  boost::asio::io_context ioc(static_cast<int>(opt.threads));
  std::vector<std::unique_ptr<EngineServer>> engines;
  std::unique_ptr<ControlServer> control;
  try {
    for (size_t i = 0; i < opt.engines; ++i) {
      const uint16_t port = opt.port == 0 ? 0 : static_cast<uint16_t>(opt.port + i);
      engines.push_back(std::make_unique<EngineServer>(ioc, engine_options[i], opt.host, port));
    }
    if (opt.control_port) {
      std::vector<EngineServer*> raw;
      for (auto& e : engines) raw.push_back(e.get());
      control = std::make_unique<ControlServer>(ioc, opt.host, *opt.control_port, std::move(raw));
    }
  } catch (const std::exception& e) {
    std::cerr << "rolter-sim: cannot listen: " << e.what() << "\n";
    return 1;
  }

  zmq::context_t zmq_context;
  std::vector<std::unique_ptr<rolter::sim::KvEventPublisher>> publishers;
  if (opt.kv_port) {
    for (size_t i = 0; i < opt.engines; ++i) {
      rolter::sim::KvPublisherOptions kv;
      kv.host = opt.host;
      kv.port = *opt.kv_port == 0 ? 0 : static_cast<uint16_t>(*opt.kv_port + i);
      kv.replay = opt.kv_replay;
      kv.replay_port =
          *opt.kv_port == 0 ? 0 : static_cast<uint16_t>(*opt.kv_port + opt.engines + i);
      kv.format =
          opt.kv_format == "map" ? rolter::sim::KvFormat::kMap : rolter::sim::KvFormat::kArray;
      auto publisher = rolter::sim::KvEventPublisher::create(zmq_context, kv);
      if (!publisher) {
        std::cerr << "rolter-sim: " << publisher.error() << "\n";
        return 1;
      }
      engines[i]->attach_kv_publisher(publisher->get());
      publishers.push_back(std::move(*publisher));
    }
  }

  nlohmann::ordered_json ready = {{"engines", nlohmann::ordered_json::array()}};
  for (size_t i = 0; i < engines.size(); ++i) {
    auto& e = engines[i];
    e->start();
    nlohmann::ordered_json entry = {
        {"index", e->index()},
        {"port", e->port()},
        {"url", "http://" + url_host(opt.host) + ":" + std::to_string(e->port())},
        {"role", rolter::sim::role_name(engine_options[i].role)},
        {"engine_id", engine_options[i].engine_id}};
    if (!publishers.empty()) {
      entry["kv_port"] = publishers[i]->port();
      if (opt.kv_replay) entry["kv_replay_port"] = publishers[i]->replay_port();
    }
    ready["engines"].push_back(std::move(entry));
  }
  if (control) {
    control->start();
    ready["control_port"] = control->port();
  }
  // Signals are handled before the ready line goes out: a harness may stop the fleet the moment it
  // reads that line, and must see a clean exit.
  boost::asio::signal_set signals(ioc, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    spdlog::info("rolter-sim: signal {}, exiting", signal);
    ioc.stop();
  });
  std::cout << ready.dump() << std::endl;  // endl: the harness waits for this line

  spdlog::info("rolter-sim: {} engine(s) on {} from port {}, seed {}, time scale {}", opt.engines,
               opt.host, engines.front()->port(), opt.seed, opt.time_scale);

  if (opt.exit_on_stdin_close) {
    // A harness that dies without stopping us (a killed test runner) closes our stdin; leaving
    // then avoids orphaned fleets holding ports.
    std::thread([] {
      char byte;
      while (::read(STDIN_FILENO, &byte, 1) > 0) {
      }
      ::kill(::getpid(), SIGTERM);
    }).detach();
  }

  std::vector<std::thread> workers;
  for (unsigned i = 1; i < opt.threads; ++i) workers.emplace_back([&ioc] { ioc.run(); });
  ioc.run();
  for (auto& w : workers) w.join();
  // The servers hold pointers to the publishers: stop them first.
  engines.clear();
  control.reset();
  publishers.clear();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  Options opt;
  CLI::App app{
      "rolter-sim: a deterministic fleet of simulated vLLM-like, OpenAI-compatible engines.\n"
      "Engine i listens on HOST:(PORT+i) (--port 0: ephemeral ports). Once all ports are bound,\n"
      "one JSON line with the engines' ports and URLs is printed on stdout; logs go to stderr.",
      "rolter-sim"};
  app.option_defaults()->always_capture_default();
  app.add_option("--engines,-n", opt.engines, "Number of engines")->check(CLI::Range(1, 4096));
  app.add_option("--port,-p", opt.port, "Port of engine 0; engine i uses PORT+i; 0 = ephemeral");
  app.add_option("--host", opt.host, "Address to listen on");
  app.add_option("--seed", opt.seed, "Seed for generated text and fault decisions");
  app.add_option("--control-port", opt.control_port,
                 "Port of the control API (faults, stats); 0 = ephemeral; off when not given");
  app.add_option("--time-scale", opt.time_scale,
                 "Multiplies every modelled delay; 0 = answer without delay")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--ttft-ms", opt.ttft_ms, "Time to first token, milliseconds")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--token-ms", opt.token_ms, "Interval between output tokens, milliseconds")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--kv-blocks", opt.model.kv_blocks, "KV cache blocks per engine")
      ->check(CLI::Range(size_t{1}, size_t{1} << 32));
  app.add_option("--block-size", opt.model.block_size, "Tokens per KV block")
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-batch", opt.model.max_batch, "Concurrent running sequences per engine")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--prefill-ms-per-token", opt.model.prefill_ms_per_token,
                 "Prefill cost per uncached prompt token, milliseconds (added to --ttft-ms)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--decode-ms-per-seq", opt.model.decode_ms_per_seq,
                 "Added to the per-token interval (--token-ms) per running sequence, ms")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--max-loras", opt.model.max_loras, "LoRA adapters resident per engine (LRU)");
  app.add_option("--lora-load-ms", opt.model.lora_load_ms,
                 "Cost of loading an adapter that is not resident, milliseconds. A request "
                 "whose model is not a served --model name addresses the adapter of that name")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--kv-port", opt.kv_port,
                 "Publish KV events over ZeroMQ: engine i on KV_PORT+i (replay on "
                 "KV_PORT+N+i); 0 = ephemeral; off when not given");
  app.add_option("--kv-format", opt.kv_format, "KV event encoding: array or map")
      ->check(CLI::IsMember({"array", "map"}));
  app.add_flag("--kv-replay", opt.kv_replay, "Serve a ZeroMQ ROUTER replay socket per engine");
  app.add_option("--max-tokens-default", opt.max_tokens_default,
                 "Output tokens when a request sets no max_tokens");
  app.add_option("--max-tokens-cap", opt.max_tokens_cap, "Upper bound on output tokens");
  app.add_option("--embedding-dims", opt.embedding_dims, "Length of embedding vectors")
      ->check(CLI::Range(1, 65536));
  app.add_option("--max-model-len", opt.max_model_len,
                 "Context length of every engine: a prompt of more tokens (usage words) is "
                 "answered 400 with the real context-length error of its API (vLLM, Anthropic, "
                 "Gemini); 0 = unlimited. Per engine: --fault \"engine=1,max_model_len=N\"")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--model", opt.models,
                 "Served model name(s) listed by /v1/models; requests may name any model and "
                 "get it echoed back")
      ->take_all();
  app.add_option("--fault", opt.faults,
                 "Fault injection, repeatable: \"engine=1,refuse\", \"engine=0,error_rate=0.5,"
                 "error_status=503\", \"429=2\", \"stall=300\", \"drop=4\", "
                 "\"tokenize_stall=10000\", \"decision_stall=4000\", \"decision_status=500\", "
                 "\"decision_garbage\", \"slowdown=5\" (latencies x5), \"max_model_len=50\" "
                 "(no engine= means all)")
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--prefill-engines", opt.prefill_engines,
                 "Prefill/decode disaggregation (vLLM KV connectors): engines 0..N-1 are "
                 "prefill engines (KV producers). They serve step 1 of the handshake, a request "
                 "with kv_transfer_params.do_remote_decode: prefill, answer after one token with "
                 "kv_transfer_params naming the held blocks. Every role also serves plain "
                 "requests");
  app.add_option("--decode-engines", opt.decode_engines,
                 "The next N engines are decode engines (KV consumers): they serve step 2, a "
                 "request with kv_transfer_params.do_remote_prefill, by pulling the named blocks "
                 "from a prefill engine of this process instead of prefilling (503 when the "
                 "parameters name no held blocks), and refuse step 1 with 400. Engines beyond "
                 "prefill + decode serve both steps");
  app.add_option("--kv-transfer-ms-per-block", opt.model.kv_transfer_ms_per_block,
                 "Cost of pulling one KV block that is not resident on the decode engine, "
                 "milliseconds (x --time-scale); it replaces the prefill and does not slow the "
                 "engine's decodes")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--kv-hold-ms", opt.kv_hold_ms,
                 "How long a prefill engine holds a step 1's blocks for a pull, wall-clock "
                 "milliseconds (not scaled); a pull or the end of this time releases them")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--prefill-chunk-tokens", opt.model.prefill_chunk_tokens,
                 "Chunked prefill: while an engine prefills, each decode step of its running "
                 "sequences also carries up to N prefill tokens, so the token interval grows by "
                 "min(N, prefill tokens left) x --prefill-ms-per-token. Engines that only pull "
                 "KV never carry chunks. 0 = decode steps carry no prefill");
  app.add_option("--threads", opt.threads, "I/O threads (each engine stays on one strand)")
      ->check(CLI::Range(1, 256));
  app.add_flag("--exit-on-stdin-close", opt.exit_on_stdin_close,
               "Exit 0 when stdin reaches EOF (ties the fleet's life to a harness's pipe)");
  app.add_option("--log-level", opt.log_level, "trace, debug, info, warn, error or off");
  CLI11_PARSE(app, argc, argv);

  auto logger = spdlog::stderr_color_mt("rolter-sim");
  logger->set_level(spdlog::level::from_str(opt.log_level));
  spdlog::set_default_logger(logger);
  return run(opt);
}
