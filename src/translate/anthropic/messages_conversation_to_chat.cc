// Anthropic system + messages → chat-completions messages (SPEC §16), the inverse of
// chat_conversation_to_messages.cc.
//
// A user turn's tool_result blocks become `tool` messages placed first (they must follow the
// assistant's tool_calls), the rest of the turn a user message after them. A tool_result's text
// blocks are joined by "\n" into a string (what chat templates expect), and is_error prefixes
// "Error: " so the model still learns the call failed. Thinking blocks of earlier assistant turns
// are left out, as Anthropic itself strips them from the context. cache_control is ignored:
// OpenAI-compatible engines cache prefixes on their own.
#include <string>

#include "translate/anthropic/conversation.h"

namespace rolter::anthropic {

namespace {

using Result = tl::expected<void, TranslateError>;

TranslateError untranslatable(const std::string& path) {
  return bad_field(path, path + " cannot be translated to chat completions");
}

tl::expected<Json, TranslateError> image_part(const Json& block, const std::string& path) {
  const Json* source = member(block, "source");
  const std::string* type = source ? string_member(*source, "type") : nullptr;
  if (type != nullptr && *type == "url" && string_member(*source, "url")) {
    return Json{{"type", "image_url"}, {"image_url", {{"url", *string_member(*source, "url")}}}};
  }
  const std::string* media = source ? string_member(*source, "media_type") : nullptr;
  const std::string* data = source ? string_member(*source, "data") : nullptr;
  if (type == nullptr || *type != "base64" || media == nullptr || data == nullptr) {
    return tl::unexpected(untranslatable(path + ".source"));
  }
  return Json{{"type", "image_url"},
              {"image_url", {{"url", "data:" + *media + ";base64," + *data}}}};
}

tl::expected<Json, TranslateError> tool_message(const Json& block, const std::string& path) {
  const std::string* id = string_member(block, "tool_use_id");
  if (id == nullptr)
    return tl::unexpected(bad_field(path + ".tool_use_id", path + ".tool_use_id must be a string"));
  std::string text;
  const Json* content = member(block, "content");
  if (content != nullptr && content->is_string()) {
    text = content->get<std::string>();
  } else if (content != nullptr && content->is_array()) {
    for (size_t i = 0; i < content->size(); ++i) {
      const std::string* type = string_member((*content)[i], "type");
      const std::string* part = string_member((*content)[i], "text");
      if (type == nullptr || *type != "text" || part == nullptr)
        return tl::unexpected(untranslatable(at(path + ".content", i)));
      if (i > 0) text += '\n';
      text += *part;
    }
  } else if (content != nullptr) {
    return tl::unexpected(
        bad_field(path + ".content", path + ".content must be a string or an array"));
  }
  const Json* is_error = member(block, "is_error");
  if (is_error != nullptr && is_error->is_boolean() && is_error->get<bool>())
    text = "Error: " + text;
  return Json{{"role", "tool"}, {"tool_call_id", *id}, {"content", std::move(text)}};
}

Result add_user(const Json& content, const std::string& path, Json& out) {
  Json parts = Json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& block = content[i];
    const std::string block_path = at(path + ".content", i);
    const std::string* type = string_member(block, "type");
    const std::string* text = string_member(block, "text");
    if (type != nullptr && *type == "text" && text != nullptr) {
      parts.push_back(Json{{"type", "text"}, {"text", *text}});
    } else if (type != nullptr && *type == "image") {
      auto part = image_part(block, block_path);
      if (!part) return tl::unexpected(part.error());
      parts.push_back(std::move(*part));
    } else if (type != nullptr && *type == "tool_result") {
      auto message = tool_message(block, block_path);
      if (!message) return tl::unexpected(message.error());
      out.push_back(std::move(*message));
    } else {
      return tl::unexpected(untranslatable(block_path + ".type"));
    }
  }
  if (!parts.empty()) out.push_back(Json{{"role", "user"}, {"content", std::move(parts)}});
  return {};
}

Result add_assistant(const Json& content, const std::string& path, Json& out) {
  std::string text;
  Json calls = Json::array();
  for (size_t i = 0; i < content.size(); ++i) {
    const Json& block = content[i];
    const std::string block_path = at(path + ".content", i);
    const std::string* type = string_member(block, "type");
    if (type != nullptr && *type == "text" && string_member(block, "text")) {
      text += *string_member(block, "text");
    } else if (type != nullptr && *type == "tool_use") {
      const std::string* id = string_member(block, "id");
      const std::string* name = string_member(block, "name");
      const Json* input = member(block, "input");
      if (id == nullptr || name == nullptr)
        return tl::unexpected(bad_field(block_path, block_path + " needs an id and a name"));
      Json function{{"name", *name}, {"arguments", input ? dump_json(*input) : "{}"}};
      calls.push_back(Json{{"id", *id}, {"type", "function"}, {"function", std::move(function)}});
    } else if (type == nullptr || (*type != "thinking" && *type != "redacted_thinking")) {
      return tl::unexpected(untranslatable(block_path + ".type"));
    }
  }
  Json message{{"role", "assistant"}};
  message["content"] = text.empty() && !calls.empty() ? Json(nullptr) : Json(std::move(text));
  if (!calls.empty()) message["tool_calls"] = std::move(calls);
  out.push_back(std::move(message));
  return {};
}

Result add_system(const Json& system, Json& out) {
  if (system.is_string()) {
    out.push_back(Json{{"role", "system"}, {"content", system}});
    return {};
  }
  if (!system.is_array())
    return tl::unexpected(bad_field("system", "system must be a string or an array"));
  Json parts = Json::array();
  for (size_t i = 0; i < system.size(); ++i) {
    const std::string* type = string_member(system[i], "type");
    const std::string* text = string_member(system[i], "text");
    if (type == nullptr || *type != "text" || text == nullptr)
      return tl::unexpected(untranslatable(at("system", i)));
    parts.push_back(Json{{"type", "text"}, {"text", *text}});
  }
  if (parts.size() == 1)
    out.push_back(Json{{"role", "system"}, {"content", parts[0]["text"]}});
  else if (!parts.empty())
    out.push_back(Json{{"role", "system"}, {"content", std::move(parts)}});
  return {};
}

}  // namespace

tl::expected<Json, TranslateError> messages_conversation_to_chat(const Json* system,
                                                                 const Json& messages) {
  Json out = Json::array();
  if (system != nullptr) {
    if (auto added = add_system(*system, out); !added) return tl::unexpected(added.error());
  }
  if (!messages.is_array())
    return tl::unexpected(bad_field("messages", "messages must be an array"));
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string path = at("messages", i);
    const std::string* role = string_member(messages[i], "role");
    if (role == nullptr || (*role != "user" && *role != "assistant")) {
      return tl::unexpected(
          bad_field(path + ".role", path + ".role must be \"user\" or \"assistant\""));
    }
    const Json* content = member(messages[i], "content");
    if (content != nullptr && content->is_string()) {
      out.push_back(Json{{"role", *role}, {"content", *content}});
      continue;
    }
    if (content == nullptr || !content->is_array())
      return tl::unexpected(
          bad_field(path + ".content", path + ".content must be a string or an array"));
    auto added =
        *role == "user" ? add_user(*content, path, out) : add_assistant(*content, path, out);
    if (!added) return tl::unexpected(added.error());
  }
  return out;
}

}  // namespace rolter::anthropic
