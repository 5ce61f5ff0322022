// What `rolter check` says each provider will be called at: one example request line per provider
// (its first instance), so a base URL that ends in /v1, or a kind set wrong, shows before traffic
// does (SPEC §16).
//
//   openai      "openai (openai): POST https://api.openai.com/v1/chat/completions"
//   anthropic   "claude (anthropic): POST https://api.anthropic.com/v1/messages"
//
// Thread-safety: pure function.
#pragma once

#include <string>
#include <vector>

#include "config/config.h"

namespace rolter {

// One line per provider that serves traffic, in config order (decision services, which policy
// mode calls at their own path, are left out).
std::vector<std::string> describe_provider_calls(const Config& config);

}  // namespace rolter
