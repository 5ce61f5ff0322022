#include "proxy/policy_session_key.h"

#include <simdjson.h>

#include <vector>

namespace rolter {
namespace ondemand = simdjson::ondemand;

bool path_has_suffix(std::string_view path, std::span<const std::string> suffixes) {
  for (const auto& suffix : suffixes) {
    if (!suffix.empty() && path.ends_with(suffix)) return true;
  }
  return false;
}

std::optional<std::string> first_string_field(std::string_view body,
                                              std::span<const std::string_view> fields) {
  if (fields.empty()) return std::nullopt;
  const simdjson::padded_string padded(body);
  ondemand::parser parser;
  ondemand::document doc;
  ondemand::object object;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS ||
      doc.get_object().get(object) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  // One pass over the object: found[i] holds the first non-empty string value of fields[i].
  std::vector<std::optional<std::string>> found(fields.size());
  for (auto field : object) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return std::nullopt;
    size_t index = 0;
    while (index < fields.size() && fields[index] != key) ++index;
    if (index == fields.size() || found[index]) continue;  // not wanted, or seen before
    ondemand::value value;
    if (field.value().get(value) != simdjson::SUCCESS) return std::nullopt;
    ondemand::json_type type;
    if (value.type().get(type) != simdjson::SUCCESS) return std::nullopt;
    if (type != ondemand::json_type::string) {
      found[index] = std::string();  // the first occurrence decides, and it is no key
      continue;
    }
    std::string_view text;
    if (value.get_string().get(text) != simdjson::SUCCESS) return std::nullopt;
    found[index] = std::string(text);
  }
  for (auto& value : found) {
    if (value && !value->empty()) return std::move(*value);
  }
  return std::nullopt;
}

std::string policy_session_key(const PolicyRoute& policy, std::string_view path,
                               HeaderLookup header, std::string_view body) {
  bool has_body_source = false;
  for (const SessionKeySource& source : policy.session_keys) {
    if (source.header.empty()) {
      has_body_source = has_body_source || !source.body.empty();
      continue;
    }
    const std::string_view value = header(source.header);
    if (!value.empty()) return std::string(value);
  }
  if (!has_body_source || !path_has_suffix(path, policy.body_path_suffixes)) return {};
  std::vector<std::string_view> fields;
  for (const SessionKeySource& source : policy.session_keys) {
    if (source.header.empty() && !source.body.empty()) fields.push_back(source.body);
  }
  return first_string_field(body, fields).value_or(std::string());
}

}  // namespace rolter
