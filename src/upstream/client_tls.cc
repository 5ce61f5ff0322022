#include "upstream/client_tls.h"

namespace rolter {

namespace asio = boost::asio;

asio::ssl::context make_client_tls_context() {
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  ctx.set_default_verify_paths();
  ctx.set_verify_mode(asio::ssl::verify_peer);
  return ctx;
}

asio::ssl::context& client_tls_context() {
  static asio::ssl::context context = make_client_tls_context();
  return context;
}

}  // namespace rolter
