#include "sim/engine_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <deque>
#include <optional>
#include <set>
#include <unordered_map>
#include <variant>

#include "sim/decision_service.h"
#include "sim/http_support.h"

namespace rolter::sim {

using namespace boost::asio::experimental::awaitable_operators;

namespace {
using Clock = std::chrono::steady_clock;
using Json = nlohmann::json;

constexpr std::string_view kJson = "application/json";

// One client connection. Lives in its session coroutine's frame.
struct Connection {
  explicit Connection(tcp::socket s) : socket(std::move(s)) {}
  tcp::socket socket;
  beast::flat_buffer buffer;
  // Waiting for the next request: safe to close when the engine starts refusing.
  bool idle = true;
  // The server closed the socket itself (drop fault), so a failing read means nothing about
  // the client.
  bool closed_by_server = false;
};

// Bytes a client may pipeline behind a request that is still being answered before the
// simulator stops reading them (it keeps watching for EOF only through reads).
constexpr size_t kMaxPipelinedBytes = 1u << 20;

asio::awaitable<bool> cancelled() {
  auto state = co_await asio::this_coro::cancellation_state;
  co_return state.cancelled() != asio::cancellation_type::none;
}

// Suspends until the enclosing `||` cancels this coroutine.
asio::awaitable<void> wait_for_cancellation() {
  if (co_await cancelled()) co_return;
  asio::steady_timer forever(co_await asio::this_coro::executor, Clock::time_point::max());
  co_await forever.async_wait(kAwaitTuple);
}

// Sleeps until `deadline`; false when cancelled first. Does not suspend when the deadline has
// passed, so --time-scale 0 costs no timer round trips.
asio::awaitable<bool> sleep_until(asio::steady_timer& timer, Clock::time_point deadline) {
  if (Clock::now() >= deadline) co_return !(co_await cancelled());
  timer.expires_at(deadline);
  auto [ec] = co_await timer.async_wait(kAwaitTuple);
  co_return !ec;
}

// Completes only when the client is gone: EOF or an error on a read kept pending while the
// engine works on its request. Bytes that arrive meanwhile (a pipelined next request) are kept in
// the connection's buffer for the next read.
asio::awaitable<void> watch_client(Connection& conn) {
  for (;;) {
    if (conn.buffer.size() >= kMaxPipelinedBytes) {
      co_await wait_for_cancellation();
      co_return;
    }
    auto space = conn.buffer.prepare(4096);
    auto [ec, n] = co_await conn.socket.async_read_some(space, kAwaitTuple);
    conn.buffer.commit(n);
    if (!ec) continue;
    if (ec == asio::error::operation_aborted || conn.closed_by_server) {
      // Either the answer finished (we are being cancelled) or the server cut the connection
      // itself; neither is the client leaving.
      co_await wait_for_cancellation();
    }
    co_return;
  }
}

HeaderList header_list(const HttpRequest& req) {
  HeaderList out;
  for (const auto& field : req) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.emplace_back(std::move(name), std::string(field.value()));
  }
  return out;
}

// RFC 9110 section 10.1.1: an HTTP/1.1 client that sent `Expect: 100-continue` waits for an
// interim 100 before sending its body (curl does so for bodies over 1 KiB).
bool expects_continue(const HttpRequest& req) {
  return req.version() >= 11 && beast::iequals(req[http::field::expect], "100-continue");
}

// Reads one request: the header, the interim 100 Continue when the client waits for it, then
// the body.
asio::awaitable<beast::error_code> read_request(Connection& conn,
                                                http::request_parser<http::string_body>& parser) {
  auto [ec, n] = co_await http::async_read_header(conn.socket, conn.buffer, parser, kAwaitTuple);
  if (ec) co_return ec;
  if (expects_continue(parser.get())) {
    http::response<http::empty_body> interim{http::status::continue_, parser.get().version()};
    auto [write_ec, written] = co_await http::async_write(conn.socket, interim, kAwaitTuple);
    if (write_ec) co_return write_ec;
  }
  if (parser.is_done()) co_return beast::error_code{};
  auto [body_ec, body_n] = co_await http::async_read(conn.socket, conn.buffer, parser, kAwaitTuple);
  co_return body_ec;
}

Outcome outcome_for_error(int status) {
  return status == 400 ? Outcome::kRejected : Outcome::kFaulted;
}

}  // namespace

