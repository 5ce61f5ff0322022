#include "proxy/client_watch.h"

#include <boost/asio/post.hpp>

#include "flow/preemption.h"
#include "upstream/upstream_connection.h"

namespace rolter {

ClientWatch::ClientWatch(TimedStream& client) : state_(std::make_shared<State>()) {
  state_->client = &client;
}

ClientWatch::~ClientWatch() {
  state_->armed = false;
  state_->client->forget_input_sink();
}

void ClientWatch::arm() {
  state_->armed = true;
  state_->gone = false;
  state_->half_closed = false;
  state_->in_flight = nullptr;
  state_->waiting = nullptr;
  state_->target = nullptr;
  ++state_->generation;
  state_->client->watch_input(state_.get());
}

void ClientWatch::disarm() {
  if (!state_->armed) return;
  state_->armed = false;
  state_->in_flight = nullptr;
  state_->waiting = nullptr;
  state_->target = nullptr;
  // The look stays queued: the connection's next read takes it over (net/timed_stream.h), where
  // cancelling it would cost the loop a turn. What it sees before then, nobody hears.
  state_->client->forget_input_sink();
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

void ClientWatch::State::on_input(Input input, const error_code& ec) {
  if (!armed || input == Input::kBytes) return;  // bytes: a pipelined request, for the next read
  if (input == Input::kEnd) {
    half_closed = true;  // answer, then close
    return;
  }
  if (ec == asio::error::operation_aborted) return;
  gone = true;
  if (in_flight != nullptr) in_flight->tcp().cancel();
  if (waiting != nullptr) waiting->cancel();
}

}  // namespace rolter
