// The client TLS context upstream connections verify with (connect_upstream(),
// upstream/upstream_connection.h), and the handle the callers pass it by.
#pragma once

#include <boost/asio/ssl/context.hpp>

namespace rolter {

// A client TLS context that verifies peers against the system's trusted CAs.
boost::asio::ssl::context make_client_tls_context();

// The process's client TLS context, made by make_client_tls_context() on the first call. The
// workers and the background services share it, and make it only when they first connect to an
// https:// endpoint: a context holds its own copy of the system's trust store, and making one
// brings in much of OpenSSL, about 4 MB of memory together. An OpenSSL context may make
// connections on several threads at once. Thread-safe.
boost::asio::ssl::context& client_tls_context();

// Which client TLS context a connection verifies with: a given one (implicitly, from the
// context), or by default the process's, client_tls_context(), asked only when a TLS connection
// is made. A given context must outlive every copy. Cheap to copy.
class ClientTls {
 public:
  ClientTls() = default;
  ClientTls(boost::asio::ssl::context& context)  // NOLINT(google-explicit-constructor): by design
      : context_(&context) {}

  boost::asio::ssl::context& get() const {
    return context_ != nullptr ? *context_ : client_tls_context();
  }

 private:
  boost::asio::ssl::context* context_ = nullptr;
};

}  // namespace rolter
