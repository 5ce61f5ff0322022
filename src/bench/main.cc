// rolter-bench: benchmarks for rolter. `replay` measures routing quality: it replays a request
// trace once per strategy, in-process against simulated engines or over HTTP through a real
// gateway and rolter-sim fleet, and reports cache hit ratio, latency, throughput and imbalance.
// `overhead` measures what the gateway itself adds (bench/overhead/).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

#include "balance/strategy_names.h"
#include "balance/strategy_registry.h"
#include "bench/cache_bounds.h"
#include "bench/http_replay.h"
#include "bench/in_process.h"
#include "bench/overhead/cli.h"
#include "bench/overhead/run.h"
#include "bench/pd_split.h"
#include "bench/report.h"
#include "bench/spawn.h"
#include "bench/synthetic.h"
#include "bench/tenants.h"
#include "bench/trace.h"
#include "common/join.h"

namespace rb = rolter::bench;

namespace {

// The default set for a replay: the registry's strategies that need nothing a replay cannot give
// them (no LMCache occupancy, no deployment policy, no policy service); the KV-event ones read
// the simulated engines' KV events.
std::vector<std::string> default_strategies() {
  std::vector<std::string> names;
  for (const rolter::StrategyInfo& info : rolter::strategy_registry()) {
    if (info.replayed_by_default) names.emplace_back(info.name);
  }
  return names;
}

struct ReplayArgs {
  std::string trace_path;
  bool synthetic = false;
  rb::SyntheticOptions synth;
  size_t limit = 0;
  double speedup = 1.0;
  std::string strategies;
  uint64_t seed = 1;
  bool in_process = false;
  rb::InProcessOptions inproc;
  // Prefill/decode disaggregation: "P:D[,P:D...]" and what it parses to.
  std::string pd;
  std::vector<rb::PdSplit> pd_splits;
  // --prefill-chunk-tokens as given; unset: 0, or kPdPrefillChunkTokens with --pd.
  std::optional<size_t> prefill_chunk_tokens;
  // HTTP mode.
  std::string gateway;  // one URL, or several separated by commas (--gateways)
  std::string engines_url;
  std::string sim_control;
  bool spawn = false;
  size_t nodes = 1;
  bool shared_state = false;
  bool engine_metrics_load = false;
  std::string bin_dir;
  std::string model_prefix = "bench-";
  std::vector<std::string> sim_args;
  double request_timeout_s = 600;
  size_t max_connections = 1024;
  // Tenants and flow control (HTTP mode with --spawn).
  size_t tenants = 0;
  std::string flow_control = "off";
  size_t max_in_flight_per_instance = 8;
  rb::FlowControlSettings queue;
  // Output.
  std::string json_path, markdown_path, svg_path;
  bool quiet = false;
};

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string self_dir() {
  char buf[4096];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  auto slash = p.rfind('/');
  return slash == std::string::npos ? "." : p.substr(0, slash);
}

// The sim's own model parameters, passed on when the bench spawns it, so both modes model the
// same fleet unless the user overrides them with --sim-arg.
std::vector<std::string> sim_model_args(const ReplayArgs& a) {
  const auto& m = a.inproc.model;
  auto num = [](double v) {
    std::ostringstream o;
    o << v;
    return o.str();
  };
  std::vector<std::string> args = {
      "--kv-blocks",
      std::to_string(a.inproc.kv_tokens_per_engine / a.inproc.block_size),
      "--block-size",
      std::to_string(a.inproc.block_size),
      "--max-batch",
      std::to_string(m.max_batch),
      "--prefill-ms-base",
      num(m.prefill_ms_base),
      "--prefill-ms-per-token",
      num(m.prefill_ms_per_token),
      "--decode-ms-base",
      num(m.decode_ms_base),
      "--decode-ms-per-seq",
      num(m.decode_ms_per_seq),
      "--time-scale",
      num(m.time_scale)};
  // Only when used, so a sim without them is not warned about on every run.
  if (m.prefill_chunk_tokens > 0) {
    args.insert(args.end(), {"--prefill-chunk-tokens", std::to_string(m.prefill_chunk_tokens)});
  }
  if (!a.pd_splits.empty()) {
    args.insert(args.end(), {"--kv-transfer-ms-per-block", num(m.kv_transfer_ms_per_block)});
  }
  return args;
}

// With --pd and no --prefill-chunk-tokens: vLLM's chunked prefill at a common chunk size, for the
// aggregated baseline as well, so both see the same engines.
constexpr size_t kPdPrefillChunkTokens = 512;

// The report's fleet line: engines, KV capacity, batch, speedup and, in HTTP mode, the gateways.
std::string describe_fleet(const ReplayArgs& a) {
  std::ostringstream out;
  out << a.inproc.engines << " engines x " << a.inproc.kv_tokens_per_engine << " KV tokens ("
      << a.inproc.kv_tokens_per_engine / a.inproc.block_size << " blocks of " << a.inproc.block_size
      << "), max batch " << a.inproc.model.max_batch << ", speedup " << a.speedup;
  if (a.inproc.model.prefill_chunk_tokens > 0) {
    out << ", prefill chunk " << a.inproc.model.prefill_chunk_tokens << " tokens";
  }
  if (!a.pd_splits.empty()) {
    out << "; pd runs: min_uncached_tokens " << a.inproc.min_uncached_tokens << ", KV transfer "
        << a.inproc.model.kv_transfer_ms_per_block << " ms/block";
  }
  if (!a.in_process) {
    const size_t gateways = a.spawn ? a.nodes : split_list(a.gateway).size();
    if (gateways > 1) out << "; " << gateways << " gateway nodes, dealt round-robin";
    if (a.spawn && (a.engine_metrics_load || a.nodes > 1)) out << "; engine_metrics load";
    if (a.spawn && a.shared_state) out << "; [shared_state] through redis-server";
    if (a.tenants > 0) out << "; " << a.tenants << " tenants";
  }
  return out.str();
}

// Flow control's settings for the spawned gateways, or nullopt when it is off.
std::optional<rb::FlowControlSettings> flow_control_settings(const ReplayArgs& a) {
  if (a.flow_control != "on") return std::nullopt;
  rb::FlowControlSettings f = a.queue;
  f.max_in_flight_per_instance = a.max_in_flight_per_instance;
  return f;
}

// The report's flow-control line: "on (...)" or "off"; empty when neither it nor tenants is used.
std::string describe_flow_control(const ReplayArgs& a) {
  const auto f = flow_control_settings(a);
  if (!f) return a.tenants > 0 ? "off" : "";
  return "on (max_in_flight_per_instance " + std::to_string(f->max_in_flight_per_instance) +
         ", queue max_requests " + std::to_string(f->queue_max_requests) + ", max_wait_ms " +
         std::to_string(f->queue_max_wait_ms) + ")";
}

// One progress line per tenant after a strategy's run.
void print_tenant_lines(const rb::StrategyResult& r) {
  for (const rb::TenantResult& t : r.tenants) {
    std::fprintf(stderr,
                 "  %s (band %u): sent %llu, served %llu, shed %llu (%.1f%%), errors %llu, "
                 "TTFT p50 %.1f ms p99 %.1f ms\n",
                 t.tenant.c_str(), t.priority, static_cast<unsigned long long>(t.sent),
                 static_cast<unsigned long long>(t.served), static_cast<unsigned long long>(t.shed),
                 t.shed_rate * 100, static_cast<unsigned long long>(t.errors), t.ttft_p50_ms,
                 t.ttft_p99_ms);
  }
}

int run_replay(const ReplayArgs& a, const std::string& command) {
  const auto wall_start = std::chrono::steady_clock::now();
  rb::ReplayReport report;
  report.machine = rb::machine_description();
  report.commit = rb::current_commit();
  report.command = command;
  report.mode = a.in_process ? "in-process" : "http";

  std::vector<rb::TraceRequest> trace;
  if (a.synthetic) {
    rb::SyntheticOptions s = a.synth;
    trace = rb::generate_synthetic(s);
    if (a.limit > 0 && trace.size() > a.limit) trace.resize(a.limit);
    report.trace = "synthetic(" + std::to_string(s.sessions) + " sessions x " +
                   std::to_string(s.turns) + " turns, seed " + std::to_string(s.seed) + ")";
  } else {
    auto loaded = rb::read_trace_file(a.trace_path, a.limit);
    if (!loaded) {
      std::fprintf(stderr, "rolter-bench: %s\n", loaded.error().c_str());
      return 2;
    }
    trace = std::move(*loaded);
    report.trace = a.trace_path.substr(a.trace_path.rfind('/') + 1);
  }
  report.requests = trace.size();
  report.flow_control = describe_flow_control(a);
  const std::vector<rb::Tenant> tenants =
      a.tenants ? rb::make_tenants(a.tenants, a.seed) : std::vector<rb::Tenant>{};
  const std::vector<uint32_t> tenant_of =
      tenants.empty() ? std::vector<uint32_t>{}
                      : rb::assign_tenants(trace.size(), rb::tenant_shares(tenants), a.seed);

  std::vector<std::string> strategies = split_list(a.strategies);
  if (strategies.empty()) strategies = default_strategies();
  for (const auto& s : strategies) {
    // Policy mode is a mode of its own in rolter.toml, not a strategy name; replays build it with
    // its built-in plugins.
    const bool policy = s == rolter::strategy::kPolicy;
    if (!rolter::is_known_strategy(s) && !policy) {
      std::fprintf(stderr, "rolter-bench: unknown strategy \"%s\"\n", s.c_str());
      return 2;
    }
    if (!a.in_process && (policy || s == rolter::strategy::kLmcacheAware)) {
      std::fprintf(stderr,
                   "rolter-bench: %s replays in-process only (--in-process): the simulated "
                   "engines serve no LMCache endpoint and the spawned config has no policy route\n",
                   s.c_str());
      return 2;
    }
  }

  report.fleet = describe_fleet(a);
  report.ideal = rb::ideal_hit_ratio(trace);
  report.pooled_capacity_blocks =
      a.inproc.engines * a.inproc.kv_tokens_per_engine / rb::kTraceBlockTokens;
  report.pooled = rb::pooled_lru_hit_ratio(trace, report.pooled_capacity_blocks);
  std::fprintf(stderr, "trace: %zu requests; ideal hit ratio %.4f; pooled-cache bound %.4f\n",
               trace.size(), report.ideal.ratio(), report.pooled.ratio());

  std::optional<rb::Spawner> spawner;
  // Every strategy aggregated (the baseline), then once per --pd split.
  struct Run {
    std::string strategy;
    std::optional<rb::PdSplit> pd;
  };
  std::vector<Run> runs;
  for (const std::string& strategy : strategies) {
    runs.push_back({strategy, std::nullopt});
    for (const rb::PdSplit& split : a.pd_splits) runs.push_back({strategy, split});
  }
  for (const Run& run : runs) {
    const std::string& strategy = run.strategy;
    const std::string label = run.pd ? rb::pd_label(*run.pd, strategy) : strategy;
    tl::expected<rb::RunSamples, std::string> samples;
    if (a.in_process) {
      rb::InProcessOptions o = a.inproc;
      o.speedup = a.speedup;
      o.seed = a.seed;
      o.progress = !a.quiet;
      o.pd = run.pd;
      samples = rb::replay_in_process(trace, strategy, o);
    } else {
      rb::HttpTarget target;
      target.model = a.model_prefix + (run.pd ? "pd-" : "") + strategy;
      if (a.spawn) {
        // A fresh fleet per run: every run starts from cold caches and zero counters.
        spawner.reset();
        spawner.emplace(a.bin_dir.empty() ? self_dir() : a.bin_dir);
        std::vector<std::string> sim_args = sim_model_args(a);
        sim_args.insert(sim_args.end(), a.sim_args.begin(), a.sim_args.end());
        sim_args.push_back("--seed");
        sim_args.push_back(std::to_string(a.seed));
        auto fleet = spawner->start({.engines = a.inproc.engines,
                                     .sim_args = sim_args,
                                     .strategies = strategies,
                                     .model_prefix = a.model_prefix,
                                     .block_size = a.inproc.block_size,
                                     .nodes = a.nodes,
                                     .engine_metrics_load = a.engine_metrics_load || a.nodes > 1,
                                     .shared_state = a.shared_state,
                                     .tenants = tenants,
                                     .flow_control = flow_control_settings(a),
                                     .pd = run.pd,
                                     .min_uncached_tokens = a.inproc.min_uncached_tokens});
        if (!fleet) {
          std::fprintf(stderr, "rolter-bench: %s\n", fleet.error().c_str());
          return 1;
        }
        target.gateway_urls = fleet->gateway_urls;
        target.sim_control_url = fleet->control_url;
        target.engine_urls = fleet->engine_urls;
      } else {
        target.gateway_urls = split_list(a.gateway);
        target.sim_control_url = a.sim_control;
        target.engine_urls = split_list(a.engines_url);
        if (!a.sim_control.empty()) {
          // Cold caches and zero counters for every run.
          auto reset = rb::http_post_empty(a.sim_control + "/reset");
          if (!reset)
            std::fprintf(stderr, "rolter-bench: reset failed: %s\n", reset.error().c_str());
        }
      }
      rb::HttpOptions o;
      o.speedup = a.speedup;
      o.request_timeout_s = a.request_timeout_s;
      o.max_connections = a.max_connections;
      o.progress = !a.quiet;
      o.tenant_of = tenant_of;
      for (const rb::Tenant& t : tenants) o.tenant_keys.push_back(t.secret);
      samples = rb::replay_http(trace, target, o, label);
    }
    if (!samples) {
      std::fprintf(stderr, "rolter-bench: %s: %s\n", label.c_str(), samples.error().c_str());
      return 1;
    }
    report.results.push_back(rb::summarize(label, *samples, report.pooled.ratio()));
    auto& r = report.results.back();
    r.tenants = rb::summarize_tenants(tenants, samples->tenants);
    std::fprintf(stderr,
                 "[%s] done: hit ratio %.4f, TTFT p50 %.1f ms p99 %.1f ms, ITL p50 %.2f ms p99 "
                 "%.2f ms, errors %llu, %.1f s\n",
                 label.c_str(), r.hit_ratio, r.ttft_p50_ms, r.ttft_p99_ms, r.itl_p50_ms,
                 r.itl_p99_ms, static_cast<unsigned long long>(r.errors), r.wall_s);
    if (run.pd && a.in_process) {
      std::fprintf(stderr, "  split through a prefill engine: %llu of %llu requests\n",
                   static_cast<unsigned long long>(r.split_requests),
                   static_cast<unsigned long long>(r.requests));
    }
    print_tenant_lines(r);
  }
  spawner.reset();
  report.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  const std::string md = rb::render_markdown(report);
  std::cout << md << std::flush;
  bool ok = true;
  constexpr const char* kProgram = "rolter-bench";
  if (!a.markdown_path.empty()) ok &= rb::write_report_file(a.markdown_path, md, kProgram);
  if (!a.json_path.empty()) {
    ok &= rb::write_report_file(a.json_path, rb::render_json(report), kProgram);
  }
  if (!a.svg_path.empty())
    ok &= rb::write_report_file(a.svg_path, rb::render_svg(report), kProgram);
  return ok ? 0 : 1;
}

// replay's options for the simulated fleet (in-process mode, and --spawn's engines).
void add_fleet_options(CLI::App& replay, ReplayArgs& a) {
  auto* fleet = replay.add_option_group("fleet", "The simulated fleet");
  fleet->add_option("--engines", a.inproc.engines, "Number of engines")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  fleet
      ->add_option("--kv-tokens-per-engine", a.inproc.kv_tokens_per_engine,
                   "KV cache capacity of each engine, in tokens")
      ->capture_default_str();
  fleet->add_option("--block-size", a.inproc.block_size, "Engine KV block size, tokens")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  fleet->add_option("--max-batch", a.inproc.model.max_batch, "Concurrent sequences per engine")
      ->capture_default_str();
  fleet
      ->add_option("--prefill-ms-base", a.inproc.model.prefill_ms_base,
                   "Fixed cost of a prefill, ms (in-process)")
      ->capture_default_str();
  fleet
      ->add_option("--prefill-ms-per-token", a.inproc.model.prefill_ms_per_token,
                   "Prefill cost per uncached prompt token, ms (in-process)")
      ->capture_default_str();
  fleet
      ->add_option("--decode-ms-base", a.inproc.model.decode_ms_base,
                   "Decode interval with an empty batch, ms (in-process)")
      ->capture_default_str();
  fleet
      ->add_option("--decode-ms-per-seq", a.inproc.model.decode_ms_per_seq,
                   "Decode interval added per running sequence, ms (in-process)")
      ->capture_default_str();
  fleet
      ->add_option("--time-scale", a.inproc.model.time_scale,
                   "Multiplies every engine delay (0 = instant)")
      ->capture_default_str();
}

// replay's options for prefill/decode disaggregation (SPEC §18).
void add_pd_options(CLI::App& replay, ReplayArgs& a) {
  auto* g = replay.add_option_group("disaggregation", "Prefill/decode disaggregation");
  g->add_option(
      "--pd", a.pd,
      "P:D, e.g. 2:6: besides each strategy's usual (aggregated) run, a disaggregated run with P "
      "prefill and D decode engines (P + D = --engines); several splits separated by commas "
      "(2:6,3:5) give one run each. A request whose uncached prompt on the best decode engine "
      "reaches --min-uncached-tokens is prefilled on a prefill engine picked by the strategy "
      "(max_tokens 1), then decoded on the least loaded decode engine, which pulls the KV it "
      "lacks; "
      "shorter ones go straight to a decode engine. Reported as \"pd P:D (strategy/least load)\". "
      "In-process: the decode engine holding the longest prefix takes unsplit requests; HTTP with "
      "--spawn: rolter-sim gets --prefill-engines P --decode-engines D and the gateway a route "
      "<model-prefix>pd-<strategy> with mode = \"disaggregated\"");
  g->add_option("--prefill-chunk-tokens", a.prefill_chunk_tokens,
                "Chunked prefill: while an engine computes a prefill, each decode step also "
                "carries up to N of its tokens, so decoding slows by N x --prefill-ms-per-token "
                "per step (the interference disaggregation removes). 0 = off. Default: 0, or 512 "
                "with --pd, for the aggregated runs too so both compare on the same engines");
  g->add_option("--kv-transfer-ms-per-block", a.inproc.model.kv_transfer_ms_per_block,
                "With --pd: ms to pull one KV block from the prefill engine to the decode engine")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  g->add_option("--min-uncached-tokens", a.inproc.min_uncached_tokens,
                "With --pd: a request is split when its uncached prompt tokens on the best "
                "decode engine reach this (the route's min_uncached_tokens)")
      ->capture_default_str();
}

// replay's options for the --synthetic generator.
void add_synthetic_options(CLI::App& replay, ReplayArgs& a) {
  auto* syn = replay.add_option_group("synthetic", "The --synthetic generator");
  syn->add_option("--sessions", a.synth.sessions, "Conversations")->capture_default_str();
  syn->add_option("--turns", a.synth.turns, "Requests per conversation")->capture_default_str();
  syn->add_option("--system-prompts", a.synth.system_prompts, "Distinct shared system prompts")
      ->capture_default_str();
  syn->add_option("--system-prompt-blocks", a.synth.system_prompt_blocks,
                  "512-token blocks per system prompt")
      ->capture_default_str();
  syn->add_option("--user-blocks", a.synth.user_blocks, "512-token blocks per user message")
      ->capture_default_str();
  syn->add_option("--output-tokens", a.synth.output_tokens, "Answer length, tokens")
      ->capture_default_str();
  syn->add_option("--session-rate", a.synth.session_rate, "New sessions per second (Poisson)")
      ->capture_default_str();
  syn->add_option("--think-time-ms", a.synth.think_time_ms, "Mean pause between turns, ms")
      ->capture_default_str();
}

// replay's options for HTTP mode, the default: a running gateway, or a spawned one.
void add_http_options(CLI::App& replay, ReplayArgs& a) {
  auto* http = replay.add_option_group("http", "HTTP mode (the default)");
  http->add_option("--gateway,--gateways", a.gateway,
                   "URL of a running rolter, e.g. http://127.0.0.1:4000; several separated by "
                   "commas are dealt requests round-robin in trace order, as a non-sticky L4 "
                   "balancer would");
  http->add_option("--engines-url", a.engines_url, "Comma-separated engine URLs (for /metrics)");
  http->add_option("--sim-control", a.sim_control,
                   "rolter-sim control URL: reset before each strategy, in-flight sampling");
  http->add_flag("--spawn", a.spawn,
                 "Start rolter-sim and rolter serve on ephemeral ports, a fresh pair per strategy");
  http->add_option("--nodes", a.nodes,
                   "With --spawn: gateway nodes (rolter serve, one config) over the one sim fleet, "
                   "dealt requests round-robin; more than 1 implies --engine-metrics-load")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  http->add_flag("--shared-state", a.shared_state,
                 "With --spawn: start a redis-server and give the nodes [shared_state], so their "
                 "prefix trees share what they learn");
  http->add_flag("--engine-metrics-load", a.engine_metrics_load,
                 "With --spawn: providers read load from the engines' /metrics "
                 "(load_source = \"engine_metrics\"), so every node sees one load");
  http->add_option("--bin-dir", a.bin_dir,
                   "Where rolter and rolter-sim are (default: rolter-bench's own directory)");
  http->add_option("--model-prefix", a.model_prefix,
                   "Route name = prefix + strategy (the gateway's routes)")
      ->capture_default_str();
  http->add_option("--sim-arg", a.sim_args, "Extra argument for a spawned rolter-sim (repeatable)")
      ->allow_extra_args(false);
  http->add_option("--request-timeout-s", a.request_timeout_s, "Per-request timeout")
      ->capture_default_str();
  http->add_option("--max-connections", a.max_connections, "Concurrent connections to each gateway")
      ->capture_default_str();
}

// replay's options for tenants and flow control (HTTP mode with --spawn).
void add_tenant_options(CLI::App& replay, ReplayArgs& a) {
  auto* g = replay.add_option_group("tenants", "Tenants and flow control (with --spawn)");
  g->add_option("--tenants", a.tenants,
                "Split the requests among N tenants, each a [[keys]] entry of the spawned "
                "gateway whose key its requests carry. Each request's tenant is drawn from "
                "Zipf-like shares, tenant i getting 1/(i+1) (3 tenants: 54.5%, 27.3%, 18.2%), "
                "with --seed. Tenant 0 (the heaviest) is batch traffic, priority band 1; the "
                "others are interactive, band 6. The report gives each tenant's requests sent, "
                "served, shed (429) and failed, its shed rate and TTFT p50/p99. 0: no tenants")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
  g->add_option("--flow-control", a.flow_control,
                "on: every provider of the spawned gateway gets max_in_flight_per_instance "
                "and the config a [queue] table (SPEC section 19); off: no bounds, the engines "
                "queue everything")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  g->add_option("--max-in-flight-per-instance", a.max_in_flight_per_instance,
                "With --flow-control on: the providers' max_in_flight_per_instance, the load "
                "at which an engine counts as full")
      ->check(CLI::Range(size_t{1}, size_t{1'000'000}))
      ->capture_default_str();
  g->add_option("--queue-max-requests", a.queue.queue_max_requests,
                "With --flow-control on: [queue] max_requests")
      ->capture_default_str();
  g->add_option("--queue-max-wait-ms", a.queue.queue_max_wait_ms,
                "With --flow-control on: [queue] max_wait_ms")
      ->check(CLI::Range(size_t{1}, size_t{86'400'000}))
      ->capture_default_str();
}

// `rolter-bench replay`: its options into `a`.
CLI::App* add_replay_command(CLI::App& app, ReplayArgs& a) {
  auto* replay = app.add_subcommand(
      "replay",
      "Replay a request trace once per strategy and report prefix-cache hit ratio, TTFT, "
      "end-to-end latency, throughput and load imbalance, next to the trace's ideal hit ratio "
      "and the pooled-cache bound. Default mode is HTTP (through rolter in front of rolter-sim; "
      "see --spawn); --in-process drives the balancer library against simulated engines in "
      "virtual time.");
  auto* input = replay->add_option_group("input", "Where requests come from (one of)");
  input->add_option("--trace", a.trace_path, "Mooncake JSONL trace file")->check(CLI::ExistingFile);
  input->add_flag("--synthetic", a.synthetic, "Generate a multi-turn workload instead");
  input->require_option(1);
  replay->add_option("--limit", a.limit, "Replay only the first N requests (0 = all)");
  replay->add_option("--speedup", a.speedup, "Divide arrival times by X (compress time)")
      ->check(CLI::PositiveNumber);
  const std::string known = rolter::join(rolter::known_strategies());
  replay->add_option("--strategies", a.strategies,
                     "Comma-separated strategies, one replay each (default: every strategy that "
                     "needs no LMCache, telemetry or policy service; the KV-event ones read the "
                     "simulated engines' KV events). Known: " +
                         known +
                         ". --in-process also replays lmcache_aware (each engine's occupancy, "
                         "read once a second), adaptive (its policy on) and policy (least "
                         "in-flight and session affinity)");
  replay->add_option("--seed", a.seed,
                     "Seed for the balancer's randomness, the synthetic "
                     "generator and the sim");

  add_fleet_options(*replay, a);
  replay
      ->add_option("--kv-event-delay-ms", a.inproc.kv_event_delay_ms,
                   "Virtual ms from a KV change on an engine to the gateway's index (in-process)")
      ->capture_default_str();
  replay
      ->add_option("--sample-ms", a.inproc.sample_ms,
                   "Virtual ms between load-imbalance samples (in-process)")
      ->capture_default_str();

  add_pd_options(*replay, a);
  add_synthetic_options(*replay, a);
  replay->add_flag("--in-process", a.in_process,
                   "Drive the balancer library against simulated engines in virtual time "
                   "(no HTTP, single thread, reproducible for a seed)");
  add_http_options(*replay, a);
  add_tenant_options(*replay, a);
  replay->add_option("--json", a.json_path, "Write the report as JSON");
  replay->add_option("--markdown", a.markdown_path, "Write the Markdown table (also on stdout)");
  replay->add_option("--svg", a.svg_path,
                     "Write an SVG chart: hit ratio, TTFT p99 and ITL p99 per run");
  replay->add_flag("--quiet", a.quiet, "No progress on stderr");

  return replay;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rolter-bench: benchmarks for the rolter gateway"};
  app.require_subcommand(1);
  const std::string command = rb::command_line(argc, argv);

  ReplayArgs a;
  auto* replay = add_replay_command(app, a);

  rb::overhead::OverheadOptions overhead_options;
  auto* overhead = rb::overhead::add_overhead_command(app, overhead_options);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // overhead: every bad argument is exit code 1, like every other failure.
    const bool in_overhead =
        overhead->parsed() || (argc > 1 && std::string_view(argv[1]) == "overhead");
    return code != 0 && in_overhead ? 1 : code;
  }
  if (overhead->parsed()) return rb::overhead::run_overhead(overhead_options, command, self_dir());
  if (a.synthetic) a.synth.seed = a.seed;
  if (replay->parsed()) {
    auto splits = rb::parse_pd_list(a.pd, a.inproc.engines);
    if (!splits) {
      std::fprintf(stderr, "rolter-bench: %s\n", splits.error().c_str());
      return 2;
    }
    a.pd_splits = std::move(*splits);
    a.inproc.model.prefill_chunk_tokens =
        a.prefill_chunk_tokens.value_or(a.pd_splits.empty() ? 0 : kPdPrefillChunkTokens);
    if (!a.pd_splits.empty() && (a.tenants > 0 || a.nodes > 1 || a.shared_state)) {
      std::fprintf(stderr,
                   "rolter-bench: --pd does not combine with --tenants, --nodes or "
                   "--shared-state yet\n");
      return 2;
    }
    if (!a.in_process && !a.spawn && a.gateway.empty()) {
      std::fprintf(stderr,
                   "rolter-bench: HTTP mode needs --gateway URL or --spawn "
                   "(or use --in-process)\n");
      return 2;
    }
    if (a.shared_state && !a.spawn) {
      std::fprintf(stderr,
                   "rolter-bench: --shared-state starts a redis-server and needs --spawn; running "
                   "gateways share through their own [shared_state]\n");
      return 2;
    }
    if (a.nodes > 1 && !a.spawn) {
      std::fprintf(stderr,
                   "rolter-bench: --nodes starts gateways and needs --spawn; for running ones "
                   "pass --gateways URL,URL,...\n");
      return 2;
    }
    if ((a.tenants > 0 || a.flow_control == "on") && (a.in_process || !a.spawn)) {
      std::fprintf(stderr,
                   "rolter-bench: --tenants and --flow-control on configure the gateway and need "
                   "--spawn (HTTP mode)\n");
      return 2;
    }
    return run_replay(a, command);
  }
  return 0;
}
