#include "control/config_document.h"

#include <sstream>

#include "control/toml_json.h"

namespace rolter {
namespace {

constexpr EntityKind kKinds[] = {EntityKind::kProvider, EntityKind::kRoute,
                                 EntityKind::kProviderGroup, EntityKind::kKey, EntityKind::kTeam};

// Sections of the control plane's own file that are not the fleet's.
constexpr std::string_view kLocalSections[] = {"store", "tls"};

}  // namespace

std::string_view entity_array(EntityKind kind) {
  switch (kind) {
    case EntityKind::kProvider:
      return "providers";
    case EntityKind::kRoute:
      return "routes";
    case EntityKind::kProviderGroup:
      return "provider_groups";
    case EntityKind::kKey:
      return "keys";
    case EntityKind::kTeam:
      return "teams";
  }
  return "";
}

std::string_view entity_name_key(EntityKind kind) {
  return kind == EntityKind::kProviderGroup ? "slug" : "name";
}

tl::expected<ConfigDocument, std::string> build_document(std::string_view file_text,
                                                         const std::vector<Entity>& entities,
                                                         const std::string& adaptive_policy) {
  ConfigDocument doc;
  toml::table root;
  try {
    if (!file_text.empty()) root = toml::parse(file_text);
  } catch (const toml::parse_error& e) {
    return tl::unexpected("the config file does not parse: " + std::string(e.description()));
  }
  for (auto section : kLocalSections) root.erase(section);
  for (EntityKind kind : kKinds) {
    const std::string array_key(entity_array(kind));
    toml::array* array = root[array_key].as_array();
    if (array != nullptr) {
      for (auto& element : *array) {
        std::string name;
        if (const auto* t = element.as_table()) {
          name = (*t)[entity_name_key(kind)].value_or(std::string());
        }
        doc.origins.push_back({kind, std::move(name), /*from_file=*/true});
      }
    }
    for (const auto& entity : entities) {
      if (entity.kind != kind) continue;
      const auto json = nlohmann::json::parse(entity.json, nullptr, /*allow_exceptions=*/false);
      toml::table table;
      std::string problem;
      if (json.is_discarded() || !json_to_toml(json, table, problem)) {
        return tl::unexpected("stored " + std::string(entity_kind_name(kind)) + " '" + entity.name +
                              "' is not valid: " + problem);
      }
      if (array == nullptr) {
        root.insert_or_assign(array_key, toml::array{});
        array = root[array_key].as_array();
      }
      array->push_back(std::move(table));
      doc.origins.push_back({kind, entity.name, /*from_file=*/false});
    }
  }
  if (!adaptive_policy.empty()) {
    const auto json = nlohmann::json::parse(adaptive_policy, nullptr, false);
    toml::table policy;
    std::string problem;
    if (json.is_discarded() || !json_to_toml(json, policy, problem)) {
      return tl::unexpected("the stored adaptive routing policy is not valid: " + problem);
    }
    root.insert_or_assign("adaptive_routing", std::move(policy));
  }
  std::ostringstream out;
  out << toml::toml_formatter(
      root, toml::toml_formatter::default_flags & ~toml::format_flags::allow_literal_strings);
  doc.text = out.str();
  doc.text.push_back('\n');
  return doc;
}

TracedError trace_error(const ConfigError& error, const std::vector<DocumentOrigin>& origins) {
  TracedError traced{std::nullopt, error.key, error.message};
  // "routes[3].targets[0].provider": the array, the element's index, and the rest.
  const auto open = error.key.find('[');
  const auto close = error.key.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return traced;
  const std::string array = error.key.substr(0, open);
  size_t index = 0;
  try {
    index = std::stoul(error.key.substr(open + 1, close - open - 1));
  } catch (const std::exception&) {
    return traced;
  }
  size_t seen = 0;
  for (const auto& origin : origins) {
    if (entity_array(origin.kind) != array) continue;
    if (seen++ != index) continue;
    traced.origin = origin;
    std::string rest = error.key.substr(close + 1);
    if (!rest.empty() && rest[0] == '.') rest.erase(0, 1);
    traced.field = rest;
    break;
  }
  return traced;
}

}  // namespace rolter
