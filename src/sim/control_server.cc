#include "sim/control_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/strand.hpp>
#include <charconv>
#include <nlohmann/json.hpp>

#include "sim/api_format.h"
#include "sim/http_support.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

struct Reply {
  http::status status = http::status::ok;
  Json body;
};

Reply error_reply(http::status status, std::string message) {
  return {status, Json{{"error", {{"message", std::move(message)}}}}};
}

// Splits "/faults/3" into ("faults", "3", "") and "/engines/3/reset" into
// ("engines", "3", "reset").
struct Route {
  std::string_view collection;
  std::string_view id;
  std::string_view action;
};

Route split_route(std::string_view path) {
  Route r;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  std::string_view* parts[] = {&r.collection, &r.id, &r.action};
  for (auto* part : parts) {
    const size_t slash = path.find('/');
    *part = path.substr(0, slash);
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return r;
}

}  // namespace

struct ControlServer::State : std::enable_shared_from_this<ControlServer::State> {
  State(asio::io_context& ioc, std::vector<EngineServer*> e)
      : strand(asio::make_strand(ioc)), acceptor(strand), engines(std::move(e)) {}

  asio::strand<asio::io_context::executor_type> strand;
  tcp::acceptor acceptor;
  std::vector<EngineServer*> engines;
  uint16_t port = 0;

  static asio::awaitable<void> accept_loop(std::shared_ptr<State> self) {
    for (;;) {
      auto [ec, socket] = co_await self->acceptor.async_accept(kAwaitTuple);
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) continue;
      asio::co_spawn(self->strand, session(self, std::move(socket)), log_if_exception);
    }
  }

  static asio::awaitable<void> session(std::shared_ptr<State> self, tcp::socket socket) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(1u << 20);
      auto [ec, n] = co_await http::async_read(socket, buffer, parser, kAwaitTuple);
      if (ec) break;
      HttpRequest req = parser.release();
      Reply reply = co_await self->route(req);
      HttpResponse res = make_response(req, reply.status, "application/json", reply.body.dump());
      if (!co_await write_response(socket, res) || !req.keep_alive()) break;
    }
    close_gracefully(socket);
  }

  // The engine named by `id`, or null.
  EngineServer* engine_at(std::string_view id) {
    size_t index = 0;
    auto [ptr, ec] = std::from_chars(id.data(), id.data() + id.size(), index);
    if (ec != std::errc() || ptr != id.data() + id.size() || index >= engines.size()) {
      return nullptr;
    }
    return engines[index];
  }

  asio::awaitable<Reply> route(const HttpRequest& req) {
    const Route r = split_route(path_of(req.target()));
    const http::verb method = req.method();

    if (r.collection == "health" && r.id.empty())
      co_return Reply{http::status::ok, {{"status", "ok"}}};

    if (r.collection == "reset" && r.id.empty()) {
      if (method != http::verb::post)
        co_return error_reply(http::status::method_not_allowed, "use POST");
      Json all = Json::array();
      for (EngineServer* e : engines) {
        Json stats = co_await e->reset_stats();
        all.push_back(std::move(stats));
      }
      co_return Reply{http::status::ok, all};
    }

    if (r.collection == "engines" || r.collection == "faults") {
      const bool faults = r.collection == "faults";
      if (r.id.empty()) {
        if (method != http::verb::get)
          co_return error_reply(http::status::method_not_allowed, "use GET");
        Json all = Json::array();
        for (EngineServer* e : engines) {
          if (faults) {
            Faults f = co_await e->faults();
            all.push_back(faults_to_json(f));
          } else {
            Json stats = co_await e->stats();
            all.push_back(std::move(stats));
          }
        }
        co_return Reply{http::status::ok, all};
      }
      EngineServer* engine = engine_at(r.id);
      if (engine == nullptr) {
        co_return error_reply(http::status::not_found, "no engine " + std::string(r.id));
      }
      if (!faults) {
        if (r.action.empty() && method == http::verb::get) {
          Json stats = co_await engine->stats();
          co_return Reply{http::status::ok, std::move(stats)};
        }
        if (r.action == "reset" && method == http::verb::post) {
          Json stats = co_await engine->reset_stats();
          co_return Reply{http::status::ok, std::move(stats)};
        }
        co_return error_reply(http::status::not_found, "unknown engine action");
      }
      if (!r.action.empty()) co_return error_reply(http::status::not_found, "unknown path");
      switch (method) {
        case http::verb::get: {
          Faults f = co_await engine->faults();
          co_return Reply{http::status::ok, faults_to_json(f)};
        }
        case http::verb::delete_: {
          Reply reply = co_await apply(*engine, Faults{});
          co_return reply;
        }
        case http::verb::post:
        case http::verb::put: {
          Json body = Json::parse(req.body(), nullptr, false);
          if (body.is_discarded()) {
            co_return error_reply(http::status::bad_request, "the body is not valid JSON");
          }
          auto parsed = faults_from_json(body);
          if (!parsed) co_return error_reply(http::status::bad_request, parsed.error());
          Reply reply = co_await apply(*engine, *parsed);
          co_return reply;
        }
        default:
          co_return error_reply(http::status::method_not_allowed, "use GET, POST or DELETE");
      }
    }
    co_return error_reply(http::status::not_found, "unknown path");
  }

  asio::awaitable<Reply> apply(EngineServer& engine, Faults faults) {
    auto result = co_await engine.set_faults(faults);
    if (!result) {
      spdlog::error("{}", result.error());
      co_return error_reply(http::status::internal_server_error, result.error());
    }
    spdlog::info("engine {}: faults now {}", engine.index(), faults_to_json(*result).dump());
    co_return Reply{http::status::ok, faults_to_json(*result)};
  }
};

ControlServer::ControlServer(asio::io_context& ioc, const std::string& host, uint16_t port,
                             std::vector<EngineServer*> engines)
    : state_(std::make_shared<State>(ioc, std::move(engines))) {
  const tcp::endpoint endpoint(asio::ip::make_address(host), port);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(asio::socket_base::reuse_address(true));
  state_->acceptor.bind(endpoint);
  state_->acceptor.listen(asio::socket_base::max_listen_connections);
  state_->port = state_->acceptor.local_endpoint().port();
}

ControlServer::~ControlServer() = default;

uint16_t ControlServer::port() const { return state_->port; }

void ControlServer::start() {
  asio::co_spawn(state_->strand, State::accept_loop(state_), log_if_exception);
}

}  // namespace rolter::sim
