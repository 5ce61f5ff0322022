#include "ui/dashboard.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

namespace rolter {
namespace {

constexpr EmbeddedAsset kAssets[] = {
    {"index.html", "text/html; charset=utf-8", "<html>index</html>", "\"aaaa\""},
    {"views/catalog.js", "text/javascript; charset=utf-8", "export {}", "\"bbbb\""},
    {"vendor/uplot.js", "text/javascript; charset=utf-8", "var uPlot", "\"cccc\""},
};

struct Call {
  std::string method = "GET";
  std::map<std::string, std::string> headers;
};

ControlResponse get(const Dashboard& d, std::string_view path, Call call = {}) {
  ControlRequest request{
      .method = call.method,
      .target = path,
      .header = [&](std::string_view name) -> std::string_view {
        auto it = call.headers.find(std::string(name));
        return it == call.headers.end() ? std::string_view() : std::string_view(it->second);
      },
  };
  return d.serve(request, path);
}

std::string header(const ControlResponse& r, std::string_view name) {
  for (const auto& [k, v] : r.headers) {
    if (k == name) return v;
  }
  return "";
}

TEST(Dashboard, ServesIndexAndFilesWithTheirTypes) {
  Dashboard d({.assets = kAssets});
  auto index = get(d, "/ui/");
  EXPECT_EQ(index.status, 200u);
  EXPECT_EQ(index.body, "<html>index</html>");
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(header(index, "etag"), "\"aaaa\"");
  EXPECT_NE(header(index, "content-security-policy").find("default-src 'self'"), std::string::npos);
  EXPECT_EQ(header(index, "x-content-type-options"), "nosniff");
  auto view = get(d, "/ui/views/catalog.js");
  EXPECT_EQ(view.status, 200u);
  EXPECT_EQ(view.body, "export {}");
  EXPECT_EQ(view.content_type, "text/javascript; charset=utf-8");
}

TEST(Dashboard, RedirectsTheBarePath) {
  Dashboard d({.assets = kAssets});
  auto r = get(d, "/ui");
  EXPECT_EQ(r.status, 308u);
  EXPECT_EQ(header(r, "location"), "/ui/");
}

TEST(Dashboard, ARevalidationWithTheSameEtagIsNotModified) {
  Dashboard d({.assets = kAssets});
  EXPECT_EQ(get(d, "/ui/", {.headers = {{"if-none-match", "\"aaaa\""}}}).status, 304u);
  auto changed = get(d, "/ui/", {.headers = {{"if-none-match", "\"old\""}}});
  EXPECT_EQ(changed.status, 200u);
  EXPECT_EQ(changed.body, "<html>index</html>");
}

TEST(Dashboard, OnlyPlainPathsToKnownAssets) {
  Dashboard d({.assets = kAssets});
  for (const char* path :
       {"/ui/missing.js", "/ui/../etc/passwd", "/ui/views/../index.html", "/ui/.env",
        "/ui/views//catalog.js", "/ui/views/", "/ui/%2e%2e/x", "/ui/a\\b", "/ui/index.html/",
        "/ui/views/.catalog.js"}) {
    auto r = get(d, path);
    EXPECT_EQ(r.status, 404u) << path;
    EXPECT_EQ(r.body, "not found\n") << path;
  }
}

TEST(Dashboard, AnswersGetOnly) {
  Dashboard d({.assets = kAssets});
  for (const char* method : {"POST", "PUT", "DELETE", "HEAD"}) {
    auto r = get(d, "/ui/", {.method = method});
    EXPECT_EQ(r.status, 405u) << method;
    EXPECT_EQ(header(r, "allow"), "GET");
  }
}

TEST(Dashboard, ADevDirServesFromDiskButVendorStaysEmbedded) {
  const auto root = std::filesystem::temp_directory_path() /
                    ("rolter-ui-test-" + std::to_string(::getpid()));
  const auto dir = root / "src";
  std::filesystem::create_directories(dir / "views");
  std::ofstream(dir / "index.html") << "<html>edited</html>";
  std::ofstream(dir / "views" / "catalog.js") << "export const edited = 1;";
  std::ofstream(dir / ".secret") << "hidden";
  std::ofstream(root / "outside.txt") << "outside";
  Dashboard d({.assets = kAssets, .dev_dir = dir.string()});
  // Nothing hidden and nothing outside the folder, though both files exist.
  EXPECT_EQ(get(d, "/ui/.secret").status, 404u);
  EXPECT_EQ(get(d, "/ui/../outside.txt").status, 404u);
  EXPECT_EQ(get(d, "/ui/views/../../outside.txt").status, 404u);
  EXPECT_EQ(get(d, "/ui/").body, "<html>edited</html>");
  auto view = get(d, "/ui/views/catalog.js");
  EXPECT_EQ(view.body, "export const edited = 1;");
  EXPECT_EQ(view.content_type, "text/javascript; charset=utf-8");
  EXPECT_EQ(get(d, "/ui/vendor/uplot.js").body, "var uPlot");
  EXPECT_EQ(get(d, "/ui/../index.html").status, 404u);
  EXPECT_EQ(get(d, "/ui/nothing.js").status, 404u);
  std::filesystem::remove_all(root);
}

TEST(Dashboard, TheBuildEmbedsTheVendoredChartLibrary) {
  bool found = false;
  for (const EmbeddedAsset& a : embedded_assets()) {
    if (a.path != "vendor/uplot.js") continue;
    found = true;
    EXPECT_EQ(a.content_type, "text/javascript; charset=utf-8");
    EXPECT_NE(a.body.find("uPlot"), std::string_view::npos);
    EXPECT_GT(a.body.size(), 10000u);
    EXPECT_EQ(a.etag.size(), 18u);  // 16 hex digits, quoted
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace rolter
