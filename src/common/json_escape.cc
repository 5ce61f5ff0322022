#include "common/json_escape.h"

#include <cstdint>

namespace rolter {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// The escape of one ASCII byte that JSON does not take as it is (a quote, a backslash, a control).
void append_escape(std::string& out, unsigned char byte) {
  switch (byte) {
    case '"':
      out.append("\\\"");
      break;
    case '\\':
      out.append("\\\\");
      break;
    case '\b':
      out.append("\\b");
      break;
    case '\f':
      out.append("\\f");
      break;
    case '\n':
      out.append("\\n");
      break;
    case '\r':
      out.append("\\r");
      break;
    case '\t':
      out.append("\\t");
      break;
    default:
      // RFC 8259 §7: every other control character must be written as \u00XX.
      out.append("\\u00");
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
  }
}

bool needs_escape(unsigned char byte) { return byte < 0x20 || byte == '"' || byte == '\\'; }

// The length of the well-formed UTF-8 sequence that starts text[i] (a lead byte >= 0x80), or 0
// when there is none (RFC 3629 §4: the second byte's range depends on the lead byte).
size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto at = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = at(i);
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xbf;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3;
    if (lead == 0xe0) low = 0xa0;   // no overlong forms
    if (lead == 0xed) high = 0x9f;  // no surrogates
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4;
    if (lead == 0xf0) low = 0x90;   // no overlong forms
    if (lead == 0xf4) high = 0x8f;  // nothing above U+10FFFF
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  if (at(i + 1) < low || at(i + 1) > high) return 0;
  for (size_t k = 2; k < length; ++k) {
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  }
  return length;
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out.push_back('"');
  size_t run = 0;  // start of the bytes not yet copied; copied in bulk up to the next escape
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (!needs_escape(byte)) continue;
    out.append(text.data() + run, i - run);
    run = i + 1;
    append_escape(out, byte);
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
}

void append_untrusted_json_string(std::string& out, std::string_view text) {
  out.reserve(out.size() + text.size() + 2);
  out.push_back('"');
  size_t run = 0;
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      if (needs_escape(byte)) {
        out.append(text.data() + run, i - run);
        append_escape(out, byte);
        run = i + 1;
      }
      ++i;
      continue;
    }
    if (const size_t length = utf8_sequence_length(text, i); length > 0) {
      i += length;
      continue;
    }
    out.append(text.data() + run, i - run);
    out.append("\\ufffd");
    run = ++i;
  }
  out.append(text.data() + run, text.size() - run);
  out.push_back('"');
}

}  // namespace rolter
