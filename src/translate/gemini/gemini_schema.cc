// JSON Schema (what OpenAI tools and json_schema response formats carry) as the OpenAPI 3.0
// subset Gemini's Schema object accepts. Gemini refuses a request with keys it does not know, so:
//   - kept: type, title, description, nullable, enum, items, properties, required, min/max
//     Items/Properties/Length, pattern, minimum, maximum, anyOf, propertyOrdering, default,
//     example, and format when it is one Gemini knows (date-time, enum, int32, int64, float,
//     double; it refuses "uri", "email" and the like);
//   - rewritten: a type list ["string", "null"] → type + nullable (several non-null types →
//     anyOf), oneOf → anyOf, a string const → enum [const], a local $ref ("#/$defs/X",
//     "#/definitions/X") → the schema it names, inlined;
//   - dropped: everything else (additionalProperties, $schema, $defs, strict, allOf, not,
//     exclusiveMinimum, ...): they only narrow what the model may produce, and Gemini has no
//     way to say it, so the model sees a slightly looser schema rather than a refused request.
// Inlining $refs is bounded (depth and node count): a recursive schema cannot be expressed
// without refs and is a 400.
#include <array>
#include <string_view>

#include "translate/gemini/gemini_request_parts.h"

namespace rolter::gemini {
namespace {

constexpr std::array<std::string_view, 18> kKeptKeys = {
    "title",    "description",   "nullable",         "enum",      "required",  "minItems",
    "maxItems", "minProperties", "maxProperties",    "minLength", "maxLength", "pattern",
    "minimum",  "maximum",       "propertyOrdering", "default",   "example",   "type"};
constexpr std::array<std::string_view, 6> kFormats = {"date-time", "enum",  "int32",
                                                      "int64",     "float", "double"};
// Deeper than any hand-written schema; a $ref cycle reaches it quickly.
constexpr int kMaxDepth = 32;
// Bounds what fan-out through $refs can expand to.
constexpr int kMaxNodes = 4096;

template <size_t N>
bool contains(const std::array<std::string_view, N>& set, std::string_view key) {
  for (auto k : set) {
    if (k == key) return true;
  }
  return false;
}

class Converter {
 public:
  Converter(const Json& root, const std::string& where) : root_(root), where_(where) {}

  tl::expected<Json, TranslateError> convert(const Json& schema, int depth) {
    if (!schema.is_object())
      return schema.is_boolean() ? Json::object() : fail("is not a schema object");
    if (depth > kMaxDepth || ++nodes_ > kMaxNodes)
      return fail("nests too deep (a recursive $ref?)");
    if (const std::string* ref = string_member(schema, "$ref")) return resolve(*ref, depth);
    Json out = Json::object();
    for (const auto& [key, value] : schema.items()) {
      if (key == "type" && value.is_array()) {
        type_list(value, out);
      } else if (key == "properties" && value.is_object()) {
        Json properties = Json::object();
        for (const auto& [name, property] : value.items()) {
          auto converted = convert(property, depth + 1);
          if (!converted) return converted;
          properties[name] = std::move(*converted);
        }
        out["properties"] = std::move(properties);
      } else if (key == "items" && value.is_object()) {
        auto converted = convert(value, depth + 1);
        if (!converted) return converted;
        out["items"] = std::move(*converted);
      } else if ((key == "anyOf" || key == "oneOf") && value.is_array()) {
        Json& any_of = out["anyOf"];
        if (!any_of.is_array()) any_of = Json::array();
        for (const auto& option : value) {
          auto converted = convert(option, depth + 1);
          if (!converted) return converted;
          any_of.push_back(std::move(*converted));
        }
      } else if (key == "const" && value.is_string()) {
        out["enum"] = Json::array({value});
      } else if (key == "format") {
        if (value.is_string() && contains(kFormats, value.get_ref<const std::string&>()))
          out[key] = value;
      } else if (contains(kKeptKeys, key)) {
        out[key] = value;
      }
    }
    return out;
  }

 private:
  tl::expected<Json, TranslateError> fail(const std::string& why) {
    return tl::unexpected(bad_request(where_, where_ + " " + why));
  }

  tl::expected<Json, TranslateError> resolve(std::string_view ref, int depth) {
    for (std::string_view prefix : {"#/$defs/", "#/definitions/"}) {
      if (!ref.starts_with(prefix)) continue;
      const Json* defs = object_member(root_, prefix == "#/$defs/" ? "$defs" : "definitions");
      const std::string name(ref.substr(prefix.size()));
      if (defs == nullptr) continue;
      const auto found = defs->find(name);
      if (found != defs->end()) return convert(*found, depth + 1);
    }
    return fail("has a $ref that is not a local definition: " + std::string(ref));
  }

  static void type_list(const Json& types, Json& out) {
    Json kept = Json::array();
    for (const auto& type : types) {
      if (type == "null")
        out["nullable"] = true;
      else if (type.is_string())
        kept.push_back(type);
    }
    if (kept.size() == 1) {
      out["type"] = kept[0];
    } else if (kept.size() > 1) {
      Json& any_of = out["anyOf"];
      if (!any_of.is_array()) any_of = Json::array();
      for (const auto& type : kept) any_of.push_back({{"type", type}});
    }
  }

  const Json& root_;
  const std::string& where_;
  int nodes_ = 0;
};

}  // namespace

tl::expected<Json, TranslateError> gemini_schema(const Json& schema, const std::string& where) {
  Converter converter(schema, where);
  return converter.convert(schema, 0);
}

}  // namespace rolter::gemini
