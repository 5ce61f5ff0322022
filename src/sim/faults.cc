#include "sim/faults.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "common/hash.h"

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text.empty() || text == "true" || text == "1" || text == "on") return true;
  if (text == "false" || text == "0" || text == "off") return false;
  return std::nullopt;
}

tl::expected<void, std::string> validate(const Faults& f) {
  if (!(f.error_rate >= 0 && f.error_rate <= 1)) {
    return tl::make_unexpected("error_rate must be within [0, 1]");
  }
  if (f.error_status < 400 || f.error_status > 599) {
    return tl::make_unexpected("error_status must be an HTTP error status (400..599)");
  }
  if (f.status_429_retry_after_s && *f.status_429_retry_after_s < 0) {
    return tl::make_unexpected("status_429_retry_after_s must be >= 0");
  }
  if (f.stall_first_byte_ms < 0) return tl::make_unexpected("stall_first_byte_ms must be >= 0");
  // At most 1000: a larger factor is a stall, which has its own fault.
  if (!(f.slowdown >= 1 && f.slowdown <= 1000)) {
    return tl::make_unexpected("slowdown must be within [1, 1000]");
  }
  if (f.tokenize_stall_ms < 0) return tl::make_unexpected("tokenize_stall_ms must be >= 0");
  if (f.decision_stall_ms < 0) return tl::make_unexpected("decision_stall_ms must be >= 0");
  if (f.decision_status != 0 && (f.decision_status < 100 || f.decision_status > 599)) {
    return tl::make_unexpected("decision_status must be 0 (off) or an HTTP status (100..599)");
  }
  if (f.max_model_len < 0) return tl::make_unexpected("max_model_len must be >= 0");
  if (f.drop_mid_stream_after_tokens && *f.drop_mid_stream_after_tokens < 0) {
    return tl::make_unexpected("drop_mid_stream_after_tokens must be >= 0");
  }
  return {};
}

// The boolean fault named `key`, or nullptr.
bool* bool_field(Faults& f, std::string_view key) {
  if (key == "refuse") return &f.refuse;
  if (key == "drop_with_reset") return &f.drop_with_reset;
  if (key == "kv_skip_seq") return &f.kv_skip_seq;
  if (key == "kv_garbage") return &f.kv_garbage;
  if (key == "kv_silent") return &f.kv_silent;
  if (key == "decision_garbage") return &f.decision_garbage;
  return nullptr;
}

// Reads an optional integer field that may be null. Returns false on a type error.
bool read_optional_int(const Json& json, const char* key, std::optional<int64_t>& out) {
  auto it = json.find(key);
  if (it == json.end() || it->is_null()) {
    out.reset();
    return true;
  }
  if (!it->is_number_integer()) return false;
  out = it->get<int64_t>();
  return true;
}

}  // namespace

Json faults_to_json(const Faults& f) {
  Json json = {
      {"refuse", f.refuse},
      {"error_rate", f.error_rate},
      {"error_status", f.error_status},
      {"status_429_retry_after_s", nullptr},
      {"stall_first_byte_ms", f.stall_first_byte_ms},
      {"tokenize_stall_ms", f.tokenize_stall_ms},
      {"decision_stall_ms", f.decision_stall_ms},
      {"decision_status", f.decision_status},
      {"decision_garbage", f.decision_garbage},
      {"slowdown", f.slowdown},
      {"drop_mid_stream_after_tokens", nullptr},
      {"drop_with_reset", f.drop_with_reset},
      {"kv_skip_seq", f.kv_skip_seq},
      {"kv_garbage", f.kv_garbage},
      {"kv_silent", f.kv_silent},
      {"max_model_len", f.max_model_len},
  };
  if (f.status_429_retry_after_s) json["status_429_retry_after_s"] = *f.status_429_retry_after_s;
  if (f.drop_mid_stream_after_tokens) {
    json["drop_mid_stream_after_tokens"] = *f.drop_mid_stream_after_tokens;
  }
  return json;
}

