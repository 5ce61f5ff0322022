#include "ui/dashboard.h"

#include <fstream>
#include <sstream>

namespace rolter {
namespace {

constexpr std::string_view kPrefix = "/ui/";
constexpr std::string_view kVendor = "vendor/";

// The dashboard talks to this origin only; uPlot sizes its elements through inline styles.
constexpr std::string_view kPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'";

ControlResponse text(unsigned status, std::string body) {
  ControlResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

void add_security_headers(ControlResponse& r) {
  r.headers.emplace_back("content-security-policy", std::string(kPolicy));
  r.headers.emplace_back("x-content-type-options", "nosniff");
  r.headers.emplace_back("referrer-policy", "no-referrer");
  // Revalidate every time: the ETag makes that a 304, and a new build is seen at once.
  r.headers.emplace_back("cache-control", "no-cache");
}

// Only plain relative paths: segments of [A-Za-z0-9._-], none empty or starting with a dot.
bool plain_path(std::string_view relative) {
  size_t start = 0;
  while (start <= relative.size()) {
    const size_t slash = relative.find('/', start);
    const std::string_view segment =
        relative.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (segment.empty() || segment.front() == '.') return false;
    for (char c : segment) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return true;
}

// For dev_dir only; the embedded assets carry the type the build gave them.
std::string_view content_type_for(std::string_view path) {
  struct Type {
    std::string_view suffix, type;
  };
  static constexpr Type kTypes[] = {
      {".html", "text/html; charset=utf-8"}, {".js", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},   {".svg", "image/svg+xml"},
      {".png", "image/png"},                 {".json", "application/json"},
  };
  for (const Type& t : kTypes) {
    if (path.ends_with(t.suffix)) return t.type;
  }
  return "application/octet-stream";
}

}  // namespace

Dashboard::Dashboard(Options options) : options_(std::move(options)) {}

bool Dashboard::serves(std::string_view path) {
  return path == "/ui" || path.starts_with(kPrefix);
}

ControlResponse Dashboard::serve(const ControlRequest& request, std::string_view path) const {
  if (request.method != "GET") {
    ControlResponse r = text(405, "the dashboard answers GET only\n");
    r.headers.emplace_back("allow", "GET");
    return r;
  }
  if (path == "/ui") {
    ControlResponse r = text(308, "");
    r.headers.emplace_back("location", std::string(kPrefix));
    return r;
  }
  std::string_view relative = path.substr(kPrefix.size());
  if (relative.empty()) relative = "index.html";
  if (!plain_path(relative)) return text(404, "not found\n");
  if (!options_.dev_dir.empty() && !relative.starts_with(kVendor)) return from_disk(relative);
  for (const EmbeddedAsset& asset : options_.assets) {
    if (asset.path != relative) continue;
    ControlResponse r;
    add_security_headers(r);
    r.headers.emplace_back("etag", std::string(asset.etag));
    if (request.header("if-none-match") == asset.etag) {
      r.status = 304;
      r.content_type.clear();
      return r;
    }
    r.content_type = std::string(asset.content_type);
    r.body = std::string(asset.body);
    return r;
  }
  return text(404, "not found\n");
}

ControlResponse Dashboard::from_disk(std::string_view relative) const {
  std::ifstream in(options_.dev_dir + "/" + std::string(relative), std::ios::binary);
  if (!in) return text(404, "not found in ROLTER_UI_DIR\n");
  std::ostringstream body;
  body << in.rdbuf();
  ControlResponse r;
  add_security_headers(r);
  r.content_type = std::string(content_type_for(relative));
  r.body = body.str();
  return r;
}

}  // namespace rolter
