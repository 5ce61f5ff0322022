#include "proxy/queue_gate.h"

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <chrono>
#include <memory>

#include "balance/kv_match.h"
#include "flow/priority.h"
#include "limits/estimate.h"
#include "proxy/request_line.h"
#include "proxy/request_log.h"
#include "proxy/tenancy.h"

namespace rolter {
namespace {

using std::chrono::milliseconds;
using SteadyTime = std::chrono::steady_clock::time_point;

// The queue's verdict, delivered to the request's own worker: the timer it waits on is cancelled
// there, and the verdict is read there, so nothing is shared across threads but the post.
class TimerWaiter final : public QueueWaiter, public std::enable_shared_from_this<TimerWaiter> {
 public:
  explicit TimerWaiter(const asio::any_io_executor& executor) : timer(executor) {}

  void wake(const QueueVerdict& v) override {
    asio::post(timer.get_executor(), [self = shared_from_this(), v] {
      self->verdict = v;
      self->timer.cancel();
    });
  }

  asio::steady_timer timer;
  std::optional<QueueVerdict> verdict;  // read and written on the request's worker only
};

// A request that a higher band may displace: stopping it cuts its upstream exchange.
class DisplaceableRequest final : public PreemptTarget {
 public:
  explicit DisplaceableRequest(ClientWatch::Stopper stopper) : stopper_(std::move(stopper)) {}
  void stop() override { stopper_(); }

