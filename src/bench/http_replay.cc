#include "bench/http_replay.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <charconv>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "bench/block_text.h"
#include "bench/progress.h"
#include "net/asio_fwd.h"

namespace rolter::bench {
namespace {

namespace http = beast::http;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;

// Arrivals start this long after setup, so the first requests are not late by construction.
constexpr auto kStartDelay = std::chrono::milliseconds(200);
// Body reads go through this buffer; SSE chunks are small, so it only bounds a syscall's size.
constexpr size_t kReadBuffer = 16 * 1024;

struct Endpoint {
  std::string host;
  std::string port;
  std::string path;  // the URL's path, "" when none
};

tl::expected<Endpoint, std::string> parse_url(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) return tl::unexpected("only http:// URLs: " + url);
  std::string rest = url.substr(kScheme.size());
  Endpoint e;
  if (auto slash = rest.find('/'); slash != std::string::npos) {
    e.path = rest.substr(slash);
    rest.resize(slash);
  }
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) {
    e.host = rest;
    e.port = "80";
  } else {
    e.host = rest.substr(0, colon);
    e.port = rest.substr(colon + 1);
  }
  if (e.host.empty()) return tl::unexpected("no host in " + url);
  return e;
}

// One GET or POST with a whole-body answer, on a fresh connection; for control and metrics.
Task<tl::expected<std::string, std::string>> simple_request(Endpoint ep, http::verb verb,
                                                            std::string path) {
  auto ex = co_await asio::this_coro::executor;
  tcp::resolver resolver(ex);
  auto [rerr, results] = co_await resolver.async_resolve(ep.host, ep.port, kNoThrow);
  if (rerr) co_return tl::unexpected("resolve " + ep.host + ": " + rerr.message());
  beast::tcp_stream stream(ex);
  stream.expires_after(std::chrono::seconds(10));
  auto [cerr, connected] = co_await stream.async_connect(results, kNoThrow);
  if (cerr) co_return tl::unexpected("connect " + ep.host + ":" + ep.port + ": " + cerr.message());
  http::request<http::string_body> req{verb, path, 11};
  req.set(http::field::host, ep.host);
  req.prepare_payload();
  auto [werr, wn] = co_await http::async_write(stream, req, kNoThrow);
  if (werr) co_return tl::unexpected("write: " + werr.message());
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  auto [herr, hn] = co_await http::async_read(stream, buffer, res, kNoThrow);
  if (herr) co_return tl::unexpected("read: " + herr.message());
  if (res.result_int() >= 400) {
    co_return tl::unexpected("HTTP " + std::to_string(res.result_int()) + " for " + path);
  }
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  co_return std::move(res.body());
}

// Sums every sample of a Prometheus counter in a text exposition (one line per label set).
std::optional<double> metric_sum(const std::string& text, std::string_view name) {
  std::optional<double> sum;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(name, 0) != 0) continue;
    const char next = line.size() > name.size() ? line[name.size()] : '\0';
    if (next != ' ' && next != '{') continue;  // another metric with this name as a prefix
    auto space = line.rfind(' ');
    if (space == std::string::npos) continue;
    sum = sum.value_or(0) + std::strtod(line.c_str() + space + 1, nullptr);
  }
  return sum;
}

// Whether an SSE data line carries a non-empty delta content (one token, from rolter-sim). The
// compact form rolter-sim and the gateway write is checked without parsing; anything else that
// mentions content is parsed.
bool carries_content(std::string_view line) {
  constexpr std::string_view kCompact = "\"content\":\"";
  if (auto at = line.find(kCompact); at != line.npos) {
    return at + kCompact.size() < line.size() && line[at + kCompact.size()] != '"';
  }
  if (line.find("\"content\"") == line.npos) return false;
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("choices") || !j["choices"].is_array() ||
      j["choices"].empty()) {
    return false;
  }
  const auto& c = j["choices"][0];
  return c.contains("delta") && c["delta"].contains("content") &&
         c["delta"]["content"].is_string() &&
         !c["delta"]["content"].get_ref<const std::string&>().empty();
}

// rolter-sim's x-sim-engine header: the index of the engine that answered; nullopt when absent.
std::optional<size_t> engine_of(std::string_view header) {
  size_t value = 0;
  const auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), value);
  if (header.empty() || ec != std::errc() || end != header.data() + header.size())
    return std::nullopt;
  return value;
}

