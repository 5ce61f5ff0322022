#include "proxy/decision_client.h"

#include <simdjson.h>
#include <spdlog/spdlog.h>

#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>

#include <algorithm>
#include <variant>

#include "common/json_escape.h"
#include "upstream/upstream_connection.h"

namespace rolter {
namespace {

namespace http = beast::http;
namespace ondemand = simdjson::ondemand;
using Outcome = Metrics::DecisionOutcome;

// connect_upstream() labels a connection with its instance's id for the connection pool; this
// connection is never pooled, and a decision service has no InstanceState.
constexpr uint32_t kNoInstance = 0;

// The first `limit` bytes of `text`, without a trailing partial UTF-8 sequence, as valid UTF-8.
std::string utf8_prefix(std::string_view text, size_t limit) {
  if (text.size() > limit) {
    size_t end = limit;
    // Back off over continuation bytes (10xxxxxx) to the lead byte of the cut character, and drop
    // that character too: it may be incomplete, and one character is nothing to miss.
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    text = text.substr(0, end);
  }
  std::string out(text);
  if (!simdjson::validate_utf8(out.data(), out.size())) {
    for (char& c : out) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
  }
  return out;
}

bool is_valid_json(std::string_view text) {
  simdjson::dom::parser parser;
  simdjson::dom::element ignored;
  return parser.parse(simdjson::padded_string(text)).get(ignored) == simdjson::SUCCESS;
}

// A JSON number, as a double; nullopt for anything else.
std::optional<double> read_number(ondemand::value value) {
  ondemand::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS || type != ondemand::json_type::number) {
    return std::nullopt;
  }
  double number = 0;
  if (value.get_double().get(number) != simdjson::SUCCESS) return std::nullopt;
  return number;
}

tl::expected<void, std::string> read_probabilities(ondemand::value value,
                                                   DecisionVerdict& verdict) {
  ondemand::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("\"probabilities\" is not an object"));
  }
  for (auto field : object) {
    std::string_view model;
    ondemand::value p_value;
    if (field.unescaped_key().get(model) != simdjson::SUCCESS ||
        field.value().get(p_value) != simdjson::SUCCESS) {
      return tl::unexpected(std::string("\"probabilities\" cannot be read"));
    }
    std::string name(model);  // copied before the value is read: the key view may not survive it
    const auto p = read_number(p_value);
    if (!p || !(*p >= 0 && *p <= 1)) {
      return tl::unexpected("the probability of '" + name + "' is not a number in [0, 1]");
    }
    if (!verdict.probability(name)) verdict.probabilities.emplace_back(std::move(name), *p);
  }
  return {};
}

tl::expected<DecisionVerdict, std::string> read_model_selection(ondemand::object selection) {
  DecisionVerdict verdict;
  bool has_choice = false;
  std::optional<double> confidence;
  for (auto field : selection) {
    std::string_view key;
    ondemand::value value;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS ||
        field.value().get(value) != simdjson::SUCCESS) {
      return tl::unexpected(std::string("\"model_selection\" cannot be read"));
    }
    if (key == "choice" && !has_choice) {
      std::string_view choice;
      if (value.get_string().get(choice) != simdjson::SUCCESS) {
        return tl::unexpected(std::string("\"choice\" is not a string"));
      }
      verdict.choice = std::string(choice);
      has_choice = true;
    } else if (key == "confidence" && !confidence) {
      confidence = read_number(value);
      if (!confidence) return tl::unexpected(std::string("\"confidence\" is not a number"));
    } else if (key == "probabilities" && verdict.probabilities.empty()) {
      if (auto ok = read_probabilities(value, verdict); !ok) return tl::unexpected(ok.error());
    }
  }
  if (!has_choice) return tl::unexpected(std::string("no \"choice\""));
  if (!confidence) return tl::unexpected(std::string("no \"confidence\""));
  // SPEC §7: confidence scales the plugin's weight; outside (0, 1] it cannot, so no vote.
  if (!(*confidence > 0 && *confidence <= 1)) {
    return tl::unexpected("confidence " + std::to_string(*confidence) + " is outside (0, 1]");
  }
  verdict.confidence = *confidence;
  if (verdict.probabilities.empty()) verdict.probabilities.emplace_back(verdict.choice, 1.0);
  return verdict;
}

