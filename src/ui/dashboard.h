// Dashboard: serves the web dashboard at /ui/ (SPEC §11) for `rolter control-plane` and the
// all-in-one `rolter serve`, from the assets embedded in the binary.
//
//   Dashboard dashboard({.assets = embedded_assets()});
//   if (Dashboard::serves(path)) return dashboard.serve(request, path);
//
// /ui redirects to /ui/, which is index.html; the dashboard routes by URL fragment, so no other
// path needs a fallback. Answers carry an ETag (304 on If-None-Match), a Content-Security-Policy
// that allows this origin only, and nosniff. Any path with a dot segment, a backslash or a
// percent sign is 404: nothing outside the asset list is ever reachable.
//
// `dev_dir` (ROLTER_UI_DIR) serves ui/src/ from disk instead, reread on every request, so the
// dashboard can be edited without rebuilding; vendored libraries stay embedded.
//
// Thread-safety: serve() is const and may run on many threads at once.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "server/control_handler.h"
#include "ui/embedded_assets.h"

namespace rolter {

class Dashboard {
 public:
  struct Options {
    std::span<const EmbeddedAsset> assets;
    std::string dev_dir;  // "" = embedded only
  };

  explicit Dashboard(Options options);

  // Whether `path` (no query) is the dashboard's: /ui or below /ui/.
  static bool serves(std::string_view path);
  // REQUIRES: serves(path).
  ControlResponse serve(const ControlRequest& request, std::string_view path) const;

 private:
  ControlResponse from_disk(std::string_view relative) const;

  Options options_;
};

}  // namespace rolter
