// EngineServer: one simulated engine's HTTP/1.1 keep-alive server on its own port.
//
// Routes POST /v1/{chat/completions,completions,embeddings,responses,messages} and Gemini's
// /v1beta/models/{model}:{generateContent,streamGenerateContent,embedContent,batchEmbedContents}
// (gemini_request.h) to the Engine,
// paces answers by its engine model (model time = wall-clock ms since the server was built; a
// timer fires at the model's next event), cancels the model request when the client leaves, streams
// SSE one chunk per event, applies the engine's faults (including closing the listening socket for
// `refuse`), and notices a client that goes away mid-answer (a failed write, or EOF/reset on a read
// kept pending while generating) so the request stops at once and is counted as cancelled. Also
// serves GET /v1/models, /health, /metrics, /occupancy (LMCache-like {"occupancy": resident/total
// blocks, "cache_available": true}), /sim/stats and POST /sim/reset.
//
// A request sent with `Expect: 100-continue` gets an interim `100 Continue` once its header is
// read, as vLLM's server (uvicorn) sends it, so curl does not stall a second before the body.
//
// Every response carries `x-sim-engine: <index>`.
//
// Prefill/decode (engine.h): a step 1 answer gets its top-level kv_transfer_params once the model
// finishes; the engine then holds the blocks until a decode engine's claim (the registry posts
// the release onto this engine's strand) or until --kv-hold-ms of wall-clock time passes.
//
// Thread-safety: the engine, its acceptor and its connections live on one strand, so engines run
// in parallel when the io_context has several threads while each engine stays deterministic.
// Engines meet only through the KvTransferRegistry (kv_transfer_registry.h), whose mutex
// makes a claim atomic across strands and threads.
// The constructor and start() must be called before the io_context runs. The awaitable methods
// may be awaited from any executor: they hop onto the engine's strand and back.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <nlohmann/json_fwd.hpp>
#include <tl/expected.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "sim/engine.h"
#include "sim/faults.h"

namespace boost::asio {
class io_context;
}

namespace rolter::sim {

class EngineServer {
 public:
  // Binds host:port (port 0 = an ephemeral port). Throws std::system_error when the address
  // cannot be bound: this only happens at start-up.
  EngineServer(boost::asio::io_context& ioc, EngineOptions options, const std::string& host,
               uint16_t port);
  ~EngineServer();
  EngineServer(const EngineServer&) = delete;
  EngineServer& operator=(const EngineServer&) = delete;

  size_t index() const;
  // The bound port; stays the same across refuse on/off.
  uint16_t port() const;

  // Starts the engine model's clock and accepting, unless the start-up faults say refuse.
  void start();

  // Publishes the engine's KV events through `publisher` (not owned; must outlive the server).
  // Call before the io_context runs.
  void attach_kv_publisher(KvEventPublisher* publisher);

  // The engine's /sim/stats object.
  boost::asio::awaitable<nlohmann::json> stats();
  // Zeroes the counters; returns the stats after the reset.
  boost::asio::awaitable<nlohmann::json> reset_stats();
  boost::asio::awaitable<Faults> faults();
  // Replaces the engine's faults. Turning refuse on closes the listening socket and idle
  // keep-alive connections; turning it off listens again on the same port (the error says why
  // when that port was taken meanwhile).
  boost::asio::awaitable<tl::expected<Faults, std::string>> set_faults(Faults faults);

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace rolter::sim
