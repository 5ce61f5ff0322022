// Conversions between rolter.toml tables and the admin API's JSON, key for key (SPEC §10: the
// JSON of a provider, route or provider group mirrors its rolter.toml table).
//
// TOML tables become JSON objects, arrays stay arrays, strings, booleans and numbers keep their
// values; dates (never used by rolter.toml) become strings. The other way, JSON null members are
// left out (TOML has no null), and a floating-point number with an integral value becomes an
// integer so that `"max_loras": 8.0` reads like `max_loras = 8` (every float key of rolter.toml
// also takes an integer).
//
// Included only by the control plane's document code: both libraries' headers are heavy.
//
// Thread-safety: pure functions.
#pragma once

#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <string>

namespace rolter {

nlohmann::json toml_to_json(const toml::table& table);

// `object` must be a JSON object. Returns false, with `problem` naming the member, when a value
// cannot be written as TOML (e.g. an array mixing tables and values).
bool json_to_toml(const nlohmann::json& object, toml::table& out, std::string& problem);

}  // namespace rolter
