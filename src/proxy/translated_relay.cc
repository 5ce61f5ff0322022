#include "proxy/translated_relay.h"

#include <boost/beast/http/read.hpp>

#include <array>
#include <chrono>

#include "http/sse_progress.h"
#include "observe/inter_token_timer.h"
#include "proxy/error_response.h"
#include "proxy/fallback.h"
#include "proxy/usage_chunk.h"
#include "translate/anthropic/anthropic_translators.h"
#include "translate/gemini/gemini_translator.h"

namespace rolter {
namespace http = beast::http;

namespace {

// Sent with every request translated to Anthropic's Messages API: the version its mapping follows.
constexpr std::string_view kAnthropicVersion = "2023-06-01";
// Bytes read from the target per step of a translated stream.
constexpr size_t kStreamRead = 16 * 1024;

// Reads the rest of the body into a string, at most kMaxTranslatedBody.
template <typename Stream>
Task<error_code> read_whole(Stream& upstream, UpstreamConnection& connection,
                            ResponseParser& parser, const AttemptParams& p, std::string& body) {
  std::array<char, kStreamRead> buffer;
  while (!parser.is_done()) {
    if (body.size() > kMaxTranslatedBody) co_return http::error::body_limit;
    parser.get().body().data = buffer.data();
    parser.get().body().size = buffer.size();
    connection.tcp().expires_at(p.deadline);
    auto [ec, n] = co_await http::async_read_some(upstream, connection.buffer, parser, kNoThrow);
    body.append(buffer.data(), buffer.size() - parser.get().body().size);
    if (ec && ec != http::error::need_buffer) co_return ec;
  }
  co_return error_code{};
}

// A whole answer or an error body, translated and written at once.
template <typename Stream>
Task<void> relay_whole(Stream& upstream, UpstreamConnection& connection,
                       TimedStream& client, ResponseParser& parser, const AttemptParams& p,
                       const Translator& translator, AttemptReport& report) {
  std::string body;
  const error_code read_ec = co_await read_whole(upstream, connection, parser, p, body);
  const unsigned status = parser.get().result_int();
  std::string out;
  unsigned out_status = status;
  if (read_ec) {
    out_status = read_ec == beast::error::timeout ? 504 : 502;
    out = error_body(p.request->style,
                     ApiError{.status = out_status,
                              .type = error_type_for_status(out_status),
                              .message = "reading " + p.candidate->label +
                                         "'s answer failed: " + read_ec.message()},
                     request_id_of(*p.request));
  } else if (status >= 200 && status < 300) {
    auto translated = translator.response(body, translate_options(p));
    if (translated) {
      out = std::move(*translated);
    } else {
      out_status = translated.error().status;
      out = error_body(p.request->style,
                       ApiError{.status = out_status,
                                .type = error_type_for_status(out_status),
                                .message = translated.error().message},
                       request_id_of(*p.request));
    }
  } else {
    TranslatedError error = translator.error(status, body);
    out_status = error.status;
    out = std::move(error.body);
  }
  report.status = out_status;
  report.usage.feed(out);
  ClientResponse response(parser, p, out_status, "application/json", out.size(),
                          report.bytes_out);
  if (!co_await response.write(client, out, true)) {
    report.client_usable = false;
    report.client_gone = true;
    co_return;
  }
  report.client_usable = response.keep_alive() && !read_ec;
  report.reusable = !read_ec && clean_after(parser);
}

// The usage is read from the translated stream first (AttemptReport::usage).
void drop_unasked_usage(const ForwardRequest& request, std::string& out) {
  if (usage_chunk_unasked(request)) out.resize(drop_usage_events(out.data(), out.size()));
}

// An SSE stream, translated event by event as it arrives.
template <typename Stream>
Task<void> relay_stream(Stream& upstream, UpstreamConnection& connection,
                        TimedStream& client, ResponseParser& parser, const AttemptParams& p,
                        const Translator& translator, AttemptReport& report) {
  auto stream = translator.stream(translate_options(p));
  ClientResponse response(parser, p, 200, "text/event-stream", std::nullopt, report.bytes_out);
  if (stream == nullptr || !co_await response.write_head(client)) {
    report.client_usable = false;
    report.client_gone = stream != nullptr;
    co_return;
  }
  std::array<char, kStreamRead> buffer;
  SseProgress progress;
  InterTokenTimer inter_token(p.request->route.pool->instruments.inter_token);
  std::string out;
  error_code read_ec;
  while (!parser.is_done()) {
    if (std::chrono::steady_clock::now() >= p.deadline) {
      read_ec = beast::error::timeout;
      break;
    }
    parser.get().body().data = buffer.data();
    parser.get().body().size = buffer.size();
    connection.tcp().expires_at(p.deadline);
    auto [ec, n] = co_await http::async_read_some(upstream, connection.buffer, parser, kNoThrow);
    out.clear();
    stream->feed(std::string_view(buffer.data(), buffer.size() - parser.get().body().size), out);
    if (ec && ec != http::error::need_buffer) read_ec = ec;
    if (out.empty() && !read_ec) continue;
    report.usage.feed(out);
    drop_unasked_usage(*p.request, out);
    const uint64_t pieces_before = progress.content_pieces();
    if (progress.feed(out) && !report.first_token) {
      report.first_token = std::chrono::steady_clock::now();
      if (p.prefill != nullptr) p.prefill->release();
    }
    if (const uint64_t pieces = progress.content_pieces() - pieces_before; pieces > 0) {
      inter_token.arrived(std::chrono::steady_clock::now(), pieces);
    }
    if (!co_await response.write(client, out, false)) {
      report.client_usable = false;
      report.client_gone = true;
      co_return;
    }
    if (read_ec) break;
  }
  out.clear();
  stream->finish(!read_ec, out);
  report.usage.feed(out);
  drop_unasked_usage(*p.request, out);
  if (!co_await response.write(client, out, true)) {
    report.client_usable = false;
    report.client_gone = true;
    co_return;
  }
  report.broken = static_cast<bool>(read_ec);
  report.client_usable = !read_ec && response.keep_alive();
  report.reusable = !read_ec && clean_after(parser);
}

}  // namespace

template <typename Stream>
Task<void> relay_error_or_fall_back(Stream& upstream, UpstreamConnection& connection,
                                    TimedStream& client, ResponseParser& parser,
                                    const AttemptParams& p, AttemptReport& report) {
  std::string body;
  const error_code read_ec = co_await read_whole(upstream, connection, parser, p, body);
  const unsigned status = parser.get().result_int();
  report.context_length =
      !read_ec && p.may_fall_back_on_context_length && says_context_length(body);
  report.content_filter = !read_ec && p.may_fall_back_on_content_filter && says_content_filter(body);
  if (report.context_length || report.content_filter) {
    report.outcome = Outcome::kFailed;
    report.error = "status " + std::to_string(status) +
                   (report.context_length ? ": the prompt is too long for this target"
                                          : ": the target's content filter refused the request");
    report.reusable = clean_after(parser);
    co_return;
  }
  const TranslationPlan plan = plan_translation(p.request->kind, p.candidate->provider->kind);
  std::string content_type(parser.get()[http::field::content_type]);
  unsigned out_status = status;
  std::string out;
  if (read_ec) {
    out_status = read_ec == beast::error::timeout ? 504 : 502;
    content_type = "application/json";
    out = error_body(p.request->style,
                     ApiError{.status = out_status,
                              .type = error_type_for_status(out_status),
                              .message = "reading " + p.candidate->label +
                                         "'s answer failed: " + read_ec.message()},
                     request_id_of(*p.request));
  } else if (plan.translator != nullptr) {
    TranslatedError error = plan.translator->error(status, body);
    out_status = error.status;
    content_type = "application/json";
    out = std::move(error.body);
  } else {
    out = std::move(body);
  }
  report.first_token = report.first_byte;
  if (p.prefill != nullptr) p.prefill->release();
  report.status = out_status;
  ClientResponse response(parser, p, out_status, content_type, out.size(), report.bytes_out);
  if (!co_await response.write(client, out, true)) {
    report.client_usable = false;
    report.client_gone = true;
    co_return;
  }
  report.client_usable = response.keep_alive() && !read_ec;
  report.reusable = !read_ec && clean_after(parser);
}

template Task<void> relay_error_or_fall_back(UpstreamConnection::Plain&, UpstreamConnection&,
                                             TimedStream&, ResponseParser&,
                                             const AttemptParams&, AttemptReport&);
template Task<void> relay_error_or_fall_back(UpstreamConnection::Tls&, UpstreamConnection&,
                                             TimedStream&, ResponseParser&,
                                             const AttemptParams&, AttemptReport&);

TranslationPlan plan_translation(ApiKind client, ProviderKind target) {
  const bool chat = client == ApiKind::kChatCompletions;
  switch (target) {
    case ProviderKind::kAnthropic:
      if (client == ApiKind::kMessages) return {};
      if (chat) return {.translator = &chat_to_anthropic()};
      return {.unsupported = true};
    case ProviderKind::kGemini:
      if (chat) return {.translator = &chat_to_gemini()};
      if (client == ApiKind::kEmbeddings) return {.translator = &embeddings_to_gemini()};
      return {.unsupported = true};
    default:
      if (client == ApiKind::kMessages) return {.translator = &anthropic_to_chat()};
      return {};
  }
}

TranslateOptions translate_options(const AttemptParams& p) {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return TranslateOptions{
      .model = std::string(p.model),
      .default_max_tokens = p.request->snapshot->config().anthropic.default_max_tokens,
      .created = std::chrono::duration_cast<std::chrono::seconds>(now).count(),
  };
}

tl::expected<TranslatedAttempt, TranslateError> translate_attempt(const AttemptParams& p,
                                                                  const Translator& translator) {
  auto request = translator.request(p.request->body, translate_options(p));
  if (!request) return tl::unexpected(std::move(request.error()));
  TranslatedAttempt attempt{.request = std::move(*request),
                            .fixed_fields = p.candidate->provider->headers};
  if (p.candidate->provider->kind == ProviderKind::kAnthropic) {
    attempt.fixed_fields.emplace_back("anthropic-version", kAnthropicVersion);
  }
  return attempt;
}

template <typename Stream>
Task<void> relay_translated(Stream& upstream, UpstreamConnection& connection,
                            TimedStream& client, ResponseParser& parser,
                            const AttemptParams& p, const Translator& translator,
                            AttemptReport& report) {
  const unsigned status = parser.get().result_int();
  const bool sse = parser.get()[http::field::content_type].starts_with("text/event-stream");
  if (status >= 200 && status < 300 && sse) {
    co_await relay_stream(upstream, connection, client, parser, p, translator, report);
    co_return;
  }
  report.first_token = report.first_byte;
  if (p.prefill != nullptr) p.prefill->release();
  co_await relay_whole(upstream, connection, client, parser, p, translator, report);
}

template Task<void> relay_translated(UpstreamConnection::Plain&, UpstreamConnection&,
                                     TimedStream&, ResponseParser&, const AttemptParams&,
                                     const Translator&, AttemptReport&);
template Task<void> relay_translated(UpstreamConnection::Tls&, UpstreamConnection&,
                                     TimedStream&, ResponseParser&, const AttemptParams&,
                                     const Translator&, AttemptReport&);

}  // namespace rolter
