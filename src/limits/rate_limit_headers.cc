#include "limits/rate_limit_headers.h"

#include <algorithm>
#include <charconv>

namespace rolter {
namespace {

// A fixed buffer that values are written into; text past its end is dropped (never for the
// bounded values written here: 8 items of at most ~110 characters).
class Text {
 public:
  void put(std::string_view s) {
    const size_t n = std::min(s.size(), sizeof(buf_) - size_);
    std::copy_n(s.data(), n, buf_ + size_);
    size_ += n;
  }
  void put(char c) { put(std::string_view(&c, 1)); }
  void put_number(uint64_t v) {
    char digits[24];
    put(std::string_view(digits, std::to_chars(digits, digits + sizeof digits, v).ptr - digits));
  }
  void clear() { size_ = 0; }
  std::string_view view() const { return {buf_, size_}; }

 private:
  char buf_[1024];
  size_t size_ = 0;
};

uint64_t ceil_seconds(int64_t ms) { return ms <= 0 ? 0 : static_cast<uint64_t>((ms + 999) / 1000); }

// One policy item: one limit of one rule.
struct Item {
  const LimitReading* reading = nullptr;
  bool tokens = false;
  uint64_t quota = 0;
  uint64_t remaining = 0;
  int64_t reset_ms = 0;
  double fraction() const { return static_cast<double>(remaining) / static_cast<double>(quota); }
};

size_t collect_items(const Admission& a, Item (&items)[2 * Admission::kMaxReadings]) {
  size_t n = 0;
  for (size_t i = 0; i < a.reading_count; ++i) {
    const LimitReading& r = a.readings[i];
    if (r.request_quota != 0) {
      items[n++] = {&r, false, r.request_quota, r.requests_remaining, r.requests_reset_ms};
    }
    if (r.token_quota != 0)
      items[n++] = {&r, true, r.token_quota, r.tokens_remaining, r.tokens_reset_ms};
  }
  // An insertion sort, stable: std::stable_sort would allocate its buffer.
  for (size_t i = 1; i < n; ++i) {
    const Item item = items[i];
    size_t j = i;
    for (; j > 0 && items[j - 1].fraction() > item.fraction(); --j) items[j] = items[j - 1];
    items[j] = item;
  }
  return n;
}

// "key-rpm", "team-route-tpm": the id's kind (letters, digits, '-', '_' only) and the limit.
void put_name(Text& t, const Item& item) {
  const LimitRule* rule = item.reading->rule;
  std::string_view kind = rule == nullptr ? "limit" : std::string_view(rule->id);
  kind = kind.substr(0, std::min(kind.find(':'), size_t{32}));
  t.put('"');
  for (char c : kind) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (ok) t.put(c);
  }
  if (rule != nullptr && !rule->route_glob.empty()) t.put("-route");
  t.put(item.tokens ? "-tpm\"" : "-rpm\"");
}

uint64_t window_seconds(const Item& item) {
  const LimitRule* rule = item.reading->rule;
  if (item.tokens || rule == nullptr || rule->spec.rpm == 0) return 60;
  const uint64_t w = (item.quota * 60 + rule->spec.rpm - 1) / rule->spec.rpm;
  return std::max<uint64_t>(w, 1);
}

void emit_ietf(const Item* items, size_t n, Text& t,
               FunctionRef<void(std::string_view, std::string_view)> emit) {
  t.clear();
  for (size_t i = 0; i < n; ++i) {
    if (i != 0) t.put(", ");
    put_name(t, items[i]);
    t.put(";q=");
    t.put_number(items[i].quota);
    t.put(";w=");
    t.put_number(window_seconds(items[i]));
  }
  emit("RateLimit-Policy", t.view());
  t.clear();
  for (size_t i = 0; i < n; ++i) {
    if (i != 0) t.put(", ");
    put_name(t, items[i]);
    t.put(";r=");
    t.put_number(items[i].remaining);
    t.put(";t=");
    t.put_number(ceil_seconds(items[i].reset_ms));
  }
  emit("RateLimit", t.view());
}

// The x-ratelimit-*-{requests,tokens} triple from the most restrictive item of that kind.
void emit_openai(const Item* items, size_t n, bool tokens, Text& t,
                 FunctionRef<void(std::string_view, std::string_view)> emit) {
  const Item* best =
      std::find_if(items, items + n, [&](const Item& i) { return i.tokens == tokens; });
  if (best == items + n) return;
  t.clear();
  t.put_number(best->quota);
  emit(tokens ? "x-ratelimit-limit-tokens" : "x-ratelimit-limit-requests", t.view());
  t.clear();
  t.put_number(best->remaining);
  emit(tokens ? "x-ratelimit-remaining-tokens" : "x-ratelimit-remaining-requests", t.view());
  emit(tokens ? "x-ratelimit-reset-tokens" : "x-ratelimit-reset-requests",
       format_reset(best->reset_ms).view());
}

void put_go_part(DurationText& d, uint64_t v, char unit) {
  char* end = std::to_chars(d.text + d.size, d.text + sizeof(d.text), v).ptr;
  *end++ = unit;
  d.size = static_cast<uint8_t>(end - d.text);
}

}  // namespace

DurationText format_reset(int64_t ms) {
  DurationText d;
  if (ms <= 0) {
    d.text[0] = '0';
    d.text[1] = 's';
    d.size = 2;
    return d;
  }
  const auto total = static_cast<uint64_t>(ms);
  if (total < 1000) {
    put_go_part(d, total, 'm');
    d.text[d.size++] = 's';
    return d;
  }
  const uint64_t hours = total / 3'600'000;
  const uint64_t minutes = total / 60'000 % 60;
  const uint64_t seconds = total / 1000 % 60;
  const uint64_t millis = total % 1000;
  if (hours != 0) put_go_part(d, hours, 'h');
  if (hours != 0 || minutes != 0) put_go_part(d, minutes, 'm');
  char* p = std::to_chars(d.text + d.size, d.text + sizeof(d.text), seconds).ptr;
  if (millis != 0) {  // Go trims the fraction's trailing zeros: 1.5s, 1.25s, 1.125s
    *p++ = '.';
    *p++ = static_cast<char>('0' + millis / 100);
    if (millis % 100 != 0) *p++ = static_cast<char>('0' + millis / 10 % 10);
    if (millis % 10 != 0) *p++ = static_cast<char>('0' + millis % 10);
  }
  *p++ = 's';
  d.size = static_cast<uint8_t>(p - d.text);
  return d;
}

void visit_rate_limit_headers(const Admission& admission,
                              FunctionRef<void(std::string_view, std::string_view)> emit) {
  Item items[2 * Admission::kMaxReadings];
  const size_t n = collect_items(admission, items);
  Text t;
  if (n != 0) {
    emit_ietf(items, n, t, emit);
    emit_openai(items, n, false, t, emit);
    emit_openai(items, n, true, t, emit);
  }
  if (!admission.admitted()) {
    t.clear();
    t.put_number(std::max<uint64_t>(1, ceil_seconds(admission.retry_after_ms)));
    emit("Retry-After", t.view());
  }
}

void append_rate_limit_headers(const Admission& admission, std::string& out) {
  visit_rate_limit_headers(admission, [&out](std::string_view name, std::string_view value) {
    out.append(name);
    out.append(": ");
    out.append(value);
    out.append("\r\n");
  });
}

}  // namespace rolter
