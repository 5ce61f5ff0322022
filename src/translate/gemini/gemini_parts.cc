// Content parts of a chat message as Gemini parts: text, images (data URLs inline, http(s) URLs
// as fileData), input audio and data-URL files inline.
//
// An http(s) image goes as fileData, whose mimeType Gemini requires: it is guessed from the URL's
// extension, and is image/jpeg when there is none we know (the commonest photo format; the URL
// gives nothing better without fetching it). The image_url "detail" hint has no per-part
// equivalent and is ignored: it changes cost, not meaning.
#include <cctype>

#include "translate/gemini/gemini_request_parts.h"

namespace rolter::gemini {
namespace {

struct Extension {
  std::string_view ext;
  std::string_view mime;
};

// Image types Gemini reads (its image understanding guide), by file extension.
constexpr Extension kImageTypes[] = {
    {"png", "image/png"}, {"jpg", "image/jpeg"},  {"jpeg", "image/jpeg"}, {"webp", "image/webp"},
    {"gif", "image/gif"}, {"heic", "image/heic"}, {"heif", "image/heif"},
};

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view guess_image_mime(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const size_t slash = url.rfind('/');
  const size_t dot = url.rfind('.');
  if (dot == std::string_view::npos || (slash != std::string_view::npos && dot < slash)) {
    return "image/jpeg";
  }
  const std::string ext = lower(url.substr(dot + 1));
  for (const auto& type : kImageTypes) {
    if (type.ext == ext) return type.mime;
  }
  return "image/jpeg";
}

// "data:<mime>;base64,<data>" → inlineData. Other data URLs (no mime, not base64) are refused
// rather than re-encoded: clients send images base64 anyway.
tl::expected<Json, TranslateError> data_url_part(std::string_view url, const std::string& where) {
  const size_t comma = url.find(',');
  if (comma == std::string_view::npos)
    return tl::unexpected(bad_request(where, where + " is a malformed data URL"));
  std::string_view meta = url.substr(5, comma - 5);
  if (!meta.ends_with(";base64")) {
    return tl::unexpected(bad_request(where, where + " must be a base64 data URL"));
  }
  meta.remove_suffix(7);
  const std::string_view mime = meta.substr(0, meta.find(';'));
  if (mime.empty())
    return tl::unexpected(bad_request(where, where + " data URL has no media type"));
  return Json{{"inlineData", {{"mimeType", mime}, {"data", url.substr(comma + 1)}}}};
}

tl::expected<Json, TranslateError> image_part(const Json& part, const std::string& where) {
  const Json* image = member(part, "image_url");
  const std::string* url = nullptr;
  if (image != nullptr)
    url = image->is_string() ? image->get_ptr<const std::string*>() : string_member(*image, "url");
  const std::string field = where + ".image_url.url";
  if (url == nullptr) return tl::unexpected(bad_request(field, field + " must be a string"));
  const std::string scheme = lower(std::string_view(*url).substr(0, url->find(':') + 1));
  if (scheme == "data:") return data_url_part(*url, field);
  if (scheme == "http:" || scheme == "https:") {
    return Json{{"fileData", {{"mimeType", guess_image_mime(*url)}, {"fileUri", *url}}}};
  }
  return tl::unexpected(bad_request(field, field + " must be a data, http or https URL"));
}

tl::expected<Json, TranslateError> audio_part(const Json& part, const std::string& where) {
  const Json* audio = object_member(part, "input_audio");
  const std::string* data = audio ? string_member(*audio, "data") : nullptr;
  const std::string* format = audio ? string_member(*audio, "format") : nullptr;
  if (data == nullptr || format == nullptr || format->empty()) {
    return tl::unexpected(
        bad_request(where + ".input_audio", where + ".input_audio needs data and format"));
  }
  return Json{{"inlineData", {{"mimeType", "audio/" + lower(*format)}, {"data", *data}}}};
}

tl::expected<Json, TranslateError> file_part(const Json& part, const std::string& where) {
  const Json* file = object_member(part, "file");
  const std::string* data = file ? string_member(*file, "file_data") : nullptr;
  if (data == nullptr || lower(std::string_view(*data).substr(0, 5)) != "data:") {
    // A file_id names a file in OpenAI's store, which Gemini cannot read.
    return tl::unexpected(bad_request(
        where + ".file",
        where + ".file needs file_data as a data URL (file_id cannot be translated to Gemini)"));
  }
  return data_url_part(*data, where + ".file.file_data");
}

}  // namespace

tl::expected<Json, TranslateError> content_part(const Json& part, const std::string& where) {
  const std::string* type = string_member(part, "type");
  if (type == nullptr)
    return tl::unexpected(bad_request(where + ".type", where + ".type must be a string"));
  if (*type == "text" || *type == "refusal") {
    const std::string* text = string_member(part, type->c_str());
    if (text == nullptr)
      return tl::unexpected(
          bad_request(where + "." + *type, where + "." + *type + " must be a string"));
    if (text->empty()) return Json();
    return Json{{"text", *text}};
  }
  if (*type == "image_url") return image_part(part, where);
  if (*type == "input_audio") return audio_part(part, where);
  if (*type == "file") return file_part(part, where);
  return tl::unexpected(bad_request(
      where + ".type", "content part type \"" + *type + "\" cannot be translated to Gemini"));
}

tl::expected<std::string, TranslateError> content_text(const Json& content,
                                                       const std::string& where) {
  if (const auto* text = content.get_ptr<const std::string*>()) return *text;
  if (content.is_null()) return std::string();
  if (!content.is_array())
    return tl::unexpected(bad_request(where, where + " must be a string or an array"));
  std::string text;
  for (size_t i = 0; i < content.size(); ++i) {
    const std::string at = where + "[" + std::to_string(i) + "]";
    const std::string* type = string_member(content[i], "type");
    const std::string* piece = string_member(content[i], "text");
    if (type == nullptr || *type != "text" || piece == nullptr) {
      return tl::unexpected(bad_request(at, at + " must be a text part"));
    }
    text += *piece;
  }
  return text;
}

}  // namespace rolter::gemini