template <typename Stream>
Task<DecisionCall> exchange(Stream& stream, UpstreamConnection& connection,
                            const Provider& provider, std::string body) {
  const Endpoint& endpoint = provider.endpoints.front();
  http::request<http::string_body> request{http::verb::post, endpoint.base_path + "/v1/systemone",
                                           11};
  request.set(http::field::host, endpoint.host_header);
  request.set(http::field::user_agent, "rolter-decision");
  request.set(http::field::content_type, "application/json");
  request.set(http::field::accept, "application/json");
  if (!provider.api_key.empty()) {
    request.set(http::field::authorization, "Bearer " + provider.api_key);
  }
  request.keep_alive(false);
  request.body() = std::move(body);
  request.prepare_payload();

  DecisionCall result;
  auto failed = [&](const error_code& ec, std::string_view step) {
    result.outcome = ec == beast::error::timeout ? Outcome::kTimeout : Outcome::kError;
    result.error = std::string(step) + ": " + ec.message();
    return result;
  };
  auto [write_ec, written] = co_await http::async_write(stream, request, kNoThrow);
  if (write_ec) co_return failed(write_ec, "sending the request");
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxDecisionReplyBytes);
  auto [read_ec, read] = co_await http::async_read(stream, connection.buffer, parser, kNoThrow);
  if (read_ec) co_return failed(read_ec, "reading the response");
  const unsigned status = parser.get().result_int();
  if (status < 200 || status > 299) {
    result.outcome = Outcome::kStatus;
    result.error = "status " + std::to_string(status);
    co_return result;
  }
  auto verdict = read_decision_reply(parser.get().body());
  if (!verdict) {
    result.outcome = Outcome::kInvalid;
    result.error = std::move(verdict.error());
    co_return result;
  }
  result.outcome = Outcome::kOk;
  result.verdict = std::move(*verdict);
  co_return result;
}

}  // namespace

bool wants_decision(ApiKind kind, const PolicyRoute& policy) {
  return policy.decision.has_value() && kind != ApiKind::embeddings;
}

std::string decision_request_body(std::string_view client_body,
                                  const PolicyRoute::Decision& decision) {
  const bool embed = client_body.size() <= kMaxDecisionStateBytes && is_valid_json(client_body);
  std::string out;
  out.reserve(std::min(client_body.size(), kMaxDecisionStateBytes) + decision.instructions.size() +
              256);
  out.append(R"({"state":)");
  if (embed) {
    out.append(client_body);
  } else {
    append_json_string(out, utf8_prefix(client_body, kMaxDecisionStateBytes));
  }
  out.append(R"(,"model":)");
  append_json_string(out, decision.model);
  out.append(R"(,"questions":{"model_selection":{"type":"choice","instructions":)");
  append_json_string(out, decision.instructions);
  out.append(R"(,"criteria":{)");
  bool first = true;
  for (const auto& [model, description] : decision.criteria) {
    if (!first) out.push_back(',');
    first = false;
    append_json_string(out, model);
    out.push_back(':');
    if (description) {
      append_json_string(out, *description);
    } else {
      out.append("null");
    }
  }
  out.append("}}}}");
  return out;
}

tl::expected<DecisionVerdict, std::string> read_decision_reply(std::string_view body) {
  const simdjson::padded_string padded(body);
  ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(object) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the reply is not a JSON object"));
  }
  ondemand::object answers;
  if (object.find_field_unordered("answers").get_object().get(answers) != simdjson::SUCCESS) {
    return tl::unexpected(std::string("the reply has no \"answers\" object"));
  }
  ondemand::object selection;
  if (answers.find_field_unordered("model_selection").get_object().get(selection) !=
      simdjson::SUCCESS) {
    return tl::unexpected(std::string("the reply has no \"answers.model_selection\" object"));
  }
  return read_model_selection(selection);
}

Task<DecisionCall> call_decision_service(const Provider& provider, std::string body,
                                         asio::ssl::context& tls,
                                         std::chrono::milliseconds timeout) {
  using std::chrono::steady_clock;
  DecisionCall result;
  if (provider.endpoints.empty()) {
    result.error = "the provider has no instance";
    co_return result;
  }
  const auto deadline = steady_clock::now() + timeout;
  auto [ec, connection] =
      co_await connect_upstream(provider.endpoints.front(), kNoInstance, tls, timeout);
  if (ec) {
    result.outcome = ec == beast::error::timeout ? Outcome::kTimeout : Outcome::kError;
    result.error = "connecting: " + ec.message();
    co_return result;
  }
  if (steady_clock::now() >= deadline) {
    result.outcome = Outcome::kTimeout;
    result.error = "connecting: the timeout passed";
    co_return result;
  }
  connection->tcp().expires_at(deadline);
  auto run = [&](auto& stream) { return exchange(stream, *connection, provider, std::move(body)); };
  result = co_await std::visit(run, connection->stream);
  beast::error_code ignored;
  connection->tcp().socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  connection->tcp().close();
  co_return result;
}

Task<std::optional<DecisionVerdict>> ask_decision_service(const PolicyRoute::Decision& decision,
                                                          std::string_view route,
                                                          std::string_view client_body,
                                                          asio::ssl::context& tls,
                                                          std::chrono::milliseconds timeout) {
  using std::chrono::steady_clock;
  const auto started = steady_clock::now();
  std::string body = decision_request_body(client_body, decision);
  DecisionCall call =
      co_await call_decision_service(*decision.provider, std::move(body), tls, timeout);
  const double seconds = std::chrono::duration<double>(steady_clock::now() - started).count();
  Metrics::observe_decision(decision.instruments, call.outcome, seconds);
  if (call.outcome != Outcome::kOk) {
    spdlog::debug("decision service '{}' for route '{}': {}; routing without a vote",
                  decision.provider->name, route, call.error);
    co_return std::nullopt;
  }
  co_return std::move(call.verdict);
}

}  // namespace rolter