tl::expected<Faults, std::string> faults_from_json(const Json& json) {
  if (!json.is_object()) return tl::make_unexpected("faults must be a JSON object");
  Faults f;
  for (const auto& [key, value] : json.items()) {
    if (bool* flag = bool_field(f, key)) {
      if (!value.is_boolean()) return tl::make_unexpected(key + " must be a boolean");
      *flag = value.get<bool>();
    } else if (key == "error_rate") {
      if (!value.is_number()) return tl::make_unexpected("error_rate must be a number");
      f.error_rate = value.get<double>();
    } else if (key == "slowdown") {
      if (!value.is_number()) return tl::make_unexpected("slowdown must be a number");
      f.slowdown = value.get<double>();
    } else if (key == "error_status") {
      if (!value.is_number_integer()) return tl::make_unexpected("error_status must be an integer");
      f.error_status = value.get<int>();
    } else if (key == "stall_first_byte_ms") {
      if (!value.is_number_integer()) {
        return tl::make_unexpected("stall_first_byte_ms must be an integer");
      }
      f.stall_first_byte_ms = value.get<int64_t>();
    } else if (key == "tokenize_stall_ms") {
      if (!value.is_number_integer())
        return tl::make_unexpected("tokenize_stall_ms must be an integer");
      f.tokenize_stall_ms = value.get<int64_t>();
    } else if (key == "decision_stall_ms") {
      if (!value.is_number_integer()) {
        return tl::make_unexpected("decision_stall_ms must be an integer");
      }
      f.decision_stall_ms = value.get<int64_t>();
    } else if (key == "max_model_len") {
      if (!value.is_number_integer())
        return tl::make_unexpected("max_model_len must be an integer");
      f.max_model_len = value.get<int64_t>();
    } else if (key == "decision_status") {
      if (!value.is_number_integer()) {
        return tl::make_unexpected("decision_status must be an integer");
      }
      f.decision_status = value.get<int>();
    } else if (key == "status_429_retry_after_s") {
      if (!read_optional_int(json, "status_429_retry_after_s", f.status_429_retry_after_s)) {
        return tl::make_unexpected("status_429_retry_after_s must be an integer or null");
      }
    } else if (key == "drop_mid_stream_after_tokens") {
      if (!read_optional_int(json, "drop_mid_stream_after_tokens",
                             f.drop_mid_stream_after_tokens)) {
        return tl::make_unexpected("drop_mid_stream_after_tokens must be an integer or null");
      }
    } else {
      // A typo would otherwise silently inject no fault and make a test pass for the wrong reason.
      return tl::make_unexpected("unknown fault field: " + key);
    }
  }
  if (auto ok = validate(f); !ok) return tl::make_unexpected(ok.error());
  return f;
}

