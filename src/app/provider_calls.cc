#include "app/provider_calls.h"

#include "config/discover.h"
#include "config/url.h"
#include "http/upstream_path.h"

namespace rolter {
namespace {

// A chat request's path for each kind; Gemini's names the model in the path.
std::string example_path(const std::string& kind) {
  if (kind == "anthropic") return "/v1/messages";
  if (kind == "gemini") return "/v1beta/models/{model}:generateContent";
  return "/v1/chat/completions";
}

}  // namespace

std::vector<std::string> describe_provider_calls(const Config& config) {
  std::vector<std::string> lines;
  for (const ProviderConfig& p : config.providers) {
    if (p.discover && p.kind != "decision_service") {
      auto spec = parse_discover(p.discover->url);  // valid: the config was checked
      if (!spec) continue;
      lines.push_back(p.name + " (" + p.kind + "): POST http://{instance}" +
                      upstream_path(spec->path, example_path(p.kind)) +
                      ", each instance found at " + p.discover->url + " every " +
                      std::to_string(p.discover->interval_ms) + " ms");
      continue;
    }
    if (p.instances.empty() || p.kind == "decision_service") continue;
    auto url = parse_url(p.instances.front().base_url);  // valid: the config was checked
    if (!url) continue;
    std::string line = p.name + " (" + p.kind + "): POST " + url->scheme + "://" +
                       url->authority() + upstream_path(url->path, example_path(p.kind));
    if (p.instances.size() > 1) {
      line += " (and " + std::to_string(p.instances.size() - 1) + " more instances)";
    }
    lines.push_back(std::move(line));
  }
  return lines;
}

}  // namespace rolter
