// libFuzzer target for the request inspector, the token-id header parser and the model rewrite.
//
// The first input byte picks what the rest is (modulo 6): a body for one of the five endpoints, or
// an x-rolter-vllm-token-ids header value. The seed files in corpus/inspect_fuzz/ start with the
// ASCII digit that selects their kind ('0' chat ... '4' messages, '5' header). Beyond "never
// crash", it checks invariants:
//   - a body the inspector accepts is JSON to an independent parser (nlohmann's SAX);
//   - the bounded prompt is a prefix of at most kPromptBound bytes of a prompt_len-long text;
//   - the padded and the copying paths agree;
//   - rewriting the model yields a body the inspector reads back with the new model and the
//     same conversation digest.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/model_rewrite.h"
#include "inspect/request_inspector.h"
#include "inspect/token_ids.h"

namespace {

using rolter::ApiKind;

// Records whether nlohmann rejected the text, and why, without exceptions.
struct JsonOracle : nlohmann::json_sax<nlohmann::json> {
  bool failed = false;
  std::string reason;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    failed = true;
    reason = e.what();
    return false;
  }
};

void check(bool condition, const char* what) {
  if (!condition) {
    fprintf(stderr, "invariant violated: %s\n", what);
    abort();
  }
}

void fuzz_body(ApiKind kind, std::string_view body) {
  static rolter::RequestInspector inspector;
  static rolter::RequestFacts facts;
  auto ok = inspector.inspect(body, kind, {}, facts);
  if (!ok) {
    check(!ok.error().message.empty(), "error without a message");
    return;
  }
  JsonOracle oracle;
  nlohmann::json::sax_parse(body, &oracle);
  // nlohmann refuses numbers beyond double range ("number overflow"), which JSON allows.
  check(!oracle.failed || oracle.reason.find("number overflow") != std::string::npos,
        "accepted a body that is not JSON");

  check(facts.prompt.size() <= rolter::RouteContext::kPromptBound, "prompt over bound");
  check(facts.prompt.size() <= facts.prompt_len, "prompt longer than prompt_len");
  check(facts.prompt.size() == std::min(facts.prompt_len, rolter::RouteContext::kPromptBound),
        "prompt not the bounded prefix");
  check(facts.conversation_read || facts.prompt_digest == facts.body_hash,
        "unread conversation without the raw-body digest");
  check(!facts.model.empty(), "accepted without a model");

  // The zero-copy path must agree with the copying one.
  std::string padded(body);
  padded.append(rolter::RequestInspector::kPadding, '\0');
  rolter::RequestFacts in_place;
  auto again = inspector.inspect(padded.data(), body.size(), padded.size(), kind, {}, in_place);
  check(again.has_value(), "padded path disagrees");
  check(in_place.prompt_digest == facts.prompt_digest && in_place.prompt == facts.prompt &&
            in_place.model == facts.model &&
            in_place.model_token_offset == facts.model_token_offset,
        "padded path facts differ");

  const std::string_view new_model = "fuzz/\"model\"\n\\";
  auto pieces = rolter::rewrite_model(body, facts, new_model);
  check(pieces.has_value(), "rewrite of an accepted body failed");
  std::string rewritten;
  pieces->append_to(rewritten);
  rolter::RequestFacts reread;
  auto reread_ok = inspector.inspect(rewritten, kind, {}, reread);
  check(reread_ok.has_value(), "rewritten body rejected");
  check(reread.model == new_model, "rewritten model not read back");
  check(!facts.conversation_read || reread.prompt_digest == facts.prompt_digest,
        "rewrite changed the conversation");
}

void fuzz_token_ids(std::string_view value) {
  static std::vector<uint32_t> ids;
  auto ok = rolter::parse_token_ids_header(value, ids);
  check(ok ? !ids.empty() : ids.empty(), "ids left behind on error, or an empty success");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 6) {
    case 0:
      fuzz_body(ApiKind::kChatCompletions, rest);
      break;
    case 1:
      fuzz_body(ApiKind::kCompletions, rest);
      break;
    case 2:
      fuzz_body(ApiKind::kEmbeddings, rest);
      break;
    case 3:
      fuzz_body(ApiKind::kResponses, rest);
      break;
    case 4:
      fuzz_body(ApiKind::kMessages, rest);
      break;
    default:
      fuzz_token_ids(rest);
      break;
  }
  return 0;
}
