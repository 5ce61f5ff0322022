#include "inspect/request_inspector.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#include "common/hash.h"
#include "inspect/token_ids.h"

namespace rolter {

static_assert(RequestInspector::kPadding == simdjson::SIMDJSON_PADDING,
              "kPadding must match the padding simdjson reads past the end of the input");

namespace od = simdjson::ondemand;
using simdjson::error_code;
using simdjson::SUCCESS;

// Returns the error of an error_code-valued expression, if any, from the enclosing function.
#define INSPECT_TRY(expr)                                                      \
  do {                                                                         \
    if (const error_code inspect_error_ = (expr); inspect_error_ != SUCCESS) { \
      return inspect_error_;                                                   \
    }                                                                          \
  } while (0)

std::string_view api_kind_name(ApiKind kind) {
  switch (kind) {
    case ApiKind::kChatCompletions:
      return "chat_completions";
    case ApiKind::kCompletions:
      return "completions";
    case ApiKind::kEmbeddings:
      return "embeddings";
    case ApiKind::kResponses:
      return "responses";
    case ApiKind::kMessages:
      return "messages";
  }
  return "unknown";
}

std::string_view inspect_error_code_name(InspectErrorCode code) {
  switch (code) {
    case InspectErrorCode::kInvalidJson:
      return "invalid_json";
    case InspectErrorCode::kInvalidUtf8:
      return "invalid_utf8";
    case InspectErrorCode::kTooDeep:
      return "too_deep";
    case InspectErrorCode::kNotAnObject:
      return "not_an_object";
    case InspectErrorCode::kMissingModel:
      return "missing_model";
    case InspectErrorCode::kModelNotString:
      return "model_not_string";
    case InspectErrorCode::kDuplicateModel:
      return "duplicate_model";
    case InspectErrorCode::kBadStream:
      return "bad_stream";
    case InspectErrorCode::kBadTokenIds:
      return "bad_token_ids";
    case InspectErrorCode::kBodyMismatch:
      return "body_mismatch";
    case InspectErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

namespace {

// Bodies up to this size keep their parser and copy buffers between requests; after a larger one
// the buffers are released, so one 32 MiB upload does not pin ~5x its size per worker forever.
constexpr size_t kRetainedCapacity = 1 << 20;

tl::unexpected<InspectError> fail(InspectErrorCode code, std::string message) {
  return tl::unexpected(InspectError{code, std::move(message)});
}

// Turns a simdjson error met while reading the body into the client-facing error.
tl::unexpected<InspectError> json_error(error_code error) {
  switch (error) {
    case simdjson::UTF8_ERROR:
      return fail(InspectErrorCode::kInvalidUtf8, "request body is not valid UTF-8");
    case simdjson::DEPTH_ERROR:
      return fail(InspectErrorCode::kTooDeep, "request body nests JSON deeper than " +
                                                  std::to_string(RequestInspector::kMaxDepth) +
                                                  " levels");
    case simdjson::MEMALLOC:
      return fail(InspectErrorCode::kInternal, "out of memory while parsing the request body");
    case simdjson::CAPACITY:
      return fail(InspectErrorCode::kInvalidJson, "request body is too large to parse");
    case simdjson::EMPTY:
      return fail(InspectErrorCode::kInvalidJson, "request body is empty, expected JSON");
    case simdjson::INCOMPLETE_ARRAY_OR_OBJECT:
      // simdjson checks that the root's closing bracket ends the input before walking, so an
      // unterminated object and trailing content after it look alike here.
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: unbalanced brackets or content after the JSON "
                  "value");
    case simdjson::TRAILING_CONTENT:
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: unexpected content after the JSON value");
    case simdjson::UNESCAPED_CHARS:
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: unescaped control character in a string");
    case simdjson::UNCLOSED_STRING:
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: unterminated string");
    case simdjson::STRING_ERROR:
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: invalid escape sequence in a string");
    case simdjson::NUMBER_ERROR:
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: invalid or out-of-range number");
    case simdjson::T_ATOM_ERROR:
    case simdjson::F_ATOM_ERROR:
    case simdjson::N_ATOM_ERROR:
      return fail(InspectErrorCode::kInvalidJson,
                  "request body is not valid JSON: invalid literal (expected true, false or null)");
    default:
      return fail(InspectErrorCode::kInvalidJson,
                  std::string("request body is not valid JSON: ") + simdjson::error_message(error));
  }
}

// raw_json_token() and raw_json() run up to the next structural character, whitespace included.
std::string_view trim_trailing_whitespace(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// Reads a string value. Without escapes the text is the raw token between its quotes, which
// spares copying it into the parser's string buffer.
error_code get_text(od::value& value, std::string_view& out) {
  const std::string_view raw = trim_trailing_whitespace(value.raw_json_token());
  if (raw.size() >= 2 && raw.front() == '"' && raw.find('\\') == std::string_view::npos) {
    od::raw_json_string consumed;
    INSPECT_TRY(value.get_raw_json_string().get(consumed));
    out = raw.substr(1, raw.size() - 2);
    return SUCCESS;
  }
  return value.get_string().get(out);
}

// RFC 8259 §6 number grammar over a raw token (trailing whitespace allowed):
//   -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
bool is_json_number(std::string_view token) {
  token = trim_trailing_whitespace(token);
  size_t i = 0;
  const size_t n = token.size();
  auto digit = [&](size_t at) { return at < n && token[at] >= '0' && token[at] <= '9'; };
  auto digits = [&] {
    if (!digit(i)) return false;
    while (digit(i)) ++i;
    return true;
  };
  if (i < n && token[i] == '-') ++i;
  if (i < n && token[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < n && token[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < n && (token[i] == 'e' || token[i] == 'E')) {
    ++i;
    if (i < n && (token[i] == '+' || token[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == n;
}

// A JSON number token that is a plain non-negative integer of at most 18 digits, else nullopt.
std::optional<uint64_t> unsigned_integer(std::string_view token) {
  while (!token.empty() && (token.back() == ' ' || token.back() == '\n' || token.back() == '\r' ||
                            token.back() == '\t')) {
    token.remove_suffix(1);
  }
  if (token.empty() || token.size() > 18) return std::nullopt;
  uint64_t n = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

// ---------------------------------------------------------------------------------------------
// First walk: validation. On-demand parsing is lazy: values nobody asks for are skipped by
// bracket counting, so "[1,,2]" in an unread field would pass unnoticed. Visiting every value once
// makes the inspector a validator, with our own depth bound (simdjson's max_depth is enforced only
// in its development-checks builds).

error_code validate_value(od::value& value, size_t depth) {
  if (depth > RequestInspector::kMaxDepth) return simdjson::DEPTH_ERROR;
  od::json_type type;
  INSPECT_TRY(value.type().get(type));
  switch (type) {
    case od::json_type::object: {
      od::object object;
      INSPECT_TRY(value.get_object().get(object));
      for (auto field_result : object) {
        od::field field;
        INSPECT_TRY(std::move(field_result).get(field));
        std::string_view key;  // unescaped only to validate its escapes
        INSPECT_TRY(field.unescaped_key().get(key));
        INSPECT_TRY(validate_value(field.value(), depth + 1));
      }
      return SUCCESS;
    }
    case od::json_type::array: {
      od::array array;
      INSPECT_TRY(value.get_array().get(array));
      for (auto element_result : array) {
        od::value element;
        INSPECT_TRY(std::move(element_result).get(element));
        INSPECT_TRY(validate_value(element, depth + 1));
      }
      return SUCCESS;
    }
    case od::json_type::string: {
      // Stage 1 has already checked UTF-8, control characters and the closing quote; only escape
      // sequences are left to check, and most strings have none. The string must be consumed
      // either way: simdjson skips an unread string followed by ':' as if it were a key, which
      // would let {"a":"b":"c"} through.
      if (value.raw_json_token().find('\\') == std::string_view::npos) {
        od::raw_json_string raw;
        return value.get_raw_json_string().get(raw);
      }
      std::string_view text;
      return value.get_string().get(text);
    }
    case od::json_type::number: {
      od::number number;
      const error_code e = value.get_number().get(number);
      // simdjson refuses numbers beyond double or 64-bit range (1e400, 30-digit ids), which JSON
      // allows; only a grammar error makes the body invalid.
      if (e == simdjson::NUMBER_ERROR && is_json_number(value.raw_json_token())) return SUCCESS;
      return e;
    }
    case od::json_type::boolean: {
      bool flag;
      return value.get_bool().get(flag);
    }
    case od::json_type::null: {
      bool is_null;
      INSPECT_TRY(value.is_null().get(is_null));
      return is_null ? SUCCESS : simdjson::N_ATOM_ERROR;
    }
  }
  return simdjson::TAPE_ERROR;
}

// `stream_options`: whether it asks for the usage chunk; every value is validated.
error_code read_stream_options(od::value& options, RequestFacts& facts) {
  od::object object;
  INSPECT_TRY(options.get_object().get(object));
  for (auto field_result : object) {
    od::field field;
    INSPECT_TRY(std::move(field_result).get(field));
    std::string_view key;
    INSPECT_TRY(field.unescaped_key().get(key));
    od::value& value = field.value();
    od::json_type type;
    INSPECT_TRY(value.type().get(type));
    if (key == "include_usage" && type == od::json_type::boolean) {
      bool include = false;
      INSPECT_TRY(value.get_bool().get(include));
      facts.stream_usage = include;
      continue;
    }
    INSPECT_TRY(validate_value(value, 3));
  }
  return SUCCESS;
}

// After the root value: anything but the end of input is trailing content.
error_code check_at_end(od::document& doc) {
  const char* location = nullptr;
  // current_location() answers OUT_OF_BOUNDS exactly when every token has been consumed.
  return doc.current_location().get(location) == simdjson::OUT_OF_BOUNDS
             ? SUCCESS
             : simdjson::TRAILING_CONTENT;
}

// Validates a root that is not an object, so "[1,]" is reported as invalid JSON rather than as
// the wrong shape.
error_code validate_non_object_root(od::document& doc, od::json_type type) {
  switch (type) {
    case od::json_type::array: {
      od::array array;
      INSPECT_TRY(doc.get_array().get(array));
      for (auto element_result : array) {
        od::value element;
        INSPECT_TRY(std::move(element_result).get(element));
        INSPECT_TRY(validate_value(element, 2));
      }
      return check_at_end(doc);
    }
    // The root scalar getters check for trailing content themselves.
    case od::json_type::string: {
      std::string_view text;
      INSPECT_TRY(doc.get_string().get(text));
      return check_at_end(doc);  // the root string getter does not look past the string
    }
    case od::json_type::number: {
      od::number number;
      return doc.get_number().get(number);
    }
    case od::json_type::boolean: {
      bool flag;
      return doc.get_bool().get(flag);
    }
    case od::json_type::null: {
      bool is_null = false;
      INSPECT_TRY(doc.is_null().get(is_null));
      return is_null ? SUCCESS : simdjson::N_ATOM_ERROR;
    }
    case od::json_type::object:
      break;
  }
  return simdjson::TAPE_ERROR;
}

// Validates the whole document and reads `model` and `stream`.
tl::expected<void, InspectError> first_walk(od::document& doc, const char* base,
                                            RequestFacts& facts) {
  od::json_type root_type;
  if (const error_code e = doc.type().get(root_type)) return json_error(e);
  if (root_type != od::json_type::object) {
    if (const error_code e = validate_non_object_root(doc, root_type)) return json_error(e);
    return fail(InspectErrorCode::kNotAnObject, "request body must be a JSON object");
  }
  od::object root;
  if (const error_code e = doc.get_object().get(root)) return json_error(e);

  // A shape problem is reported only once the whole body is known to be JSON: "not JSON" is the
  // more useful message when both apply.
  std::optional<InspectError> shape_error;
  auto note = [&](InspectErrorCode code, const char* message) {
    if (!shape_error) shape_error = InspectError{code, message};
  };
  bool model_seen = false;
  for (auto field_result : root) {
    od::field field;
    if (const error_code e = std::move(field_result).get(field)) return json_error(e);
    std::string_view key;
    if (const error_code e = field.unescaped_key().get(key)) return json_error(e);
    od::value& value = field.value();
    od::json_type type;
    if (const error_code e = value.type().get(type)) return json_error(e);

    if (key == "model" && !model_seen && type == od::json_type::string) {
      model_seen = true;
      std::string_view token;
      std::string_view model;
      token = value.raw_json_token();
      if (const error_code e = value.get_string().get(model)) return json_error(e);
      token = trim_trailing_whitespace(token);
      facts.model.assign(model);
      facts.model_token.assign(token);
      facts.model_token_offset = static_cast<size_t>(token.data() - base);
      facts.model_token_length = token.size();
      continue;
    }
    if (key == "model") {
      // Two `model` keys: rewriting one would leave the other for the upstream to pick up.
      note(model_seen ? InspectErrorCode::kDuplicateModel : InspectErrorCode::kModelNotString,
           model_seen ? "`model` appears more than once" : "`model` must be a string");
      model_seen = true;
    } else if (key == "stream" && type == od::json_type::boolean) {
      if (const error_code e = value.get_bool().get(facts.stream)) return json_error(e);
      continue;
    } else if (key == "stream" && type != od::json_type::null) {
      note(InspectErrorCode::kBadStream, "`stream` must be a boolean");
    } else if (type == od::json_type::number &&
               (key == "max_tokens" || key == "max_completion_tokens" ||
                key == "max_output_tokens")) {
      facts.output_cap = unsigned_integer(value.raw_json_token());
    } else if (key == "stream_options" && type == od::json_type::object) {
      if (const error_code e = read_stream_options(value, facts)) return json_error(e);
      continue;
    }
    if (const error_code e = validate_value(value, 2)) return json_error(e);
  }
  if (const error_code e = check_at_end(doc)) return json_error(e);
  if (shape_error) return tl::unexpected(std::move(*shape_error));
  if (!model_seen) return fail(InspectErrorCode::kMissingModel, "missing required field `model`");
  if (facts.model.empty()) {
    return fail(InspectErrorCode::kMissingModel, "`model` must not be empty");
  }
  return {};
}

// ---------------------------------------------------------------------------------------------
// Second walk: the conversation.

// What a digest frame holds. The digest hashes (tag, length, bytes) frames rather than the text,
// so a piece can never be confused with a neighbour or a piece of another kind.
enum class Tag : char {
  message = 'M',         // a new message / input item
  role = 'R',            // its role
  text = 'T',            // conversation text
  image = 'I',           // an image's identity: its URL or inline data (raw JSON token)
  tool_call_id = 'C',    // tool call id (chat tool_calls[].id, responses call_id, tool_use id)
  tool_name = 'N',       // tool call function name
  tool_arguments = 'A',  // tool call arguments (string, or raw JSON input)
  tool_result_id = 'U',  // the call a tool result answers
  token_ids = 'K',       // a token-array prompt, as little-endian uint32s
  raw = 'X',             // raw JSON of a part or value with no text of its own
  instructions = 'S',    // /v1/responses `instructions`
  previous = 'P',        // /v1/responses `previous_response_id`
};

// Accumulates the conversation text (bounded copy + full length) and its digest.
class Conversation {
 public:
  explicit Conversation(std::string& prompt) : prompt_(prompt) {}

  // Separates messages in the text so ["ab","c"] and ["a","bc"] differ in the prompt too.
  void begin_message() {
    if (messages_++ > 0) append_text(kMessageSeparator);
    text_parts_ = 0;
    frame(Tag::message, {});
  }
  void text(std::string_view text) {
    if (text_parts_++ > 0) append_text(kPartSeparator);
    append_text(text);
    frame(Tag::text, text);
  }
  void frame(Tag tag, std::string_view bytes) {
    frame_header(tag, bytes.size());
    hash_.update(bytes);
  }
  // A frame whose `length` bytes the caller feeds through update().
  void frame_header(Tag tag, uint64_t length) {
    char header[9];
    header[0] = static_cast<char>(tag);
    // Little-endian by hand so every gateway node computes the same digest.
    for (int i = 1; i < 9; ++i, length >>= 8) header[i] = static_cast<char>(length & 0xff);
    hash_.update(std::string_view(header, sizeof header));
  }
  void update(std::string_view bytes) { hash_.update(bytes); }

  size_t length() const { return length_; }
  uint64_t digest() const { return hash_.digest(); }

 private:
  // ASCII record and unit separators: never in ordinary text, one byte each.
  static constexpr std::string_view kMessageSeparator = "\x1e";
  static constexpr std::string_view kPartSeparator = "\x1f";

  void append_text(std::string_view text) {
    length_ += text.size();
    const size_t room = RouteContext::kPromptBound - prompt_.size();
    if (room > 0) prompt_.append(text.data(), std::min(room, text.size()));
  }

  std::string& prompt_;
  Hash64Stream hash_;
  size_t length_ = 0;
  size_t messages_ = 0;
  size_t text_parts_ = 0;
};

// Reads the conversation of one endpoint. Every error_code other than SUCCESS means "not the
// shape we expected" (the document was validated by the first walk). Fields are found with
// find_field_unordered(), which compares keys as written: a key spelled with escapes
// ("m\u0065ssages") is not found, and the body falls back to the raw-body digest.
class Extractor {
 public:
  Extractor(Conversation& conversation, std::vector<uint32_t>& tokens)
      : conv_(conversation), tokens_(tokens) {}

  bool saw_token_prompt() const { return saw_token_prompt_; }

  error_code run(ApiKind kind, od::object& root) {
    switch (kind) {
      case ApiKind::kChatCompletions:
        return chat(root);
      case ApiKind::kCompletions:
        return completions(root);
      case ApiKind::kEmbeddings:
        return embeddings(root);
      case ApiKind::kResponses:
        return responses(root);
      case ApiKind::kMessages:
        return anthropic(root);
    }
    return simdjson::INCORRECT_TYPE;
  }

 private:
  // ---- helpers

  static error_code type_of(od::value& value, od::json_type& type) {
    return value.type().get(type);
  }

  // Finds `key`; absent and null both leave found = false.
  static error_code find(od::object& object, std::string_view key, od::value& out, bool& found) {
    auto result = object.find_field_unordered(key);
    if (result.error() == simdjson::NO_SUCH_FIELD) {
      found = false;
      return SUCCESS;
    }
    INSPECT_TRY(std::move(result).get(out));
    od::json_type type;
    INSPECT_TRY(out.type().get(type));
    found = type != od::json_type::null;
    return SUCCESS;
  }

  // Finds an optional string field; present but not a string is a shape error.
  static error_code find_string(od::object& object, std::string_view key, std::string_view& out,
                                bool& found) {
    od::value value;
    INSPECT_TRY(find(object, key, value, found));
    if (!found) return SUCCESS;
    return get_text(value, out);
  }

  // Raw JSON of a value not yet consumed, for identities that need no unescaping (and would be
  // expensive to copy, like inline base64 images).
  static error_code raw_value(od::value& value, std::string_view& out) {
    od::json_type type;
    INSPECT_TRY(value.type().get(type));
    if (type == od::json_type::object) {
      od::object object;
      INSPECT_TRY(value.get_object().get(object));
      INSPECT_TRY(object.raw_json().get(out));
    } else if (type == od::json_type::array) {
      od::array array;
      INSPECT_TRY(value.get_array().get(array));
      INSPECT_TRY(array.raw_json().get(out));
    } else {
      out = value.raw_json_token();
    }
    out = trim_trailing_whitespace(out);
    return SUCCESS;
  }

  error_code frame_raw_value(Tag tag, od::value& value) {
    std::string_view raw;
    INSPECT_TRY(raw_value(value, raw));
    conv_.frame(tag, raw);
    return SUCCESS;
  }

  // A part whose type we have no rule for: its whole JSON is its identity. raw_json() rewinds to
  // the object's start, so it works after find_field_unordered() looked at "type".
  error_code frame_raw_object(od::object& object) {
    std::string_view raw;
    INSPECT_TRY(object.raw_json().get(raw));
    conv_.frame(Tag::raw, trim_trailing_whitespace(raw));
    return SUCCESS;
  }

  error_code string_field_frame(od::object& object, std::string_view key, Tag tag) {
    std::string_view text;
    bool found = false;
    INSPECT_TRY(find_string(object, key, text, found));
    if (found) conv_.frame(tag, text);
    return SUCCESS;
  }

  error_code text_field(od::object& object, std::string_view key) {
    std::string_view text;
    bool found = false;
    INSPECT_TRY(find_string(object, key, text, found));
    if (found) conv_.text(text);
    return SUCCESS;
  }

  error_code role(od::object& message) { return string_field_frame(message, "role", Tag::role); }

  // String or array of strings: each string is one message of text. Anything else in the array
  // (token ids, nested arrays) counts only by identity.
  error_code text_or_texts(od::value& value) {
    od::json_type type;
    INSPECT_TRY(type_of(value, type));
    if (type == od::json_type::string) {
      std::string_view text;
      INSPECT_TRY(get_text(value, text));
      conv_.begin_message();
      conv_.text(text);
      return SUCCESS;
    }
    if (type != od::json_type::array) return simdjson::INCORRECT_TYPE;
    od::array array;
    INSPECT_TRY(value.get_array().get(array));
    for (auto element_result : array) {
      od::value element;
      INSPECT_TRY(std::move(element_result).get(element));
      INSPECT_TRY(type_of(element, type));
      conv_.begin_message();
      if (type == od::json_type::string) {
        std::string_view text;
        INSPECT_TRY(get_text(element, text));
        conv_.text(text);
      } else {
        INSPECT_TRY(frame_raw_value(Tag::raw, element));
      }
    }
    return SUCCESS;
  }

  // ---- /v1/chat/completions

  error_code chat(od::object& root) {
    od::value messages;
    INSPECT_TRY(root.find_field_unordered("messages").get(messages));
    od::array array;
    INSPECT_TRY(messages.get_array().get(array));
    for (auto message_result : array) {
      od::value message;
      INSPECT_TRY(std::move(message_result).get(message));
      conv_.begin_message();
      INSPECT_TRY(chat_message(message));
    }
    return SUCCESS;
  }

  error_code chat_message(od::value& value) {
    od::object message;
    INSPECT_TRY(value.get_object().get(message));
    INSPECT_TRY(role(message));
    // A tool result names its call before its content.
    INSPECT_TRY(string_field_frame(message, "tool_call_id", Tag::tool_result_id));
    od::value field;
    bool found = false;
    INSPECT_TRY(find(message, "content", field, found));
    if (found) INSPECT_TRY(content(field, kChatParts, 0));
    INSPECT_TRY(find(message, "tool_calls", field, found));
    if (found) {
      od::array calls;
      INSPECT_TRY(field.get_array().get(calls));
      for (auto call_result : calls) {
        od::value call_value;
        INSPECT_TRY(std::move(call_result).get(call_value));
        od::object call;
        INSPECT_TRY(call_value.get_object().get(call));
        INSPECT_TRY(string_field_frame(call, "id", Tag::tool_call_id));
        od::value function;
        bool has_function = false;
        INSPECT_TRY(find(call, "function", function, has_function));
        if (has_function) {
          INSPECT_TRY(function_call(function));
        } else {
          INSPECT_TRY(frame_raw_object(call));  // a non-function tool call, e.g. "custom"
        }
      }
    }
    // The pre-tools form of a call.
    INSPECT_TRY(find(message, "function_call", field, found));
    if (found) INSPECT_TRY(function_call(field));
    return SUCCESS;
  }

  error_code function_call(od::value& value) {
    od::object function;
    INSPECT_TRY(value.get_object().get(function));
    INSPECT_TRY(string_field_frame(function, "name", Tag::tool_name));
    od::value arguments;
    bool found = false;
    INSPECT_TRY(find(function, "arguments", arguments, found));
    if (!found) return SUCCESS;
    od::json_type type;
    INSPECT_TRY(type_of(arguments, type));
    if (type == od::json_type::string) {
      std::string_view text;
      INSPECT_TRY(get_text(arguments, text));
      conv_.frame(Tag::tool_arguments, text);
      return SUCCESS;
    }
    return frame_raw_value(Tag::tool_arguments, arguments);
  }

  // ---- /v1/completions

  error_code completions(od::object& root) {
    od::value prompt;
    INSPECT_TRY(root.find_field_unordered("prompt").get(prompt));
    od::json_type type;
    INSPECT_TRY(type_of(prompt, type));
    if (type != od::json_type::array) return text_or_texts(prompt);
    // An array is either texts or one token-id prompt; decide on the first element.
    od::array array;
    INSPECT_TRY(prompt.get_array().get(array));
    bool tokens = false;
    bool first = true;
    for (auto element_result : array) {
      od::value element;
      INSPECT_TRY(std::move(element_result).get(element));
      INSPECT_TRY(type_of(element, type));
      if (first) tokens = type == od::json_type::number;
      first = false;
      if (tokens) {
        uint64_t id = 0;
        INSPECT_TRY(element.get_uint64().get(id));
        // Same bound as the header: token ids are uint32 everywhere downstream.
        if (id > UINT32_MAX) return simdjson::NUMBER_OUT_OF_RANGE;
        tokens_.push_back(static_cast<uint32_t>(id));
        continue;
      }
      conv_.begin_message();
      if (type == od::json_type::string) {
        std::string_view text;
        INSPECT_TRY(get_text(element, text));
        conv_.text(text);
      } else {
        INSPECT_TRY(frame_raw_value(Tag::raw, element));  // a batch of token-id prompts
      }
    }
    if (tokens) {
      saw_token_prompt_ = true;
      frame_tokens();
    }
    return SUCCESS;
  }

  // Hashes the ids as little-endian bytes through a small stack buffer (no allocation).
  void frame_tokens() {
    conv_.frame_header(Tag::token_ids, tokens_.size() * 4);
    char chunk[256];
    size_t used = 0;
    for (const uint32_t id : tokens_) {
      for (int shift = 0; shift < 32; shift += 8) chunk[used++] = static_cast<char>(id >> shift);
      if (used == sizeof chunk) {
        conv_.update(std::string_view(chunk, used));
        used = 0;
      }
    }
    conv_.update(std::string_view(chunk, used));
  }

  // ---- /v1/embeddings

  error_code embeddings(od::object& root) {
    od::value input;
    INSPECT_TRY(root.find_field_unordered("input").get(input));
    return text_or_texts(input);
  }

  // ---- /v1/responses

  error_code responses(od::object& root) {
    // Not conversation text (SPEC §2), but part of what the engine sees / continues from.
    INSPECT_TRY(string_field_frame(root, "instructions", Tag::instructions));
    INSPECT_TRY(string_field_frame(root, "previous_response_id", Tag::previous));
    od::value input;
    INSPECT_TRY(root.find_field_unordered("input").get(input));
    od::json_type type;
    INSPECT_TRY(type_of(input, type));
    if (type == od::json_type::string) {
      std::string_view text;
      INSPECT_TRY(get_text(input, text));
      conv_.begin_message();
      conv_.text(text);
      return SUCCESS;
    }
    od::array items;
    INSPECT_TRY(input.get_array().get(items));
    for (auto item_result : items) {
      od::value item_value;
      INSPECT_TRY(std::move(item_result).get(item_value));
      conv_.begin_message();
      INSPECT_TRY(responses_item(item_value));
    }
    return SUCCESS;
  }

  error_code responses_item(od::value& value) {
    od::object item;
    INSPECT_TRY(value.get_object().get(item));
    std::string_view item_type;
    bool typed = false;
    INSPECT_TRY(find_string(item, "type", item_type, typed));
    od::value field;
    bool found = false;
    if (!typed || item_type == "message") {
      INSPECT_TRY(role(item));
      INSPECT_TRY(find(item, "content", field, found));
      if (found) INSPECT_TRY(content(field, kResponsesParts, 0));
      return SUCCESS;
    }
    if (item_type == "function_call") {
      INSPECT_TRY(string_field_frame(item, "call_id", Tag::tool_call_id));
      INSPECT_TRY(string_field_frame(item, "name", Tag::tool_name));
      INSPECT_TRY(string_field_frame(item, "arguments", Tag::tool_arguments));
      return SUCCESS;
    }
    if (item_type == "function_call_output") {
      INSPECT_TRY(string_field_frame(item, "call_id", Tag::tool_result_id));
      INSPECT_TRY(find(item, "output", field, found));
      if (found) INSPECT_TRY(content(field, kResponsesParts, 0));
      return SUCCESS;
    }
    return frame_raw_object(item);  // reasoning, item_reference, built-in tool calls, ...
  }

  // ---- /v1/messages (Anthropic)

  error_code anthropic(od::object& root) {
    // `system` precedes the messages in the prompt wherever it sits in the body.
    od::value field;
    bool found = false;
    INSPECT_TRY(find(root, "system", field, found));
    if (found) {
      conv_.begin_message();
      conv_.frame(Tag::role, "system");
      INSPECT_TRY(content(field, kAnthropicBlocks, 0));
    }
    INSPECT_TRY(root.find_field_unordered("messages").get(field));
    od::array messages;
    INSPECT_TRY(field.get_array().get(messages));
    for (auto message_result : messages) {
      od::value message_value;
      INSPECT_TRY(std::move(message_result).get(message_value));
      od::object message;
      INSPECT_TRY(message_value.get_object().get(message));
      conv_.begin_message();
      INSPECT_TRY(role(message));
      od::value content;
      INSPECT_TRY(find(message, "content", content, found));
      if (found) INSPECT_TRY(this->content(content, kAnthropicBlocks, 0));
    }
    return SUCCESS;
  }

  // ---- message content, the same walk for every API

  // What one kind of content part adds to the conversation; `nesting` counts tool_result levels.
  using PartReader = error_code (Extractor::*)(od::object& part, size_t nesting);
  struct PartKind {
    std::string_view type;
    PartReader read;
  };

  // A string, or an array of parts (objects with a "type"). A part of a type the table does not
  // name is framed as raw JSON (audio, files, thinking blocks, and whatever comes next). The first
  // walk already bounded the JSON depth, so the tool_result recursion is bounded too.
  error_code content(od::value& value, std::span<const PartKind> kinds, size_t nesting) {
    od::json_type type;
    INSPECT_TRY(type_of(value, type));
    if (type == od::json_type::string) {
      std::string_view text;
      INSPECT_TRY(get_text(value, text));
      conv_.text(text);
      return SUCCESS;
    }
    if (type != od::json_type::array) return simdjson::INCORRECT_TYPE;
    od::array parts;
    INSPECT_TRY(value.get_array().get(parts));
    for (auto part_result : parts) {
      od::value part_value;
      INSPECT_TRY(std::move(part_result).get(part_value));
      od::object part;
      INSPECT_TRY(part_value.get_object().get(part));
      std::string_view part_type;
      bool typed = false;
      INSPECT_TRY(find_string(part, "type", part_type, typed));
      const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const PartKind& k) {
        return typed && k.type == part_type;
      });
      INSPECT_TRY(kind != kinds.end() ? (this->*kind->read)(part, nesting)
                                      : frame_raw_object(part));
    }
    return SUCCESS;
  }

  error_code text_part(od::object& part, size_t) { return text_field(part, "text"); }
  error_code refusal_part(od::object& part, size_t) { return text_field(part, "refusal"); }

  // Chat: {"image_url": {"url": ...}}, or the URL bare, as some clients send it.
  error_code chat_image(od::object& part, size_t) {
    od::value image;
    INSPECT_TRY(part.find_field_unordered("image_url").get(image));
    od::json_type type;
    INSPECT_TRY(type_of(image, type));
    if (type != od::json_type::object) return frame_raw_value(Tag::image, image);
    od::object image_object;
    INSPECT_TRY(image.get_object().get(image_object));
    od::value url;
    INSPECT_TRY(image_object.find_field_unordered("url").get(url));
    return frame_raw_value(Tag::image, url);
  }

  // Responses: an image_url or a file_id; a part with neither is framed whole.
  error_code responses_image(od::object& part, size_t) {
    od::value image;
    bool found = false;
    INSPECT_TRY(find(part, "image_url", image, found));
    if (!found) INSPECT_TRY(find(part, "file_id", image, found));
    return found ? frame_raw_value(Tag::image, image) : frame_raw_object(part);
  }

  // Anthropic: the source's url, data or file_id; a source with none is framed whole.
  error_code anthropic_image(od::object& block, size_t) {
    od::value field;
    INSPECT_TRY(block.find_field_unordered("source").get(field));
    od::object source;
    INSPECT_TRY(field.get_object().get(source));
    od::value identity;
    bool found = false;
    INSPECT_TRY(find(source, "url", identity, found));
    if (!found) INSPECT_TRY(find(source, "data", identity, found));
    if (!found) INSPECT_TRY(find(source, "file_id", identity, found));
    return found ? frame_raw_value(Tag::image, identity) : frame_raw_object(source);
  }

  error_code tool_use(od::object& block, size_t) {
    INSPECT_TRY(string_field_frame(block, "id", Tag::tool_call_id));
    INSPECT_TRY(string_field_frame(block, "name", Tag::tool_name));
    od::value input;
    bool found = false;
    INSPECT_TRY(find(block, "input", input, found));
    if (found) INSPECT_TRY(frame_raw_value(Tag::tool_arguments, input));
    return SUCCESS;
  }

  error_code tool_result(od::object& block, size_t nesting) {
    if (nesting >= RequestInspector::kMaxDepth) return simdjson::DEPTH_ERROR;
    INSPECT_TRY(string_field_frame(block, "tool_use_id", Tag::tool_result_id));
    od::value result;
    bool found = false;
    INSPECT_TRY(find(block, "content", result, found));
    if (found) INSPECT_TRY(content(result, kAnthropicBlocks, nesting + 1));
    return SUCCESS;
  }

  static constexpr PartKind kChatParts[] = {
      {"text", &Extractor::text_part},
      {"image_url", &Extractor::chat_image},
      {"refusal", &Extractor::refusal_part},
  };
  static constexpr PartKind kResponsesParts[] = {
      {"input_text", &Extractor::text_part},
      {"output_text", &Extractor::text_part},
      {"input_image", &Extractor::responses_image},
      {"refusal", &Extractor::refusal_part},
  };
  static constexpr PartKind kAnthropicBlocks[] = {
      {"text", &Extractor::text_part},
      {"image", &Extractor::anthropic_image},
      {"tool_use", &Extractor::tool_use},
      {"tool_result", &Extractor::tool_result},
  };

  Conversation& conv_;
  std::vector<uint32_t>& tokens_;
  bool saw_token_prompt_ = false;
};

}  // namespace

struct RequestInspector::Impl {
  od::parser parser;
  // Padded copy of a body that arrived without room after it; reused between requests.
  std::unique_ptr<char[]> copy;
  size_t copy_capacity = 0;
  // Body token ids when the header already supplied the request's ids.
  std::vector<uint32_t> body_tokens;

  Impl() {
    // max_depth only sizes simdjson's own bookkeeping (it checks depth only in development-checks
    // builds); the first walk enforces kMaxDepth itself. A failure here is retried by iterate().
    allocate_small();
  }

  void allocate_small() {
    const error_code ignored = parser.allocate(16 * 1024, kMaxDepth);
    (void)ignored;
  }

  const char* padded_copy(const char* data, size_t size) {
    if (copy_capacity < size + kPadding) {
      copy_capacity = size + kPadding;
      copy.reset(new char[copy_capacity]);
    }
    if (size > 0) std::memcpy(copy.get(), data, size);
    std::memset(copy.get() + size, ' ', kPadding);
    return copy.get();
  }

  void release_large_buffers() {
    if (parser.capacity() > kRetainedCapacity) allocate_small();
    if (copy_capacity > kRetainedCapacity) {
      copy.reset();
      copy_capacity = 0;
    }
    if (body_tokens.capacity() > kRetainedCapacity / sizeof(uint32_t)) {
      std::vector<uint32_t>().swap(body_tokens);
    }
  }
};

RequestInspector::RequestInspector() : impl_(std::make_unique<Impl>()) {}
RequestInspector::~RequestInspector() = default;

tl::expected<void, InspectError> RequestInspector::inspect(const char* data, size_t size,
                                                           size_t capacity, ApiKind kind,
                                                           const InspectHeaders& headers,
                                                           RequestFacts& facts) {
  facts.clear();
  facts.kind = kind;
  facts.session_key.assign(headers.session_id);
  if (headers.vllm_token_ids) {
    auto parsed = parse_token_ids_header(*headers.vllm_token_ids, facts.token_ids);
    if (!parsed) return parsed;
    facts.has_token_ids = true;
  }
  facts.body_hash = hash64(std::string_view(data, size));

  const char* json = data;
  size_t json_capacity = capacity;
  if (capacity < size || capacity - size < kPadding) {
    json = impl_->padded_copy(data, size);
    json_capacity = impl_->copy_capacity;
  }
  struct ReleaseOnExit {
    Impl& impl;
    ~ReleaseOnExit() { impl.release_large_buffers(); }
  } release{*impl_};

  od::document doc;
  if (const error_code e = impl_->parser.iterate(json, size, json_capacity).get(doc)) {
    return json_error(e);
  }
  if (auto ok = first_walk(doc, json, facts); !ok) return ok;

  // Second walk over the same structural index.
  if (facts.prompt.capacity() < RouteContext::kPromptBound) {
    facts.prompt.reserve(RouteContext::kPromptBound);
  }
  std::vector<uint32_t>& tokens = facts.has_token_ids ? impl_->body_tokens : facts.token_ids;
  tokens.clear();
  Conversation conversation(facts.prompt);
  Extractor extractor(conversation, tokens);
  doc.rewind();
  od::object root;
  error_code shape = doc.get_object().get(root);
  if (shape == SUCCESS) shape = extractor.run(kind, root);
  if (shape == SUCCESS) {
    facts.prompt_len = conversation.length();
    facts.prompt_digest = conversation.digest();
    facts.conversation_read = true;
    if (!facts.has_token_ids && extractor.saw_token_prompt()) facts.has_token_ids = true;
  } else {
    // Valid JSON of an unexpected shape: route on the raw body, let the upstream judge it.
    facts.prompt.clear();
    facts.prompt_len = 0;
    facts.prompt_digest = facts.body_hash;
    facts.conversation_read = false;
    tokens.clear();
  }
  return {};
}

}  // namespace rolter
