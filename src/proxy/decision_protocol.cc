#include "proxy/decision_protocol.h"

#include <simdjson.h>

#include <algorithm>

#include "common/json_escape.h"

namespace rolter {
namespace {

namespace ondemand = simdjson::ondemand;

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

}  // namespace

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

void keep_route_models(DecisionVerdict& verdict, const PolicyRoute::Decision& decision) {
  const auto is_route_model = [&](std::string_view model) {
    return std::any_of(decision.criteria.begin(), decision.criteria.end(),
                       [&](const auto& criterion) { return criterion.first == model; });
  };
  std::erase_if(verdict.probabilities, [&](const auto& p) { return !is_route_model(p.first); });
  verdict.probabilities.shrink_to_fit();
  if (!is_route_model(verdict.choice)) verdict.choice.clear();
}

}  // namespace rolter