tl::expected<void, std::string> apply_fault_settings(std::string_view settings, Faults& f) {
  while (!settings.empty()) {
    const size_t comma = settings.find(',');
    std::string_view item = trim(settings.substr(0, comma));
    settings = comma == std::string_view::npos ? std::string_view() : settings.substr(comma + 1);
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    const std::string_view key = trim(item.substr(0, eq));
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view() : trim(item.substr(eq + 1));
    const std::string bad = "bad fault setting '" + std::string(item) + "'";

    if (bool* flag = bool_field(f, key == "reset" ? "drop_with_reset" : key)) {
      auto b = parse_bool(value);
      if (!b) return tl::make_unexpected(bad);
      *flag = *b;
    } else if (key == "error_rate") {
      auto v = parse_number<double>(value);
      if (!v) return tl::make_unexpected(bad);
      f.error_rate = *v;
    } else if (key == "slowdown") {
      auto v = parse_number<double>(value);
      if (!v) return tl::make_unexpected(bad);
      f.slowdown = *v;
    } else if (key == "error_status") {
      auto v = parse_number<int>(value);
      if (!v) return tl::make_unexpected(bad);
      f.error_status = *v;
    } else if (key == "status_429_retry_after_s" || key == "429") {
      if (value == "null" || value == "off") {
        f.status_429_retry_after_s.reset();
        continue;
      }
      auto v = parse_number<int64_t>(value.empty() ? std::string_view("1") : value);
      if (!v) return tl::make_unexpected(bad);
      f.status_429_retry_after_s = *v;
    } else if (key == "stall_first_byte_ms" || key == "stall") {
      auto v = parse_number<int64_t>(value);
      if (!v) return tl::make_unexpected(bad);
      f.stall_first_byte_ms = *v;
    } else if (key == "tokenize_stall_ms" || key == "tokenize_stall") {
      auto v = parse_number<int64_t>(value);
      if (!v) return tl::make_unexpected(bad);
      f.tokenize_stall_ms = *v;
    } else if (key == "decision_stall_ms" || key == "decision_stall") {
      auto v = parse_number<int64_t>(value);
      if (!v) return tl::make_unexpected(bad);
      f.decision_stall_ms = *v;
    } else if (key == "max_model_len") {
      auto v = parse_number<int64_t>(value);
      if (!v) return tl::make_unexpected(bad);
      f.max_model_len = *v;
    } else if (key == "decision_status") {
      auto v = parse_number<int>(value);
      if (!v) return tl::make_unexpected(bad);
      f.decision_status = *v;
    } else if (key == "drop_mid_stream_after_tokens" || key == "drop") {
      if (value == "null" || value == "off") {
        f.drop_mid_stream_after_tokens.reset();
        continue;
      }
      auto v = parse_number<int64_t>(value);
      if (!v) return tl::make_unexpected(bad);
      f.drop_mid_stream_after_tokens = *v;
    } else {
      return tl::make_unexpected("unknown fault setting '" + std::string(key) + "'");
    }
  }
  return validate(f);
}

tl::expected<FaultFlag, std::string> parse_fault_flag(std::string_view flag) {
  FaultFlag out;
  std::string rest;
  std::string_view remaining = flag;
  while (!remaining.empty()) {
    const size_t comma = remaining.find(',');
    std::string_view item = trim(remaining.substr(0, comma));
    remaining = comma == std::string_view::npos ? std::string_view() : remaining.substr(comma + 1);
    if (item.rfind("engine=", 0) == 0) {
      std::string_view which = trim(item.substr(7));
      if (which == "all" || which == "*") {
        out.engine.reset();
      } else if (auto index = parse_number<size_t>(which)) {
        out.engine = *index;
      } else {
        return tl::make_unexpected("bad engine in fault flag '" + std::string(flag) + "'");
      }
      continue;
    }
    if (!rest.empty()) rest += ',';
    rest += item;
  }
  // Check the settings now so a typo fails at start-up with the flag quoted.
  Faults scratch;
  if (auto ok = apply_fault_settings(rest, scratch); !ok) {
    return tl::make_unexpected(ok.error() + " in --fault '" + std::string(flag) + "'");
  }
  out.settings = std::move(rest);
  return out;
}

FaultDecision decide_faults(const Faults& f, uint64_t seed, size_t engine_index,
                            uint64_t request_seq) {
  FaultDecision d;
  d.stall = std::chrono::milliseconds(f.stall_first_byte_ms);
  d.slowdown = f.slowdown;
  d.drop_after_tokens = f.drop_mid_stream_after_tokens;
  d.drop_with_reset = f.drop_with_reset;
  if (f.status_429_retry_after_s) {
    d.action = FaultAction::kRateLimit;
    d.status = 429;
    d.retry_after_s = *f.status_429_retry_after_s;
    return d;
  }
  if (f.error_rate > 0) {
    // A hash of (seed, engine, request number) rather than a shared generator: whether request k
    // fails does not depend on how many other requests or engines drew numbers before it.
    const uint64_t h = hash_combine(hash_combine(seed, 0x5eed0000ULL + engine_index), request_seq);
    const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // uniform in [0, 1)
    if (u < f.error_rate) {
      d.action = FaultAction::kError;
      d.status = f.error_status;
    }
  }
  return d;
}

}  // namespace rolter::sim
