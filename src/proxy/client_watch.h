// ClientWatch: notices, while a request is in flight, that its client went away, and cancels the
// upstream exchange at once, so the engine frees its batch slot and KV cache (SPEC §8).
//
// It is the client stream's input watch (net/timed_stream.h): a look at the socket once it turns
// readable (no read, no coroutine of its own): an error (a reset) means the client is gone; an end
// of stream means the client only shut down its sending side after a complete request (a
// half-close), and still gets its answer; bytes mean a pipelined request, left in the socket for
// the next read. Once bytes or a half-close are seen, the watch stops: like a reverse proxy's, it
// cannot see past them. A client that leaves while the upstream connection is still being made is
// noticed once it is made (connect_timeout_ms at most): only an exchange in flight is cancelled.
//
// One ClientWatch serves a connection for its life. arm() and disarm() bracket each request; the
// look stays queued after disarm(), and the connection's next read takes it over, so watching
// costs no system call of its own.
//
// Thread-safety: use on the connection's worker thread only.
#pragma once

#include <boost/asio/steady_timer.hpp>

#include "net/asio_fwd.h"
#include "net/reactor_read.h"

#include <memory>

namespace rolter {

class PreemptTarget;
class UpstreamConnection;

class ClientWatch {
 public:
  explicit ClientWatch(TimedStream& client);
  // The stream's watch reports to no one after this. REQUIRES: the stream outlives the watch.
  ~ClientWatch();
  ClientWatch(const ClientWatch&) = delete;
  ClientWatch& operator=(const ClientWatch&) = delete;

  // Starts watching for the request that begins now. REQUIRES: not armed.
  void arm();
  // Stops watching (the request is done). The look stays queued for the next read.
  void disarm();

  // The upstream connection the request is using now, cancelled if the client goes; null between
  // attempts.
  void set_in_flight(UpstreamConnection* connection);
  // The timer a request waits on in its route's queue (proxy/queue_gate.h), cancelled if the
  // client goes, so that it leaves the queue at once; null when not waiting.
  void set_waiting(asio::steady_timer* timer);

  bool gone() const { return state_->gone; }
  bool half_closed() const { return state_->half_closed; }

  // Preemption (flow/preemption.h): the request may be displaced until its answer begins; null
  // when it may not (the default). The target must outlive the request's attempts.
  void set_displaceable(PreemptTarget* target);
  // The request's answer begins: true unless it was displaced first (then it must not answer).
  bool begin_answer() const;
  // Whether the request was displaced (its attempt is to end without answering).
  bool displaced() const;
  // Whether it may still be displaced, or was (a target is set).
  bool displaceable() const { return state_->target != nullptr; }

 private:
  struct State;

 public:
  // Ends the request's upstream exchange in flight, from any thread: posted to the connection's
  // worker, and a no-op once that request is over. For a displaced request.
  class Stopper {
   public:
    void operator()() const;

   private:
    friend class ClientWatch;
    Stopper(std::shared_ptr<State> state, unsigned generation, asio::any_io_executor executor)
        : state_(std::move(state)), generation_(generation), executor_(std::move(executor)) {}
    std::shared_ptr<State> state_;
    unsigned generation_;
    asio::any_io_executor executor_;
  };
  Stopper stopper() const;

 private:
  struct State final : reactor_read::InputSink {
    void on_input(Input input, const error_code& ec) override;
    TimedStream* client = nullptr;
    UpstreamConnection* in_flight = nullptr;
    asio::steady_timer* waiting = nullptr;
    PreemptTarget* target = nullptr;
    unsigned generation = 0;  // which request's wait is current; older waits are ignored
    bool armed = false;
    bool gone = false;
    bool half_closed = false;
  };
  std::shared_ptr<State> state_;
};

}  // namespace rolter