struct EngineServer::State : std::enable_shared_from_this<EngineServer::State> {
  State(asio::io_context& ioc, EngineOptions options)
      : engine(std::move(options)),
        strand(asio::make_strand(ioc)),
        acceptor(strand),
        pump_timer(strand) {}

  // A request waiting for its model events; the pump appends and wakes it.
  struct Waiter {
    std::deque<ModelEvent> events;
    asio::steady_timer* wake = nullptr;
  };

  Engine engine;
  asio::strand<asio::io_context::executor_type> strand;
  tcp::acceptor acceptor;
  tcp::endpoint endpoint;  // the bound address, reused when refuse is cleared
  // Bumped whenever the acceptor is closed or reopened, so a stale accept loop knows to stop.
  uint64_t listen_generation = 0;
  std::set<Connection*> connections;
  // Model time is milliseconds since this instant.
  Clock::time_point epoch = Clock::now();
  asio::steady_timer pump_timer;  // due at the model's next event; cancelled to re-plan
  std::unordered_map<uint64_t, Waiter*> waiters;

  double model_now() const {
    return std::chrono::duration<double, std::milli>(Clock::now() - epoch).count();
  }

  // Re-plans the pump after the model changed (a submit or a cancel).
  void kick() { pump_timer.cancel(); }

  // Drives the engine model by the wall clock: advances it whenever its next event is due and
  // hands each event to the request waiting for it.
  static asio::awaitable<void> pump(std::shared_ptr<State> self) {
    std::vector<ModelEvent> events;
    for (;;) {
      events.clear();
      self->engine.model().advance(self->model_now(), events);
      for (const ModelEvent& e : events) {
        auto it = self->waiters.find(e.id);
        if (it == self->waiters.end()) continue;
        it->second->events.push_back(e);
        it->second->wake->cancel();
      }
      if (auto next = self->engine.model().next_event_ms()) {
        // Rounded up so that, when the timer fires, the event is due by model_now().
        const auto offset = std::chrono::nanoseconds(static_cast<int64_t>(std::ceil(*next * 1e6)));
        self->pump_timer.expires_at(self->epoch + offset);
      } else {
        self->pump_timer.expires_at(Clock::time_point::max());
      }
      auto [ec] = co_await self->pump_timer.async_wait(kAwaitTuple);
      (void)ec;  // fired or kicked: either way, advance and re-plan
    }
  }

  // Holds one request in the model; cancels it there (freeing its KV references) when the
  // request ends early, including when its coroutine is destroyed by a client disconnect.
  struct ModelTicket {
    State* state;
    uint64_t id;
    Waiter waiter;
    bool finished = false;
    ModelTicket(State* s, uint64_t request_id, asio::steady_timer* wake)
        : state(s), id(request_id) {
      waiter.wake = wake;
      state->waiters[id] = &waiter;
    }
    ~ModelTicket() {
      state->waiters.erase(id);
      if (!finished && state->engine.model().cancel(state->model_now(), id)) state->kick();
    }
    ModelTicket(const ModelTicket&) = delete;
    ModelTicket& operator=(const ModelTicket&) = delete;
  };

  // The next model event of `ticket`; nullopt when the request is cancelled.
  static asio::awaitable<std::optional<ModelEvent>> next_event(ModelTicket& ticket) {
    while (ticket.waiter.events.empty()) {
      ticket.waiter.wake->expires_at(Clock::time_point::max());
      auto [ec] = co_await ticket.waiter.wake->async_wait(kAwaitTuple);
      (void)ec;
      if (co_await cancelled()) co_return std::nullopt;
    }
    ModelEvent e = ticket.waiter.events.front();
    ticket.waiter.events.pop_front();
    if (e.kind == ModelEvent::Kind::kFinished) ticket.finished = true;
    co_return e;
  }