 private:
  ClientWatch::Stopper stopper_;
};

// The prompt tokens no instance of the route holds in its KV cache (the best one's view: the
// strategy may send it there), else the whole prompt (SPEC §15's estimate).
uint64_t uncached_prompt_tokens(const ForwardRequest& request) {
  const uint64_t prompt = prompt_tokens_of(request);
  if (request.ctx == nullptr || !request.ctx->token_ids) return prompt;
  RequestBlockKeys keys(*request.ctx);
  uint64_t held = 0;
  for (const Candidate& c : request.route.pool->candidates) {
    if (auto m = match_kv(&c.state->kv, keys)) {
      held = std::max<uint64_t>(held, static_cast<uint64_t>(m->held_blocks) * m->block_size);
    }
  }
  return prompt - std::min(prompt, held);
}

// The request's prefill alone, in ms: the fastest estimate among the candidates that have learned
// a time-to-first-token model (balance/evidence/ttft_model.h: every relayed request teaches it),
// each for the part of the prompt it does not hold, with no queue. nullopt while none has one.
std::optional<double> prefill_estimate_ms(const ForwardRequest& request) {
  if (request.ctx == nullptr) return std::nullopt;
  RequestBlockKeys keys(*request.ctx);
  std::optional<double> best;
  for (const Candidate& c : request.route.pool->candidates) {
    const auto ms =
        c.state->evidence.ttft.predict(0, 0, uncached_ktokens(*request.ctx, &c.state->kv, keys));
    if (ms && (!best || *ms < *best)) best = ms;
  }
  return best;
}

uint8_t band_of(const ForwardRequest& request, const FlowGate& gate) {
  PriorityDefaults defaults{.route = gate.priority};
  if (request.key != nullptr) {
    defaults.max_priority = request.key->max_priority;
    defaults.key = request.key->priority;
  }
  const std::string_view header =
      request.request != nullptr ? std::string_view((*request.request)["x-rolter-priority"])
                                 : std::string_view();
  return priority_band(header, defaults);
}

// The request's tenant: its key's team, else the key; "" on an open gateway.
std::string tenant_of(const ForwardRequest& request) {
  if (request.key == nullptr) return {};
  return request.key->team.empty() ? request.key->name : request.key->team;
}

QueueTicket ticket_of(const ForwardRequest& request, const FlowGate& gate) {
  QueueTicket ticket;
  ticket.tenant = tenant_of(request);
  ticket.band = band_of(request, gate);
  const uint64_t output = request.kind == ApiKind::kEmbeddings
                              ? 0
                              : request.facts->output_cap.value_or(gate.default_output_tokens);
  ticket.cost = uncached_prompt_tokens(request) + output;
  if (gate.max_ttft_ms[ticket.band] > 0) ticket.prefill_ms = prefill_estimate_ms(request);
  return ticket;
}

uint64_t ms_since(SteadyTime start) {
  return static_cast<uint64_t>(std::chrono::duration_cast<milliseconds>(
                                   std::chrono::steady_clock::now() - start)
                                   .count());
}

// The refusal's access-log line (a plain function: a coroutine would keep it in its frame).
void log_shed(const ForwardRequest& request, unsigned status, uint64_t body_bytes, double duration,
              std::optional<uint64_t> queue_ms) {
  RequestLogLine line = request_log_line(request);
  line.target = "none";
  line.queue_ms = queue_ms;
  line.status = status;
  line.bytes_out = body_bytes;
  line.duration_s = duration;
  log_request(line);
}

// The refusal: 429 overloaded with its Retry-After, counted and logged as the gateway's own.
Task<ForwardResult> shed(TimedStream& client, const ForwardRequest& request,
                         ShedReason reason, uint32_t retry_after_s, SteadyTime started,
                         std::optional<uint64_t> queue_ms) {
  const RoutePool& pool = *request.route.pool;
  std::string message =
      reason == ShedReason::kFull ? "the route is saturated and its queue is full"
      : reason == ShedReason::kMaxTtft
          ? "the route is saturated and this request's estimated prefill exceeds its priority "
            "band's max_ttft_ms"
          : "the route is saturated and this request cannot be served within the queue's wait";
  message += "; retry after " + std::to_string(retry_after_s) + " s";
  const ApiError error{.status = 429, .type = "overloaded", .message = std::move(message),
                       .code = "overloaded"};
  std::string fields(request.extra_fields);
  fields += "Retry-After: " + std::to_string(retry_after_s) + "\r\n";
  if (queue_ms) fields += "x-rolter-queue-ms: " + std::to_string(*queue_ms) + "\r\n";
  Metrics::count_response(pool.no_target, error.status);
  uint64_t body_bytes = 0;
  const error_code ec =
      co_await write_error(client, request.style, error, request_id_of(request),
                           request.client_keep_alive, 0, {}, fields, &body_bytes);
  if (request.trace != nullptr) request.trace->set_served_by(pool.name, {}, 0);
  const double duration =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  Metrics::observe_seconds(pool.instruments.duration, duration);
  log_shed(request, error.status, body_bytes, duration, queue_ms);
  ForwardResult result;
  result.status = error.status;
  result.client_usable = !ec && request.client_keep_alive;
  co_return result;
}

// The request passed the queue and goes on now: registered while the queue counts it (and
// displaceable while it may be preempted), with x-rolter-queue-ms (and its attempts so far) when
// it waited.
void go_on(const ForwardRequest& request, ClientWatch& watch, uint8_t band,
           std::string_view tenant, QueuePass& pass) {
  RouteQueue& queue = *request.route.pool->flow->queue;
  if (request.route.pool->prefill == nullptr && queue.registers(band)) {
    pass.target = std::make_shared<DisplaceableRequest>(watch.stopper());
    pass.running_id = queue.register_running(band, tenant, pass.target);
    watch.set_displaceable(pass.target.get());
  }
  if (!pass.queue_ms && pass.attempts == 0) return;
  pass.with_fields = request;
  pass.with_fields->earlier_attempts = pass.attempts;
  if (pass.queue_ms) {
    pass.fields = std::string(request.extra_fields) + "x-rolter-queue-ms: " +
                  std::to_string(*pass.queue_ms) + "\r\n";
    pass.with_fields->extra_fields = pass.fields;
  }
}

}  // namespace

Task<void> pass_queue(TimedStream& client, ClientWatch& watch, const ForwardRequest& request,
                      QueuePass& pass) {
  const FlowGate& gate = *request.route.pool->flow;
  if (!pass.first_entered && gate.open(default_clock().now())) {
    // The unsaturated path (here only on a route with a preempting band, or in a race).
    if (gate.preempts) go_on(request, watch, band_of(request, gate), tenant_of(request), pass);
    co_return;
  }
  RouteQueue& queue = *gate.queue;
  const SteadyTime entered = std::chrono::steady_clock::now();
  // A displaced request keeps its first arrival's deadline.
  const SteadyTime started = pass.first_entered.value_or(entered);
  pass.first_entered = started;
  auto waiter = std::make_shared<TimerWaiter>(client.get_executor());
  const QueueTicket ticket = ticket_of(request, gate);
  const QueueAdmission admission = queue.enter(ticket, waiter);
  if (admission.kind == QueueAdmission::Kind::kGo) {
    queue.started();
    go_on(request, watch, ticket.band, ticket.tenant, pass);
    co_return;
  }
  if (admission.kind == QueueAdmission::Kind::kShed) {
    pass.answered = co_await shed(client, request, admission.reason, admission.retry_after_s,
                                  started, pass.queue_ms);
    co_return;
  }
  const SteadyTime deadline =
      started + milliseconds(request.snapshot->config().queue.max_wait_ms);
  watch.set_waiting(&waiter->timer);
  while (!waiter->verdict) {
    waiter->timer.expires_at(
        std::min(deadline, std::chrono::steady_clock::now() + kQueueRecheck));
    co_await waiter->timer.async_wait(kNoThrow);
    if (waiter->verdict) break;
    if (watch.gone()) {
      if (!queue.leave(admission.id)) continue;  // its turn came meanwhile: the verdict is posted
      watch.set_waiting(nullptr);
      pass.answered = ForwardResult{.client_usable = false};
      co_return;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      const std::optional<uint32_t> retry_after = queue.expire(admission.id);
      if (!retry_after) continue;
      watch.set_waiting(nullptr);
      pass.answered = co_await shed(client, request, ShedReason::kExpired, *retry_after, started,
                                    pass.waited_ms + ms_since(entered));
      co_return;
    }
    queue.poke();
  }
  watch.set_waiting(nullptr);
  const QueueVerdict verdict = *waiter->verdict;
  pass.waited_ms += ms_since(entered);
  pass.queue_ms = pass.waited_ms;
  if (verdict.kind == QueueVerdict::Kind::kShed) {
    pass.answered = co_await shed(client, request, verdict.reason, verdict.retry_after_s, started,
                                  pass.queue_ms);
    co_return;
  }
  queue.started();
  if (watch.gone()) {
    pass.answered = ForwardResult{.client_usable = false};
    co_return;
  }
  go_on(request, watch, ticket.band, ticket.tenant, pass);
}

void leave_queue_slot(const ForwardRequest& request, ClientWatch& watch, QueuePass& pass,
                      bool completed) {
  const FlowGate* gate = request.route.pool->flow.get();
  if (pass.target) {
    gate->queue->unregister(pass.running_id);
    watch.set_displaceable(nullptr);
    pass.target.reset();
  }
  gate->queue->released(completed);
}

}  // namespace rolter
