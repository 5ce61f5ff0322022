#include "control/toml_json.h"

#include <cmath>
#include <sstream>

namespace rolter {
namespace {

nlohmann::json node_to_json(const toml::node& node);

nlohmann::json array_to_json(const toml::array& array) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& element : array) out.push_back(node_to_json(element));
  return out;
}

nlohmann::json node_to_json(const toml::node& node) {
  if (const auto* t = node.as_table()) return toml_to_json(*t);
  if (const auto* a = node.as_array()) return array_to_json(*a);
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return i->get();
  if (const auto* f = node.as_floating_point()) return f->get();
  if (const auto* b = node.as_boolean()) return b->get();
  std::ostringstream text;  // dates and times: rolter.toml has none; keep them readable
  node.visit([&](const auto& value) { text << value; });
  return text.str();
}

bool value_to_toml(const nlohmann::json& value, const std::string& where, toml::array& into,
                   std::string& problem);

// Writes `value` under `key` of `out` (a null is left out). Returns false with `problem` set when
// it cannot.
bool member_to_toml(const std::string& key, const nlohmann::json& value, const std::string& where,
                    toml::table& out, std::string& problem) {
  if (value.is_null()) return true;
  toml::array one;
  if (!value_to_toml(value, where, one, problem)) return false;
  out.insert_or_assign(key, std::move(*one.get(0)));
  return true;
}

bool value_to_toml(const nlohmann::json& value, const std::string& where, toml::array& into,
                   std::string& problem) {
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      into.push_back(value.get<std::string>());
      return true;
    case nlohmann::json::value_t::boolean:
      into.push_back(value.get<bool>());
      return true;
    case nlohmann::json::value_t::number_integer:
      into.push_back(value.get<int64_t>());
      return true;
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t v = value.get<uint64_t>();
      if (v > static_cast<uint64_t>(INT64_MAX)) {
        problem = where + ": the number is too large";
        return false;
      }
      into.push_back(static_cast<int64_t>(v));
      return true;
    }
    case nlohmann::json::value_t::number_float: {
      const double v = value.get<double>();
      if (!std::isfinite(v)) {
        problem = where + ": the number must be finite";
        return false;
      }
      if (std::trunc(v) == v && std::fabs(v) < 9.0e15) {
        into.push_back(static_cast<int64_t>(v));
      } else {
        into.push_back(v);
      }
      return true;
    }
    case nlohmann::json::value_t::object: {
      toml::table sub;
      if (!json_to_toml(value, sub, problem)) {
        problem = where + "." + problem;
        return false;
      }
      into.push_back(std::move(sub));
      return true;
    }
    case nlohmann::json::value_t::array: {
      toml::array sub;
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value_to_toml(value[i], where + "[" + std::to_string(i) + "]", sub, problem)) {
          return false;
        }
      }
      into.push_back(std::move(sub));
      return true;
    }
    default:
      problem = where + ": null is not allowed in a list";
      return false;
  }
}

}  // namespace

nlohmann::json toml_to_json(const toml::table& table) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, node] : table) out[std::string(key.str())] = node_to_json(node);
  return out;
}

bool json_to_toml(const nlohmann::json& object, toml::table& out, std::string& problem) {
  if (!object.is_object()) {
    problem = "expected a JSON object";
    return false;
  }
  for (const auto& [key, value] : object.items()) {
    if (!member_to_toml(key, value, key, out, problem)) return false;
  }
  return true;
}

}  // namespace rolter
