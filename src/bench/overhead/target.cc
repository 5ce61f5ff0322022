#include "bench/overhead/target.h"

#include "bench/overhead/workload.h"
#include "config/url.h"

namespace rolter::bench::overhead {

std::string Target::url() const {
  const bool v6 = host.find(':') != std::string::npos;
  return "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + path;
}

std::vector<std::pair<std::string, std::string>> Target::request_headers(bool stream) const {
  std::vector<std::pair<std::string, std::string>> out = {{"content-type", "application/json"}};
  if (stream) {
    out.emplace_back(std::string(kStreamHeader), "1");
    out.emplace_back("accept", "text/event-stream");
  }
  out.insert(out.end(), headers.begin(), headers.end());
  return out;
}

std::string Target::raw_request(bool stream) const {
  const std::string body = request_body(stream);
  const bool v6 = host.find(':') != std::string::npos;
  std::string r = "POST " + path + " HTTP/1.1\r\nhost: " + (v6 ? "[" + host + "]" : host) + ":" +
                  std::to_string(port) + "\r\n";
  for (const auto& [name, value] : request_headers(stream)) r += name + ": " + value + "\r\n";
  r += "content-length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return r;
}

tl::expected<Target, std::string> make_target(
    std::string name, const std::string& base_url,
    std::vector<std::pair<std::string, std::string>> headers) {
  auto url = parse_url(base_url);
  if (!url) return tl::unexpected(name + ": " + url.error());
  if (url->tls()) return tl::unexpected(name + ": only http:// URLs are supported");
  Target t;
  t.name = std::move(name);
  t.host = url->host;
  t.port = url->port;
  t.path = url->path + std::string(kChatPath);
  t.headers = std::move(headers);
  return t;
}

}  // namespace rolter::bench::overhead
