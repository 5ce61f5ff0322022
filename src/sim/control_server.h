// ControlServer: the simulator's small JSON control API, on its own port, for tests and demos.
//
//   GET    /health                {"status":"ok"}
//   GET    /engines               [stats of engine 0, 1, ...] (the /sim/stats objects)
//   GET    /engines/{i}           stats of engine i
//   POST   /engines/{i}/reset     zero engine i's counters
//   POST   /reset                 zero every engine's counters
//   GET    /faults                [faults of engine 0, 1, ...]
//   GET    /faults/{i}            faults of engine i
//   POST   /faults/{i}            replace engine i's faults with the JSON body (absent fields take
//                                 their defaults): {"refuse":bool,"error_rate":0..1,
//                                 "error_status":500,"status_429_retry_after_s":N|null,
//                                 "stall_first_byte_ms":N,"drop_mid_stream_after_tokens":N|null,
//                                 "drop_with_reset":bool,"tokenize_stall_ms":N,
//                                 "decision_stall_ms":N,"decision_status":0|N,
//                                 "decision_garbage":bool,"max_model_len":N (0 = off),
//                                 "kv_...": see faults.h}
//   DELETE /faults/{i}            clear engine i's faults (max_model_len from --max-model-len
//                                 included: it is one of the faults)
// Changes take effect before the response is sent: once POST /faults/{i} with refuse answers,
// connects to engine i are refused.
//
// Thread-safety: runs on its own strand; reaches engines only through EngineServer's awaitable
// methods. Construct and start() before the io_context runs; the engines must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/engine_server.h"

namespace boost::asio {
class io_context;
}

namespace rolter::sim {

class ControlServer {
 public:
  // Binds host:port (0 = ephemeral). Throws std::system_error on failure (start-up only).
  ControlServer(boost::asio::io_context& ioc, const std::string& host, uint16_t port,
                std::vector<EngineServer*> engines);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  uint16_t port() const;
  void start();

 private:
  struct State;
  std::shared_ptr<State> state_;
};

}  // namespace rolter::sim