class HttpReplay {
 public:
  HttpReplay(std::span<const TraceRequest> trace, const HttpTarget& target, const HttpOptions& o,
             const std::string& label)
      : trace_(trace),
        target_(target),
        options_(o),
        progress_(label, trace.size(), o.progress, std::chrono::seconds(3)) {}

  tl::expected<RunSamples, std::string> run() {
    if (target_.gateway_urls.empty()) return tl::unexpected(std::string("no gateway URL"));
    for (const std::string& url : target_.gateway_urls) {
      auto gw = parse_url(url);
      if (!gw) return tl::unexpected(gw.error());
      gateways_.push_back(Gateway{.endpoint = *gw});
    }
    // Which engine served each request, from rolter-sim's x-sim-engine header (rolter relays it),
    // for the 60 s window imbalance.
    samples_.assigned = WindowedImbalance(target_.engine_urls.size());
    if (!options_.tenant_of.empty()) {
      if (options_.tenant_of.size() != trace_.size())
        return tl::unexpected(std::string("one tenant per request is needed"));
      for (uint32_t t : options_.tenant_of) {
        if (t >= options_.tenant_keys.size())
          return tl::unexpected("tenant " + std::to_string(t) + " has no key");
      }
      samples_.tenants.resize(options_.tenant_keys.size());
    }
    const auto served_before = scrape_gateway_requests();
    auto before = scrape_prefix_counters();
    // Step-2 requests the decode engines served: the requests the gateway split (rolter-sim's
    // counter; 0 against engines that do not export it).
    const auto split_before = scrape_engine_sum("rolter_sim:remote_prefills_total");

    const auto wall_start = SteadyClock::now();
    start_ = wall_start + kStartDelay;
    const int64_t t0 = trace_.empty() ? 0 : trace_.front().timestamp_ms;
    for (size_t i = 0; i < trace_.size(); ++i) {
      const double offset_ms = static_cast<double>(trace_[i].timestamp_ms - t0) / options_.speedup;
      asio::co_spawn(io_, one_request(i, offset_ms), asio::detached);
    }
    if (!target_.sim_control_url.empty()) asio::co_spawn(io_, sample_loads(), asio::detached);
    io_.run();
    io_.restart();
    progress_.finish(done_);

    samples_.requests = trace_.size();
    samples_.wall_s = std::chrono::duration<double>(SteadyClock::now() - wall_start).count();
    samples_.duration_s = std::chrono::duration<double>(last_completion_ - start_).count();
    // What each node says it served (its rolter_requests_total), not what this side meant to send.
    const auto served_after = scrape_gateway_requests();
    for (size_t g = 0; g < gateways_.size(); ++g) {
      const bool known = served_before[g] && served_after[g];
      samples_.served_per_gateway.push_back(
          known ? static_cast<uint64_t>(*served_after[g] - *served_before[g]) : 0);
    }
    const auto split_after = scrape_engine_sum("rolter_sim:remote_prefills_total");
    if (split_before && split_after && *split_after > *split_before) {
      samples_.split_requests = static_cast<uint64_t>(*split_after - *split_before);
    }
    auto after = scrape_prefix_counters();
    if (before && after) {
      samples_.hit_tokens = static_cast<uint64_t>(after->first - before->first);
      samples_.query_tokens = static_cast<uint64_t>(after->second - before->second);
    } else {
      // The engines do not export prefix-cache counters: fall back on what they reported in
      // usage.prompt_tokens_details.cached_tokens.
      samples_.hit_tokens = usage_cached_;
      samples_.query_tokens = usage_prompt_;
    }
    return std::move(samples_);
  }

 private:
  // Every engine's /metrics text, or nullopt when there are no engine URLs or one cannot be read.
  std::optional<std::vector<std::string>> scrape_engines() {
    if (target_.engine_urls.empty()) return std::nullopt;
    std::optional<std::vector<std::string>> texts(std::in_place);
    asio::co_spawn(
        io_,
        [&]() -> Task<> {
          for (const auto& url : target_.engine_urls) {
            auto ep = parse_url(url);
            if (!ep) {
              texts.reset();
              co_return;
            }
            const std::string path = "/metrics";
            auto text = co_await simple_request(*ep, http::verb::get, path);
            if (!text) {
              texts.reset();
              co_return;
            }
            texts->push_back(std::move(*text));
          }
        },
        asio::detached);
    io_.run();
    io_.restart();
    return texts;
  }