  std::string engine_header() const { return std::to_string(engine.index()); }

  tl::expected<void, std::string> listen() {
    beast::error_code ec;
    acceptor.open(endpoint.protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      beast::error_code ignored;
      acceptor.close(ignored);
      return tl::make_unexpected("engine " + engine_header() + ": cannot listen on " +
                                 endpoint.address().to_string() + ":" +
                                 std::to_string(endpoint.port()) + ": " + ec.message());
    }
    ++listen_generation;
    asio::co_spawn(strand, accept_loop(shared_from_this(), listen_generation), log_if_exception);
    return {};
  }

  void stop_listening() {
    ++listen_generation;
    beast::error_code ignored;
    acceptor.close(ignored);
    // A pooled keep-alive connection would otherwise still reach a "refusing" engine.
    for (Connection* conn : connections) {
      if (conn->idle) conn->socket.close(ignored);
    }
  }

  static asio::awaitable<void> accept_loop(std::shared_ptr<State> self, uint64_t generation) {
    asio::steady_timer backoff(self->strand);
    for (;;) {
      auto [ec, socket] = co_await self->acceptor.async_accept(kAwaitTuple);
      if (generation != self->listen_generation) co_return;  // closed (and maybe reopened)
      if (ec) {
        if (ec == asio::error::operation_aborted) co_return;
        // Out of descriptors and the like: wait a little instead of spinning.
        spdlog::warn("engine {}: accept failed: {}", self->engine.index(), ec.message());
        co_await sleep_until(backoff, Clock::now() + std::chrono::milliseconds(50));
        continue;
      }
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      asio::co_spawn(self->strand, session(self, std::move(socket)), log_if_exception);
    }
  }

  static asio::awaitable<void> session(std::shared_ptr<State> self, tcp::socket socket) {
    Connection conn(std::move(socket));
    self->connections.insert(&conn);
    struct Unregister {
      State* state;
      Connection* conn;
      ~Unregister() { state->connections.erase(conn); }
    } unregister{self.get(), &conn};

    for (;;) {
      if (self->engine.faults().refuse) break;
      conn.idle = true;
      http::request_parser<http::string_body> parser;
      parser.body_limit(kMaxBodyBytes);
      parser.header_limit(kMaxHeaderBytes);
      const beast::error_code ec = co_await read_request(conn, parser);
      conn.idle = false;
      if (ec) {
        if (ec == http::error::body_limit || ec == http::error::header_limit) {
          HttpRequest dummy;
          HttpResponse res = make_response(dummy, http::status::payload_too_large, kJson,
                                           render_error(false, 413, "request too large"));
          res.set("x-sim-engine", self->engine_header());
          res.keep_alive(false);
          co_await write_response(conn.socket, res);
        } else if (is_http_parse_error(ec)) {
          HttpRequest dummy;
          HttpResponse res = make_response(dummy, http::status::bad_request, kJson,
                                           render_error(false, 400, "malformed HTTP request"));
          res.set("x-sim-engine", self->engine_header());
          res.keep_alive(false);
          co_await write_response(conn.socket, res);
        }
        break;
      }
      HttpRequest req = parser.release();
      const bool keep_alive = co_await self->handle(conn, req);
      if (!keep_alive) break;
    }
    if (!conn.closed_by_server) close_gracefully(conn.socket);
  }

