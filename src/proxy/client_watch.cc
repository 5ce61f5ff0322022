#include "proxy/client_watch.h"

#include <sys/socket.h>

#include <cerrno>

#include <boost/asio/post.hpp>

#include "flow/preemption.h"
#include "upstream/upstream_connection.h"

namespace rolter {

ClientWatch::ClientWatch(TimedStream& client) : state_(std::make_shared<State>()) {
  state_->client = &client;
}

void ClientWatch::arm() {
  state_->armed = true;
  state_->gone = false;
  state_->half_closed = false;
  state_->in_flight = nullptr;
  state_->waiting = nullptr;
  state_->target = nullptr;
  ++state_->generation;
  wait(state_);
}

void ClientWatch::disarm() {
  if (!state_->armed) return;
  state_->armed = false;
  state_->in_flight = nullptr;
  state_->waiting = nullptr;
  state_->target = nullptr;
  // Only the wait is pending on the client socket now (the response is written): cancelling the
  // socket's operations ends it. Its handler still runs, and finds itself outdated.
  error_code ignored;
  state_->client->socket().cancel(ignored);
}

void ClientWatch::set_in_flight(UpstreamConnection* connection) { state_->in_flight = connection; }

void ClientWatch::set_waiting(asio::steady_timer* timer) { state_->waiting = timer; }

void ClientWatch::set_displaceable(PreemptTarget* target) { state_->target = target; }

bool ClientWatch::begin_answer() const {
  return state_->target == nullptr || state_->target->begin_answer();
}

bool ClientWatch::displaced() const {
  return state_->target != nullptr && state_->target->displaced();
}

ClientWatch::Stopper ClientWatch::stopper() const {
  return Stopper(state_, state_->generation, state_->client->get_executor());
}

void ClientWatch::Stopper::operator()() const {
  asio::post(executor_, [state = state_, generation = generation_] {
    if (!state->armed || generation != state->generation) return;
    if (state->in_flight != nullptr) state->in_flight->tcp().cancel();
  });
}

void ClientWatch::wait(const std::shared_ptr<State>& state) {
  state->client->socket().async_wait(
      asio::socket_base::wait_read, [state, generation = state->generation](error_code ec) {
        if (!state->armed || generation != state->generation || ec) return;
        char byte;
        const ssize_t n =
            ::recv(state->client->socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n > 0) return;  // a pipelined request: it waits in the socket for the next read
        if (n == 0) {
          state->half_closed = true;  // answer, then close
          return;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
          wait(state);  // nothing after all: keep watching
          return;
        }
        state->gone = true;
        if (state->in_flight != nullptr) state->in_flight->tcp().cancel();
        if (state->waiting != nullptr) state->waiting->cancel();
      });
}

}  // namespace rolter
