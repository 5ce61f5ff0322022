// The dashboard's files, embedded in the binary by the build (cmake/embed_assets.cmake): ui/src/
// and the vendored libraries pinned in ui/package.json (uPlot). Nothing is read from disk and
// nothing is fetched from another origin at run time (SPEC §11).
//
// Thread-safety: immutable data.
#pragma once

#include <span>
#include <string_view>

namespace rolter {

struct EmbeddedAsset {
  std::string_view path;          // below /ui/: "index.html", "views/catalog.js", "vendor/uplot.js"
  std::string_view content_type;  // "text/javascript; charset=utf-8"
  std::string_view body;
  std::string_view etag;  // quoted, e.g. "\"3f2a...\"": the content's digest
};

// Every embedded asset, in no particular order.
std::span<const EmbeddedAsset> embedded_assets();

}  // namespace rolter