  // Answers one request; returns whether the connection may serve another.
  asio::awaitable<bool> handle(Connection& conn, HttpRequest& req) {
    const auto arrival = Clock::now();
    const std::string path(path_of(req.target()));
    if (auto api = api_for_path(path)) {
      if (req.method() != http::verb::post) {
        engine.note_request(path);
        co_return co_await reply(conn, req, http::status::method_not_allowed,
                                 render_error(error_shape(*api), 405, "use POST"));
      }
      co_return co_await serve_inference(conn, req, *api, path, arrival);
    }

    engine.note_request(path);
    const bool get = req.method() == http::verb::get;
    const bool post = req.method() == http::verb::post;
    if (path == "/health" && get) co_return co_await reply(conn, req, http::status::ok, "", "");
    if (path == "/occupancy" && get) {
      Json body = {{"occupancy", engine.model().occupancy()}, {"cache_available", true}};
      co_return co_await reply(conn, req, http::status::ok, body.dump());
    }
    if (path == "/metrics" && get) {
      co_return co_await reply(conn, req, http::status::ok, engine.metrics_text(),
                               "text/plain; version=0.0.4; charset=utf-8");
    }
    if (path == "/v1/models" && get) {
      co_return co_await reply(conn, req, http::status::ok, engine.models_json());
    }
    if (path == "/tokenize" && post) co_return co_await serve_tokenize(conn, req);
    if (path == "/v1/systemone" && post) co_return co_await serve_decision(conn, req);
    if (path == "/reset_prefix_cache" && post) {
      // vLLM's endpoint: drops every cached block (the engine publishes AllBlocksCleared).
      engine.model().reset_prefix_cache(model_now());
      kick();
      co_return co_await reply(conn, req, http::status::ok, "", "");
    }
    if (path == "/sim/stats" && get) {
      co_return co_await reply(conn, req, http::status::ok, engine.stats_json().dump());
    }
    if (path == "/sim/reset" && post) {
      engine.reset_stats();
      co_return co_await reply(conn, req, http::status::ok, engine.stats_json().dump());
    }
    const bool known = path == "/health" || path == "/occupancy" || path == "/metrics" ||
                       path == "/tokenize" || path == "/v1/systemone" ||
                       path == "/reset_prefix_cache" || path == "/v1/models" ||
                       path == "/sim/stats" || path == "/sim/reset";
    if (known) {
      co_return co_await reply(conn, req, http::status::method_not_allowed,
                               render_error(false, 405, "method not allowed"));
    }
    co_return co_await reply(conn, req, http::status::not_found,
                             render_error(false, 404, "no such path: " + path));
  }

  // POST /tokenize (Engine::tokenize), after the tokenize_stall_ms fault. A client that leaves
  // during the stall ends it: the connection is closed without an answer.
  asio::awaitable<bool> serve_tokenize(Connection& conn, const HttpRequest& req) {
    Engine::TokenizeAnswer answer = engine.tokenize(req.body(), header_list(req));
    const auto stall = std::chrono::milliseconds(engine.faults().tokenize_stall_ms);
    if (stall.count() > 0) {
      asio::steady_timer timer(co_await asio::this_coro::executor);
      auto stalled = sleep_until(timer, Clock::now() + stall) || watch_client(conn);
      auto result = co_await std::move(stalled);
      if (result.index() != 0 || !std::get<0>(result)) co_return false;
    }
    co_return co_await reply(conn, req, static_cast<http::status>(answer.status),
                             std::move(answer.body));
  }

  // POST /v1/systemone, the simulated decision service (decision_service.h), after its faults:
  // decision_stall_ms, then decision_status or decision_garbage. A client that leaves during the
  // stall ends it: the connection is closed without an answer.
  asio::awaitable<bool> serve_decision(Connection& conn, const HttpRequest& req) {
    const Faults faults = engine.faults();
    if (faults.decision_stall_ms > 0) {
      asio::steady_timer timer(co_await asio::this_coro::executor);
      const auto stall = std::chrono::milliseconds(faults.decision_stall_ms);
      auto stalled = sleep_until(timer, Clock::now() + stall) || watch_client(conn);
      auto result = co_await std::move(stalled);
      if (result.index() != 0 || !std::get<0>(result)) co_return false;
    }
    if (faults.decision_status != 0) {
      co_return co_await reply(conn, req, static_cast<http::status>(faults.decision_status),
                               render_error(false, faults.decision_status, "decision fault"));
    }
    if (faults.decision_garbage) {
      co_return co_await reply(conn, req, http::status::ok, "<<not json>>");
    }
    auto answer = answer_systemone(req.body());
    if (!answer) {
      co_return co_await reply(conn, req, http::status::bad_request,
                               render_error(false, 400, answer.error()));
    }
    co_return co_await reply(conn, req, http::status::ok, answer->dump());
  }

