// Chat-completions messages → Anthropic system + content blocks (SPEC §16).
//
// system/developer messages become the top-level `system` wherever they stand (Anthropic has no
// mid-conversation system turn). Tool results become tool_result blocks in a user turn, and
// consecutive turns of one role merge, because Anthropic requires alternating roles. Empty text
// is left out: Anthropic refuses empty text blocks, and an assistant turn that only calls tools
// often carries content "". A message's `name` is ignored: Anthropic has no participant names.
#include <string>

#include "translate/anthropic/conversation.h"

namespace rolter::anthropic {

namespace {

using Result = tl::expected<void, TranslateError>;

void append_turn(Json& turns, const char* role, Json blocks) {
  if (blocks.empty()) return;
  if (!turns.empty() && turns.back()["role"] == role) {
    for (auto& block : blocks) turns.back()["content"].push_back(std::move(block));
    return;
  }
  turns.push_back(Json{{"role", role}, {"content", std::move(blocks)}});
}

// An image_url part's URL as an Anthropic image source.
tl::expected<Json, TranslateError> image_source(const Json& part, const std::string& path) {
  const Json* image = member(part, "image_url");
  const std::string* url = image != nullptr && image->is_string()
                               ? image->get_ptr<const std::string*>()
                               : (image != nullptr ? string_member(*image, "url") : nullptr);
  if (url == nullptr)
    return tl::unexpected(bad_field(path + ".image_url", path + ".image_url.url must be a string"));
  if (url->rfind("http://", 0) == 0 || url->rfind("https://", 0) == 0) {
    return Json{{"type", "url"}, {"url", *url}};
  }
  // data:<media type>;base64,<data>
  const size_t marker = url->find(";base64,");
  if (url->rfind("data:", 0) != 0 || marker == std::string::npos || marker <= 5) {
    return tl::unexpected(
        bad_field(path + ".image_url", path + ".image_url must be an http(s) or base64 data URL"));
  }
  return Json{{"type", "base64"},
              {"media_type", url->substr(5, marker - 5)},
              {"data", url->substr(marker + 8)}};
}

// A message's content (string or parts) as Anthropic blocks; image parts only when `images`.
tl::expected<Json, TranslateError> content_blocks(const Json& message, const std::string& path,
                                                  bool images) {
  Json blocks = Json::array();
  const Json* content = member(message, "content");
  if (content == nullptr) return blocks;
  if (content->is_string()) {
    if (!content->get_ref<const std::string&>().empty()) {
      blocks.push_back(Json{{"type", "text"}, {"text", *content}});
    }
    return blocks;
  }
  if (!content->is_array()) {
    return tl::unexpected(
        bad_field(path + ".content", path + ".content must be a string or an array"));
  }
  for (size_t i = 0; i < content->size(); ++i) {
    const Json& part = (*content)[i];
    const std::string part_path = at(path + ".content", i);
    const std::string* type = string_member(part, "type");
    const std::string* text = string_member(part, "text");
    if (type != nullptr && (*type == "text" || *type == "refusal") && text == nullptr) {
      text = string_member(part, "refusal");
    }
    if (type != nullptr && (*type == "text" || *type == "refusal") && text != nullptr) {
      if (!text->empty()) blocks.push_back(Json{{"type", "text"}, {"text", *text}});
    } else if (type != nullptr && *type == "image_url" && images) {
      auto source = image_source(part, part_path);
      if (!source) return tl::unexpected(source.error());
      blocks.push_back(Json{{"type", "image"}, {"source", std::move(*source)}});
    } else {
      const std::string field = part_path + ".type";
      return tl::unexpected(bad_field(field, field + " \"" + (type ? *type : "") +
                                                 "\" cannot be translated to Anthropic Messages"));
    }
  }
  return blocks;
}

// One tool call's arguments: a JSON object as text ("" means no arguments).
tl::expected<Json, TranslateError> tool_input(const Json& call, const std::string& path) {
  const Json* function = member(call, "function");
  const std::string* arguments = function ? string_member(*function, "arguments") : nullptr;
  const std::string field = path + ".function.arguments";
  if (arguments == nullptr) return tl::unexpected(bad_field(field, field + " must be a string"));
  if (arguments->find_first_not_of(" \t\r\n") == std::string::npos) return Json::object();
  Json input;
  if (!parse_json(*arguments, input) || !input.is_object()) {
    return tl::unexpected(bad_field(field, field + " is not a JSON object"));
  }
  return input;
}

Result add_tool_calls(const Json& message, const std::string& path, Json& blocks) {
  const Json* calls = member(message, "tool_calls");
  if (calls == nullptr) return {};
  if (!calls->is_array())
    return tl::unexpected(bad_field(path + ".tool_calls", path + ".tool_calls must be an array"));
  for (size_t i = 0; i < calls->size(); ++i) {
    const Json& call = (*calls)[i];
    const std::string call_path = at(path + ".tool_calls", i);
    const std::string* id = string_member(call, "id");
    const Json* function = member(call, "function");
    const std::string* name = function ? string_member(*function, "name") : nullptr;
    if (id == nullptr || name == nullptr) {
      return tl::unexpected(bad_field(call_path, call_path + " needs an id and a function name"));
    }
    auto input = tool_input(call, call_path);
    if (!input) return tl::unexpected(input.error());
    blocks.push_back(
        Json{{"type", "tool_use"}, {"id", *id}, {"name", *name}, {"input", std::move(*input)}});
  }
  return {};
}

Result add_system(const Json& message, const std::string& path, Json& system) {
  auto blocks = content_blocks(message, path, /*images=*/false);
  if (!blocks) return tl::unexpected(blocks.error());
  for (auto& block : *blocks) system.push_back(std::move(block));
  return {};
}

tl::expected<Json, TranslateError> tool_result(const Json& message, const std::string& path) {
  const std::string* id = string_member(message, "tool_call_id");
  if (id == nullptr)
    return tl::unexpected(
        bad_field(path + ".tool_call_id", path + ".tool_call_id must be a string"));
  Json result{{"type", "tool_result"}, {"tool_use_id", *id}};
  const Json* content = member(message, "content");
  if (content != nullptr && content->is_string()) {
    result["content"] = *content;
    return result;
  }
  auto blocks = content_blocks(message, path, /*images=*/false);
  if (!blocks) return tl::unexpected(blocks.error());
  result["content"] = std::move(*blocks);
  return result;
}

Result add_message(const Json& message, const std::string& path, MessagesConversation& out) {
  const std::string* role = string_member(message, "role");
  if (role == nullptr)
    return tl::unexpected(bad_field(path + ".role", path + ".role must be a string"));
  if (*role == "system" || *role == "developer") return add_system(message, path, out.system);
  if (*role == "tool") {
    auto result = tool_result(message, path);
    if (!result) return tl::unexpected(result.error());
    append_turn(out.messages, "user", Json::array({std::move(*result)}));
    return {};
  }
  if (*role != "user" && *role != "assistant") {
    return tl::unexpected(
        bad_field(path + ".role",
                  path + ".role \"" + *role + "\" cannot be translated to Anthropic Messages"));
  }
  const bool user = *role == "user";
  if (!user && member(message, "function_call") != nullptr) {
    return tl::unexpected(bad_field(
        path + ".function_call",
        path + ".function_call cannot be translated to Anthropic Messages; use tool_calls"));
  }
  if (!user && member(message, "audio") != nullptr) {
    return tl::unexpected(
        bad_field(path + ".audio", path + ".audio cannot be translated to Anthropic Messages"));
  }
  auto blocks = content_blocks(message, path, /*images=*/user);
  if (!blocks) return tl::unexpected(blocks.error());
  if (!user) {
    if (auto added = add_tool_calls(message, path, *blocks); !added) return added;
  }
  append_turn(out.messages, user ? "user" : "assistant", std::move(*blocks));
  return {};
}

}  // namespace

tl::expected<MessagesConversation, TranslateError> chat_conversation_to_messages(
    const Json& messages) {
  if (!messages.is_array())
    return tl::unexpected(bad_field("messages", "messages must be an array"));
  MessagesConversation out{.system = Json::array(), .messages = Json::array()};
  for (size_t i = 0; i < messages.size(); ++i) {
    if (!messages[i].is_object())
      return tl::unexpected(bad_field(at("messages", i), at("messages", i) + " must be an object"));
    if (auto added = add_message(messages[i], at("messages", i), out); !added) {
      return tl::unexpected(added.error());
    }
  }
  // One plain system string reads best upstream; several parts stay separate blocks.
  if (out.system.empty())
    out.system = nullptr;
  else if (out.system.size() == 1)
    out.system = out.system[0]["text"];
  return out;
}

}  // namespace rolter::anthropic