  // (hits, queries) summed over the engines' /metrics, or nullopt when any is missing.
  std::optional<std::pair<double, double>> scrape_prefix_counters() {
    const auto texts = scrape_engines();
    if (!texts) return std::nullopt;
    std::pair<double, double> total(0.0, 0.0);
    for (const auto& text : *texts) {
      auto hits = metric_sum(text, "vllm:prefix_cache_hits_total");
      auto queries = metric_sum(text, "vllm:prefix_cache_queries_total");
      if (!hits || !queries) return std::nullopt;
      total.first += *hits;
      total.second += *queries;
    }
    return total;
  }

  // `metric` summed over the engines' /metrics (0 where an engine lacks it), or nullopt when an
  // engine cannot be read.
  std::optional<double> scrape_engine_sum(std::string_view metric) {
    const auto texts = scrape_engines();
    if (!texts) return std::nullopt;
    double total = 0;
    for (const auto& text : *texts) total += metric_sum(text, metric).value_or(0);
    return total;
  }

  // Each gateway's rolter_requests_total, summed over its label sets; nullopt where unreadable.
  std::vector<std::optional<double>> scrape_gateway_requests() {
    std::vector<std::optional<double>> totals(gateways_.size());
    asio::co_spawn(
        io_,
        [&]() -> Task<> {
          for (size_t g = 0; g < gateways_.size(); ++g) {
            auto text = co_await simple_request(gateways_[g].endpoint, http::verb::get, "/metrics");
            if (text) totals[g] = metric_sum(*text, "rolter_requests_total").value_or(0);
          }
        },
        asio::detached);
    io_.run();
    io_.restart();
    return totals;
  }