  asio::awaitable<bool> reply(Connection& conn, const HttpRequest& req, http::status status,
                              std::string body, std::string_view content_type = kJson) {
    HttpResponse res = make_response(req, status, content_type, std::move(body));
    res.set("x-sim-engine", engine_header());
    const bool ok = co_await write_response(conn.socket, res);
    co_return ok&& req.keep_alive();
  }

  asio::awaitable<bool> serve_inference(Connection& conn, HttpRequest& req, ApiKind api,
                                        const std::string& path, Clock::time_point arrival) {
    RequestPlan plan = engine.begin(api, path, req.body(), header_list(req));
    // Answer while watching the read side: if the client leaves first, the answer coroutine is
    // cancelled wherever it waits (timer or write) and the request counts as cancelled.
    std::optional<Outcome> answered;
    auto answer_or_gone = record(answer(conn, req, plan, arrival), answered) || watch_client(conn);
    auto result = co_await std::move(answer_or_gone);
    // A client that closes right after reading the last byte can make the watcher finish first;
    // the answer was complete by then, so its own outcome is the truth.
    Outcome outcome = Outcome::kCancelled;
    if (answered) {
      outcome = *answered;  // already counted by record()
    } else {
      if (result.index() == 0) outcome = std::get<0>(result);
      engine.finish(outcome);
    }
    if (outcome == Outcome::kCancelled) {
      spdlog::debug("engine {}: request {} cancelled by the client", engine.index(), plan.seq);
    }
    const bool reusable = outcome == Outcome::kCompleted || outcome == Outcome::kFaulted ||
                          outcome == Outcome::kRejected;
    co_return reusable&& req.keep_alive() && req.version() >= 11;
  }

  // Awaits `op` and counts its outcome the moment it is known, before the completion travels
  // through the `||` machinery (a client that reads the answer and at once asks for the stats
  // must see it counted).
  asio::awaitable<Outcome> record(asio::awaitable<Outcome> op, std::optional<Outcome>& out) {
    Outcome outcome = co_await std::move(op);
    engine.finish(outcome);
    out = outcome;
    co_return outcome;
  }

  asio::awaitable<Outcome> answer(Connection& conn, const HttpRequest& req, const RequestPlan& plan,
                                  Clock::time_point arrival) {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto start = arrival + plan.fault.stall;
    if (!co_await sleep_until(timer, start)) co_return Outcome::kCancelled;

    if (plan.is_error()) {
      HttpResponse res =
          make_response(req, static_cast<http::status>(plan.status), kJson, plan.body);
      res.set("x-sim-engine", engine_header());
      if (plan.status == 429)
        res.set(http::field::retry_after, std::to_string(plan.fault.retry_after_s));
      if (!co_await write_response(conn.socket, res)) co_return Outcome::kCancelled;
      co_return outcome_for_error(plan.status);
    }
    if (!plan.model_request) {
      // Embeddings: one prefill, no decode, outside the engine model.
      const auto delay =
          std::chrono::duration_cast<Clock::duration>(plan.delay * plan.fault.slowdown);
      if (!co_await sleep_until(timer, start + delay)) co_return Outcome::kCancelled;
      HttpResponse res = make_response(req, http::status::ok, kJson, plan.body);
      res.set("x-sim-engine", engine_header());
      if (!co_await write_response(conn.socket, res)) co_return Outcome::kCancelled;
      co_return Outcome::kCompleted;
    }
    // The request reaches the engine's queue once the stall fault (if any) is over.
    engine.model().submit(model_now(), *plan.model_request);
    ModelTicket ticket(this, plan.model_request->id, &timer);
    kick();
    Completion c = plan.completion;
    if (!plan.stream) {
      std::optional<Json> kv_params;
      for (;;) {
        auto event = co_await next_event(ticket);
        if (!event) co_return Outcome::kCancelled;
        c.cached_tokens = event->cached_tokens;
        if (event->kind == ModelEvent::Kind::kFinished) {
          // Held from the moment the model finished (no suspension before), so a cancel
          // cannot leave blocks held that nobody was told about.
          if (plan.remote_decode) kv_params = start_hold(plan.model_request->id);
          if (!co_await slow_down(plan, start, event->at_ms)) co_return Outcome::kCancelled;
          break;
        }
      }
      std::string body = render_response(c);
      if (kv_params) add_kv_transfer_params(body, *kv_params);
      HttpResponse res = make_response(req, http::status::ok, kJson, std::move(body));
      res.set("x-sim-engine", engine_header());
      if (!co_await write_response(conn.socket, res)) co_return Outcome::kCancelled;
      co_return Outcome::kCompleted;
    }
    co_return co_await stream(conn, req, plan, c, ticket, start);
  }

