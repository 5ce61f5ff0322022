#include "tls/server_context.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string_view>

namespace rolter {
namespace {

std::string quoted(const std::string& text) { return "\"" + text + "\""; }

// The reason of the oldest error OpenSSL queued (the one that started the failure); the queue is
// emptied.
std::string openssl_reason() {
  const unsigned long first = ERR_get_error();
  ERR_clear_error();
  if (first == 0) return "unknown error";
  if (const char* reason = ERR_reason_error_string(first)) return reason;
  char text[256];
  ERR_error_string_n(first, text, sizeof text);
  return text;
}

// OpenSSL reports a file it cannot open through its own queue, without errno's words; checking
// first gives "No such file or directory" and the like.
std::string unreadable(const std::string& file) {
  std::FILE* f = std::fopen(file.c_str(), "rb");
  if (f == nullptr) return std::strerror(errno);
  std::fclose(f);
  return {};
}

// Chooses http/1.1 when the client offers it; otherwise the handshake goes on without ALPN.
int select_http11(SSL*, const unsigned char** out, unsigned char* out_length,
                  const unsigned char* offered, unsigned int offered_length, void*) {
  static constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* chosen = nullptr;
  if (SSL_select_next_proto(&chosen, out_length, kHttp11, sizeof kHttp11, offered,
                            offered_length) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = chosen;
  return SSL_TLSEXT_ERR_OK;
}

// A key file with a passphrase would make OpenSSL prompt on the terminal: answer "no passphrase".
int no_passphrase(char*, int, int, void*) { return 0; }

tl::expected<void, std::string> load_files(SSL_CTX* ctx, const std::string& cert_file,
                                           const std::string& key_file) {
  const std::string cert_name = "certificate file " + quoted(cert_file);
  const std::string key_name = "private key file " + quoted(key_file);
  if (auto problem = unreadable(cert_file); !problem.empty()) {
    return tl::unexpected(cert_name + ": cannot read: " + problem);
  }
  if (auto problem = unreadable(key_file); !problem.empty()) {
    return tl::unexpected(key_name + ": cannot read: " + problem);
  }
  ERR_clear_error();
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1) {
    return tl::unexpected(cert_name + ": not a PEM certificate chain (" + openssl_reason() + ")");
  }
  if (SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    const unsigned long first = ERR_peek_error();
    if (ERR_GET_LIB(first) == ERR_LIB_X509 && ERR_GET_REASON(first) == X509_R_KEY_VALUES_MISMATCH) {
      ERR_clear_error();
      return tl::unexpected(key_name + ": does not match the certificate in " + quoted(cert_file));
    }
    return tl::unexpected(key_name + ": not a usable PEM private key (" + openssl_reason() + ")");
  }
  if (SSL_CTX_check_private_key(ctx) != 1) {
    ERR_clear_error();
    return tl::unexpected(key_name + ": does not match the certificate in " + quoted(cert_file));
  }
  return {};
}

}  // namespace

tl::expected<std::unique_ptr<boost::asio::ssl::context>, std::string> make_server_context(
    const std::string& cert_file, const std::string& key_file) {
  namespace ssl = boost::asio::ssl;
  std::unique_ptr<ssl::context> context;
  try {
    context = std::make_unique<ssl::context>(ssl::context::tls_server);
  } catch (const std::exception& e) {
    return tl::unexpected(std::string("cannot create a TLS context: ") + e.what());
  }
  SSL_CTX* ctx = context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  // Renegotiation is a denial-of-service lever and HTTP/1.1 has no use for it; compression
  // leaks secrets (CRIME).
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION |
                               SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_default_passwd_cb(ctx, no_passphrase);
  SSL_CTX_set_alpn_select_cb(ctx, select_http11, nullptr);
  if (auto loaded = load_files(ctx, cert_file, key_file); !loaded) {
    return tl::unexpected(loaded.error());
  }
  return context;
}

}  // namespace rolter