  Task<> sample_loads() {
    auto ex = co_await asio::this_coro::executor;
    auto ep = parse_url(target_.sim_control_url);
    if (!ep) co_return;
    asio::steady_timer timer(ex);
    const auto interval = std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double, std::milli>(options_.sample_ms));
    while (done_ < trace_.size()) {
      timer.expires_after(interval);
      [[maybe_unused]] auto [terr] = co_await timer.async_wait(kNoThrow);
      const std::string path = "/engines";
      auto stats = co_await simple_request(*ep, http::verb::get, path);
      if (!stats) continue;
      auto j = nlohmann::json::parse(*stats, nullptr, false);
      const nlohmann::json* arr = &j;
      if (j.is_object() && j.contains("engines")) arr = &j["engines"];
      if (!arr->is_array() || arr->empty()) continue;
      double max = 0, sum = 0;
      for (const auto& e : *arr) {
        const double v = e.value("in_flight", 0.0);
        max = std::max(max, v);
        sum += v;
      }
      samples_.add_imbalance_sample(max, sum / static_cast<double>(arr->size()));
    }
  }

  // One node's connection pool.
  struct Gateway {
    Endpoint endpoint;
    std::vector<std::unique_ptr<beast::tcp_stream>> idle;
    size_t open = 0;
  };

  // An idle keep-alive connection to `g`, or nullptr when the caller is to connect a new one
  // (counted in g.open from now on). `fresh`: never an idle one.
  Task<std::unique_ptr<beast::tcp_stream>> acquire(Gateway& g, bool fresh = false) {
    auto ex = co_await asio::this_coro::executor;
    asio::steady_timer wait(ex);
    while ((fresh || g.idle.empty()) && g.open >= options_.max_connections) {
      // Rare (only beyond --max-connections): a short poll keeps the pool simple.
      wait.expires_after(std::chrono::milliseconds(2));
      [[maybe_unused]] auto [werr] = co_await wait.async_wait(kNoThrow);
    }
    if (!fresh && !g.idle.empty()) {
      auto s = std::move(g.idle.back());
      g.idle.pop_back();
      co_return s;
    }
    ++g.open;
    co_return nullptr;  // the caller connects a new one
  }

  static void release(Gateway& g, std::unique_ptr<beast::tcp_stream> s, bool reusable) {
    if (s && reusable) {
      g.idle.push_back(std::move(s));
    } else {
      --g.open;
    }
  }

  Task<> one_request(size_t i, double offset_ms) {
    auto ex = co_await asio::this_coro::executor;
    asio::steady_timer timer(ex);
    const auto due = start_ + std::chrono::duration_cast<SteadyClock::duration>(
                                  std::chrono::duration<double, std::milli>(offset_ms));
    timer.expires_at(due);
    [[maybe_unused]] auto [terr] = co_await timer.async_wait(kNoThrow);

    const TraceRequest& tr = trace_[i];
    // Dealt in trace order, as a non-sticky L4 balancer spreads clients.
    Gateway& gateway = gateways_[i % gateways_.size()];
    std::string text;
    expand_prompt(tr, &text, nullptr);
    nlohmann::json body = {
        {"model", target_.model},
        {"messages", nlohmann::json::array({{{"role", "user"}, {"content", std::move(text)}}})},
        {"max_tokens", tr.output_length},
        {"stream", true},
        {"stream_options", {{"include_usage", true}}}};
    http::request<http::string_body> req{http::verb::post, "/v1/chat/completions", 11};
    req.set(http::field::host, gateway.endpoint.host);
    req.set(http::field::content_type, "application/json");
    if (!tr.session.empty()) req.set("x-session-id", tr.session);
    if (!options_.tenant_of.empty()) {
      req.set(http::field::authorization, "Bearer " + options_.tenant_keys[options_.tenant_of[i]]);
    }
    req.body() = body.dump();
    req.prepare_payload();
    req.keep_alive(true);

    const auto sent = SteadyClock::now();
    Outcome outcome;
    // A reused keep-alive connection may have been closed by the server meanwhile (the gateway
    // closes connections idle for server.idle_timeout_ms): one retry, on a fresh connection, when
    // nothing was received. Another idle one could be just as stale: after a lull the pool's
    // older connections all are.
    for (int attempt = 0; attempt < 2; ++attempt) {
      auto stream = co_await acquire(gateway, /*fresh=*/attempt > 0);
      const bool reused = stream != nullptr;
      if (!stream) {
        stream = std::make_unique<beast::tcp_stream>(ex);
        tcp::resolver resolver(ex);
        auto [rerr, results] =
            co_await resolver.async_resolve(gateway.endpoint.host, gateway.endpoint.port, kNoThrow);
        if (rerr) {
          release(gateway, nullptr, false);
          outcome = {};
          outcome.error = "resolve: " + rerr.message();
          break;
        }
        stream->expires_after(std::chrono::seconds(10));
        auto [cerr, ep] = co_await stream->async_connect(results, kNoThrow);
        if (cerr) {
          release(gateway, nullptr, false);
          outcome = {};
          outcome.error = "connect: " + cerr.message();
          break;
        }
      }
      outcome = co_await exchange(*stream, req, sent);
      release(gateway, std::move(stream), outcome.reusable);
      if (!(reused && outcome.nothing_received)) break;
    }
    if (outcome.ok && outcome.engine) samples_.assigned.add(offset_ms, *outcome.engine);
    finish_request(i, outcome, sent);
  }

  struct Outcome {
    bool ok = false;
    bool reusable = false;
    bool nothing_received = false;
    int status = 0;  // the answer's HTTP status, 0 when none was read
    std::optional<double> ttft_ms;
    std::vector<double> token_ms;  // when each content chunk (one token) arrived, since sent
    std::optional<size_t> engine;  // the rolter-sim engine that answered (x-sim-engine)
    uint64_t prompt_tokens = 0;
    uint64_t cached_tokens = 0;
    uint64_t completion_tokens = 0;
    std::string error;
  };

  Task<Outcome> exchange(beast::tcp_stream& stream, http::request<http::string_body>& req,
                         SteadyClock::time_point sent) {
    Outcome out;
    stream.expires_after(std::chrono::duration_cast<SteadyClock::duration>(
        std::chrono::duration<double>(options_.request_timeout_s)));
    auto [werr, wn] = co_await http::async_write(stream, req, kNoThrow);
    if (werr) {
      out.nothing_received = true;
      out.error = "write: " + werr.message();
      co_return out;
    }
    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    auto [herr, hn] = co_await http::async_read_header(stream, buffer, parser, kNoThrow);
    if (herr) {
      out.nothing_received = hn == 0;
      out.error = "read header: " + herr.message();
      co_return out;
    }
    const int status = out.status = parser.get().result_int();
    out.engine = engine_of(parser.get()["x-sim-engine"]);
    std::string pending;  // SSE bytes not yet split into lines
    bool done_marker = false, usage_seen = false;
    std::vector<char> chunk(kReadBuffer);
    while (!parser.is_done()) {
      parser.get().body().data = chunk.data();
      parser.get().body().size = chunk.size();
      // read_some: back as soon as a chunk is in, so each token is timed when it arrives (read
      // would wait for the buffer to fill or the stream to end).
      auto [rerr, rn] = co_await http::async_read_some(stream, buffer, parser, kNoThrow);
      if (rerr == http::error::need_buffer) rerr = {};
      if (rerr) {
        out.error = "read body: " + rerr.message();
        co_return out;
      }
      const auto read_at = SteadyClock::now();
      pending.append(chunk.data(), chunk.size() - parser.get().body().size);
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        std::string_view line(pending.data() + start, nl - start);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.rfind("data:", 0) != 0) continue;
        line.remove_prefix(5);
        while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (line == "[DONE]") {
          done_marker = true;
          continue;
        }
        if (carries_content(line)) {
          // Every chunk in one read gets the read's time: ITL sees them 0 ms apart.
          const double at_ms = std::chrono::duration<double, std::milli>(read_at - sent).count();
          if (!out.ttft_ms) out.ttft_ms = at_ms;
          out.token_ms.push_back(at_ms);
        }
        const bool maybe_usage = line.find("\"usage\"") != line.npos;
        if (!maybe_usage) continue;
        auto j = nlohmann::json::parse(line, nullptr, false);
        if (j.is_discarded()) continue;
        if (j.contains("usage") && j["usage"].is_object()) {
          const auto& u = j["usage"];
          usage_seen = true;
          out.prompt_tokens = u.value("prompt_tokens", 0ULL);
          out.completion_tokens = u.value("completion_tokens", 0ULL);
          if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
            out.cached_tokens = u["prompt_tokens_details"].value("cached_tokens", 0ULL);
          }
        }
      }
      pending.erase(0, start);
    }
    out.reusable = parser.get().keep_alive();
    if (status != 200) {
      out.error = "HTTP " + std::to_string(status);
    } else if (!usage_seen && !done_marker) {
      out.error = "stream ended without usage or [DONE]";
    } else {
      out.ok = true;
    }
    co_return out;
  }

  void finish_request(size_t i, const Outcome& o, SteadyClock::time_point sent) {
    const TraceRequest& tr = trace_[i];
    const auto now = SteadyClock::now();
    last_completion_ = std::max(last_completion_, now);
    ++done_;
    progress_.update(done_);
    const double e2e_ms = std::chrono::duration<double, std::milli>(now - sent).count();
    // A zero-token answer has no content chunk; its first byte of answer is its end.
    const double ttft_ms = o.ttft_ms.value_or(e2e_ms);
    if (!samples_.tenants.empty()) {
      samples_.tenants[options_.tenant_of[i]].add(o.ok, o.status, ttft_ms);
    }
    if (!o.ok) {
      ++samples_.errors;
      // A 429 is flow control shedding, expected under overload and counted per tenant.
      const bool shed = o.status == 429 && !samples_.tenants.empty();
      if (!shed && ++failures_printed_ <= 5) {
        std::fprintf(stderr, "request failed: %s\n", o.error.c_str());
      }
      return;
    }
    samples_.e2e_ms.push_back(e2e_ms);
    samples_.ttft_ms.push_back(ttft_ms);
    add_token_intervals(o.token_ms, samples_.itl_ms);
    samples_.output_tokens += o.completion_tokens ? o.completion_tokens : tr.output_length;
    usage_prompt_ += o.prompt_tokens;
    usage_cached_ += o.cached_tokens;
  }

  std::span<const TraceRequest> trace_;
  const HttpTarget& target_;
  const HttpOptions& options_;
  Progress progress_;
  asio::io_context io_;
  std::vector<Gateway> gateways_;
  SteadyClock::time_point start_;
  SteadyClock::time_point last_completion_{};
  uint64_t done_ = 0;
  uint64_t failures_printed_ = 0;
  uint64_t usage_prompt_ = 0;
  uint64_t usage_cached_ = 0;
  RunSamples samples_;
};

}  // namespace

tl::expected<RunSamples, std::string> replay_http(std::span<const TraceRequest> trace,
                                                  const HttpTarget& target,
                                                  const HttpOptions& options,
                                                  const std::string& label) {
  HttpReplay replay(trace, target, options, label);
  return replay.run();
}

tl::expected<std::string, std::string> http_post_empty(const std::string& url) {
  auto ep = parse_url(url);
  if (!ep) return tl::unexpected(ep.error());
  asio::io_context io;
  tl::expected<std::string, std::string> result = tl::unexpected(std::string("not run"));
  const std::string path = ep->path.empty() ? "/" : ep->path;
  asio::co_spawn(
      io,
      [&]() -> Task<> {
        auto r = co_await simple_request(*ep, http::verb::post, path);
        result = std::move(r);
      },
      asio::detached);
  io.run();
  return result;
}

}  // namespace rolter::bench