  // Step 1 is done: holds its blocks for a pull until a decode claims them (the registry then
  // calls release_from_registry) or --kv-hold-ms passes.
  std::optional<Json> start_hold(uint64_t model_id) {
    std::optional<Json> params = engine.start_hold(model_id);
    if (params) asio::co_spawn(strand, expire_hold(shared_from_this(), model_id), log_if_exception);
    return params;
  }

  static asio::awaitable<void> expire_hold(std::shared_ptr<State> self, uint64_t hold_id) {
    asio::steady_timer timer(self->strand);
    const auto hold_for = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double, std::milli>(self->engine.options().kv_hold_ms));
    co_await sleep_until(timer, Clock::now() + hold_for);
    if (self->engine.kv_registry().drop(self->engine.engine_id(), hold_id)) {
      self->engine.release_hold(self->model_now(), hold_id);
      self->kick();
    }
  }

  // The registry's Release for this engine: a decode on another strand (or thread) claimed a
  // hold; the model may only be touched here.
  static KvTransferRegistry::Release release_from_registry(std::weak_ptr<State> weak) {
    return [weak](uint64_t hold_id) {
      auto self = weak.lock();
      if (!self) return;
      asio::post(self->strand, [self, hold_id] {
        self->engine.release_hold(self->model_now(), hold_id);
        self->kick();
      });
    };
  }

  // The step 1 answer is the usual completion object plus top-level kv_transfer_params.
  static void add_kv_transfer_params(std::string& body, const Json& params) {
    const size_t end = body.rfind('}');
    if (end == std::string::npos) return;
    body.insert(end, ",\"kv_transfer_params\":" + params.dump());
  }

  // The slowdown fault: holds a model event that happened at `at_ms` (model time) until it is
  // `slowdown` times as far from `start` as it really was. Its own timer: the ticket's is woken
  // by the pump whenever an event arrives. False when cancelled first.
  asio::awaitable<bool> slow_down(const RequestPlan& plan, Clock::time_point start, double at_ms) {
    if (!(plan.fault.slowdown > 1)) co_return true;
    const auto happened = epoch + std::chrono::duration_cast<Clock::duration>(
                                      std::chrono::duration<double, std::milli>(at_ms));
    const auto taken = happened > start ? happened - start : Clock::duration::zero();
    const auto due =
        start + std::chrono::duration_cast<Clock::duration>(taken * plan.fault.slowdown);
    asio::steady_timer timer(co_await asio::this_coro::executor);
    co_return co_await sleep_until(timer, due);
  }

  asio::awaitable<Outcome> stream(Connection& conn, const HttpRequest& req, const RequestPlan& plan,
                                  Completion& c, ModelTicket& ticket, Clock::time_point start) {
    // HTTP/1.0 has no chunked encoding: the stream is then delimited by closing the connection.
    const bool chunked = req.version() >= 11;
    http::response<http::empty_body> head{http::status::ok, req.version()};
    head.set(http::field::server, "rolter-sim");
    head.set(http::field::content_type, "text/event-stream");
    head.set(http::field::cache_control, "no-cache");
    head.set("x-sim-engine", engine_header());
    head.keep_alive(chunked && req.keep_alive());
    head.chunked(chunked);
    http::response_serializer<http::empty_body> serializer{head};
    if (auto [ec, n] = co_await http::async_write_header(conn.socket, serializer, kAwaitTuple);
        ec && !serializer.is_header_done()) {
      co_return Outcome::kCancelled;
    }

    // A write cancelled (by the client watcher) after its last byte went out is reported as
    // aborted; it was delivered, so it counts as sent.
    auto send = [&](const std::string& event) -> asio::awaitable<bool> {
      beast::error_code ec;
      size_t written = 0;
      size_t expected = 0;
      if (chunked) {
        auto chunk = http::make_chunk(asio::buffer(event));
        expected = asio::buffer_size(chunk);
        std::tie(ec, written) = co_await asio::async_write(conn.socket, chunk, kAwaitTuple);
      } else {
        expected = event.size();
        std::tie(ec, written) =
            co_await asio::async_write(conn.socket, asio::buffer(event), kAwaitTuple);
      }
      co_return !ec || written == expected;
    };

    const auto drop_after = plan.fault.drop_after_tokens;
    auto drop_now = [&](size_t sent) {
      return drop_after && static_cast<uint64_t>(*drop_after) == sent;
    };
    size_t sent = 0;
    for (;;) {
      auto event = co_await next_event(ticket);
      if (!event) co_return Outcome::kCancelled;
      if (!co_await slow_down(plan, start, event->at_ms)) co_return Outcome::kCancelled;
      c.cached_tokens = event->cached_tokens;
      if (event->kind == ModelEvent::Kind::kFirstToken) {
        if (drop_now(0)) {
          drop(conn, plan.fault.drop_with_reset);
          co_return Outcome::kDropped;
        }
        for (const auto& prologue : render_stream_prologue(c)) {
          if (!co_await send(prologue)) co_return Outcome::kCancelled;
        }
      }
      while (sent < event->tokens_emitted && sent < c.length()) {
        if (drop_now(sent)) {
          drop(conn, plan.fault.drop_with_reset);
          co_return Outcome::kDropped;
        }
        // Every choice advances by one token per model step, like vLLM's parallel sequences;
        // one cut short by a stop sequence has nothing more to send, and a Gemini tool call sends
        // nothing until its last chunk (an empty chunk would end the chunked body).
        for (size_t choice = 0; choice < c.choices.size(); ++choice) {
          const std::string chunk = render_stream_token(c, choice, sent);
          if (chunk.empty()) continue;
          if (!co_await send(chunk)) co_return Outcome::kCancelled;
        }
        ++sent;
      }
      if (event->kind == ModelEvent::Kind::kFinished) break;
    }
    if (drop_now(sent)) {
      drop(conn, plan.fault.drop_with_reset);
      co_return Outcome::kDropped;
    }
    for (const auto& event : render_stream_epilogue(c)) {
      if (!co_await send(event)) co_return Outcome::kCancelled;
    }
    if (chunked) {
      auto last = http::make_chunk_last();
      const size_t expected = asio::buffer_size(last);
      auto [ec, written] = co_await asio::async_write(conn.socket, last, kAwaitTuple);
      if (ec && written != expected) co_return Outcome::kCancelled;
    }
    co_return Outcome::kCompleted;
  }

  // The drop fault: the connection ends in the middle of the body.
  static void drop(Connection& conn, bool with_reset) {
    beast::error_code ignored;
    conn.closed_by_server = true;
    if (with_reset) {
      conn.socket.set_option(asio::socket_base::linger(true, 0), ignored);
    } else {
      conn.socket.shutdown(tcp::socket::shutdown_send, ignored);
    }
    conn.socket.close(ignored);
  }
};

