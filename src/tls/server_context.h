// The TLS server context of the listener: the certificate chain and private key, read once from
// PEM files at start-up.
//
//   auto context = make_server_context("/etc/rolter/cert.pem", "/etc/rolter/key.pem");
//   if (!context) { log(context.error()); return 1; }  // names the file and what is wrong with it
//
// TLS 1.2 is the oldest version offered; ALPN selects http/1.1 when the client offers it (a client
// offering only h2 is answered without ALPN, and speaks HTTP/1.1 or leaves). An encrypted key is
// refused rather than prompted for. Replacing the certificate needs a restart: a config reload
// does not rebuild the context.
//
// Thread-safety: build on one thread before the listener starts; afterwards the context is only
// read, and any worker may create connections from it (OpenSSL allows this on one SSL_CTX).
#pragma once

#include <boost/asio/ssl/context.hpp>
#include <tl/expected.hpp>

#include <memory>
#include <string>

namespace rolter {

tl::expected<std::unique_ptr<boost::asio::ssl::context>, std::string> make_server_context(
    const std::string& cert_file, const std::string& key_file);

}  // namespace rolter
