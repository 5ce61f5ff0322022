#include "bench/overhead/latency_client.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <optional>

#include "bench/overhead/exchange.h"

namespace rolter::bench::overhead {
namespace {

using Clock = std::chrono::steady_clock;

// Connection attempts in a row that may fail before the phase gives up on the target.
constexpr int kMaxConnectFailures = 3;

std::string describe(const ExchangeResult& r, bool stream) {
  if (r.error) return r.error.message();
  if (r.status != 200) return "HTTP " + std::to_string(r.status);
  if (stream && !r.saw_data) return "a streaming answer without a data: event";
  return "ok";
}

Task<> run(const Target& t, const LatencyOptions& o, LatencySamples& out) {
  auto ex = co_await asio::this_coro::executor;
  const std::string request = t.raw_request(o.stream);
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout_s));
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;
  const int total = o.warmup + o.requests;
  int connect_failures = 0;  // in a row
  for (int i = 0; i < total; ++i) {
    const bool measured = i >= o.warmup;
    auto fail = [&](const std::string& why) {
      if (!measured) return;
      if (out.first_error.empty()) out.first_error = why;
      ++out.errors;
    };
    if (!stream) {
      stream.emplace(ex);
      buffer.clear();
      if (auto ec = co_await connect(*stream, t.host, t.port, timeout)) {
        const std::string why =
            "connect " + t.host + ":" + std::to_string(t.port) + ": " + ec.message();
        fail(why);
        stream.reset();
        // Nothing listens: no point trying thousands of times.
        if (++connect_failures >= kMaxConnectFailures) {
          if (out.first_error.empty()) out.first_error = why;
          co_return;
        }
        continue;
      }
      connect_failures = 0;
    }
    const auto start = Clock::now();
    ExchangeResult r = co_await exchange(*stream, buffer, request, timeout);
    if (!r.ok() || (o.stream && !r.saw_data)) {
      fail(describe(r, o.stream));
    } else if (measured) {
      const auto end = o.stream ? r.first_data : r.done;
      out.us.push_back(std::chrono::duration<double, std::micro>(end - start).count());
    }
    if (r.error || !r.keep_alive) stream.reset();
  }
}

}  // namespace

tl::expected<LatencySamples, std::string> measure_latency(const Target& target,
                                                          const LatencyOptions& options) {
  asio::io_context io;
  LatencySamples out;
  out.us.reserve(static_cast<size_t>(options.requests));
  asio::co_spawn(io, run(target, options, out), asio::detached);
  io.run();
  if (out.us.empty()) {
    return tl::unexpected(target.name + " (" + target.url() + "): no request succeeded" +
                          (out.first_error.empty() ? "" : ": " + out.first_error));
  }
  return out;
}

}  // namespace rolter::bench::overhead