EngineServer::EngineServer(asio::io_context& ioc, EngineOptions options, const std::string& host,
                           uint16_t port)
    : state_(std::make_shared<State>(ioc, std::move(options))) {
  const tcp::endpoint wanted(asio::ip::make_address(host), port);
  state_->acceptor.open(wanted.protocol());
  state_->acceptor.set_option(asio::socket_base::reuse_address(true));
  state_->acceptor.bind(wanted);
  state_->acceptor.listen(asio::socket_base::max_listen_connections);
  state_->endpoint = state_->acceptor.local_endpoint();
  state_->engine.set_listen_address(host, state_->endpoint.port(),
                                    State::release_from_registry(state_));
}

EngineServer::~EngineServer() = default;

size_t EngineServer::index() const { return state_->engine.index(); }

uint16_t EngineServer::port() const { return state_->endpoint.port(); }

void EngineServer::start() {
  asio::co_spawn(state_->strand, State::pump(state_), log_if_exception);
  if (state_->engine.faults().refuse) {
    // Bound first so the port is known and printed; closed now so connects are refused.
    state_->stop_listening();
    return;
  }
  ++state_->listen_generation;
  asio::co_spawn(state_->strand, State::accept_loop(state_, state_->listen_generation),
                 log_if_exception);
}

void EngineServer::attach_kv_publisher(KvEventPublisher* publisher) {
  // Stamps batches in unix seconds: the wall time at the model's epoch plus model time.
  const double now_unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double since_epoch = std::chrono::duration<double>(Clock::now() - state_->epoch).count();
  state_->engine.set_kv_publisher(publisher, now_unix - since_epoch);
}

