#include "sim/decision_service.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <vector>

namespace rolter::sim {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 13> kHardKeywords = {
    "prove",     "proof", "theorem", "derive",       "code", "function", "implement",
    "algorithm", "debug", "reason",  "step by step", "math", "equation"};
constexpr std::array<std::string_view, 5> kCapableWords = {"reasoning", "math", "code", "complex",
                                                           "large"};
constexpr std::array<std::string_view, 4> kLightWords = {"fast", "simple", "small", "cheap"};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

template <size_t N>
int count_words(std::string_view lowered, const std::array<std::string_view, N>& words) {
  int n = 0;
  for (std::string_view w : words) {
    if (lowered.find(w) != std::string_view::npos) ++n;
  }
  return n;
}

// Strings, arrays of them, and the text of content parts ({"type":"text","text":...}) or message
// items ({"content": ...}), separated by newlines.
void append_text(const Json& value, std::string& out) {
  if (value.is_string()) {
    out += value.get_ref<const std::string&>();
    out.push_back('\n');
  } else if (value.is_array()) {
    for (const Json& element : value) append_text(element, out);
  } else if (value.is_object()) {
    if (auto it = value.find("text"); it != value.end()) append_text(*it, out);
    if (auto it = value.find("content"); it != value.end()) append_text(*it, out);
  }
}

struct Ranked {
  std::string model;
  int capability = 0;
  double size = 0;
};

}  // namespace

std::string decision_state_text(const Json& state) {
  std::string text;
  if (state.is_string()) return state.get<std::string>();
  if (!state.is_object()) return text;
  for (const char* field : {"system", "instructions", "messages", "prompt", "input"}) {
    if (auto it = state.find(field); it != state.end()) append_text(*it, text);
  }
  return text;
}

int difficulty(std::string_view text) {
  return count_words(lower(text), kHardKeywords) + (text.size() > kLongPrompt ? 1 : 0);
}

double model_size_hint(std::string_view model) {
  for (size_t i = 1; i < model.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(model[i])) != 'b') continue;
    const bool word_ends =
        i + 1 == model.size() || !std::isalnum(static_cast<unsigned char>(model[i + 1]));
    if (!word_ends || !std::isdigit(static_cast<unsigned char>(model[i - 1]))) continue;
    size_t start = i;
    while (start > 0 && (std::isdigit(static_cast<unsigned char>(model[start - 1])) ||
                         model[start - 1] == '.')) {
      --start;
    }
    double size = 0;
    auto [ptr, ec] = std::from_chars(model.data() + start, model.data() + i, size);
    if (ec == std::errc() && ptr == model.data() + i) return size;
  }
  return 0;
}

tl::expected<Json, std::string> answer_systemone(std::string_view request) {
  const Json body = Json::parse(request, nullptr, /*allow_exceptions=*/false);
  if (!body.is_object()) return tl::make_unexpected("the body must be a JSON object");
  const Json* criteria = nullptr;
  if (auto q = body.find("questions"); q != body.end() && q->is_object()) {
    if (auto s = q->find("model_selection"); s != q->end() && s->is_object()) {
      if (auto c = s->find("criteria"); c != s->end() && c->is_object()) criteria = &*c;
    }
  }
  if (criteria == nullptr || criteria->empty()) {
    return tl::make_unexpected("questions.model_selection.criteria must be a non-empty object");
  }
  std::vector<Ranked> models;
  for (const auto& [model, description] : criteria->items()) {
    Ranked r{.model = model, .size = model_size_hint(model)};
    if (description.is_string()) {
      const std::string d = lower(description.get_ref<const std::string&>());
      r.capability = count_words(d, kCapableWords) - count_words(d, kLightWords);
    }
    models.push_back(std::move(r));
  }
  // Stable: equal models keep the criteria's iteration order (by name: a JSON object's keys are
  // sorted here).
  std::stable_sort(models.begin(), models.end(), [](const Ranked& a, const Ranked& b) {
    if (a.capability != b.capability) return a.capability < b.capability;
    return a.size < b.size;
  });

  const auto state = body.find("state");
  const int signals = difficulty(state == body.end() ? std::string() : decision_state_text(*state));
  const std::string& choice = signals == 0 ? models.front().model : models.back().model;
  Json probabilities = Json::object();
  const double rest = models.size() == 1 ? 0 : (1 - kChoiceProbability) / (models.size() - 1);
  for (const Ranked& r : models) {
    probabilities[r.model] =
        r.model == choice ? (models.size() == 1 ? 1.0 : kChoiceProbability) : rest;
  }
  const double confidence = signals == 1 ? kUnsureConfidence : kClearConfidence;
  return Json{
      {"answers",
       {{"model_selection",
         {{"choice", choice}, {"probabilities", probabilities}, {"confidence", confidence}}}}}};
}

}  // namespace rolter::sim