// Each hop builds its coroutine function as a named local and awaits into a named local: GCC 12
// mishandles temporaries that live across a co_await inside one full-expression.
asio::awaitable<Json> EngineServer::stats() {
  auto state = state_;
  auto fn = [state]() -> asio::awaitable<Json> { co_return state->engine.stats_json(); };
  Json result = co_await asio::co_spawn(state->strand, std::move(fn), asio::use_awaitable);
  co_return result;
}

asio::awaitable<Json> EngineServer::reset_stats() {
  auto state = state_;
  auto fn = [state]() -> asio::awaitable<Json> {
    state->engine.reset_stats();
    co_return state->engine.stats_json();
  };
  Json result = co_await asio::co_spawn(state->strand, std::move(fn), asio::use_awaitable);
  co_return result;
}

asio::awaitable<Faults> EngineServer::faults() {
  auto state = state_;
  auto fn = [state]() -> asio::awaitable<Faults> { co_return state->engine.faults(); };
  Faults result = co_await asio::co_spawn(state->strand, std::move(fn), asio::use_awaitable);
  co_return result;
}

asio::awaitable<tl::expected<Faults, std::string>> EngineServer::set_faults(Faults faults) {
  using Result = tl::expected<Faults, std::string>;
  auto state = state_;
  auto fn = [state, faults]() -> asio::awaitable<Result> {
    const bool was_refusing = !state->acceptor.is_open();
    state->engine.set_faults(faults);
    if (faults.refuse && !was_refusing) {
      state->stop_listening();
    } else if (!faults.refuse && was_refusing) {
      if (auto ok = state->listen(); !ok) {
        // Still refusing in fact; say so in the faults too.
        Faults still = faults;
        still.refuse = true;
        state->engine.set_faults(still);
        co_return Result(tl::unexpect, ok.error());
      }
    }
    co_return Result(state->engine.faults());
  };
  Result result = co_await asio::co_spawn(state->strand, std::move(fn), asio::use_awaitable);
  co_return result;
}

}  // namespace rolter::sim
