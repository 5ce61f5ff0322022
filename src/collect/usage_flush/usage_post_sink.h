// A UsageFlusher sink that posts each batch to the control plane's POST /internal/v1/usage, with
// the node's token and identity headers (collect/follow/control_plane_client.h), on a private
// event loop of its own: the flusher's thread blocks for at most connect_timeout + deadline.
//
//   UsageFlusher flusher(ledger, make_usage_post_sink({.control_plane = url, .node_id = id,
//                                                      .node_token = token,
//                                                      .node_version = kVersion}),
//                        {.interval = std::chrono::seconds(flush_secs)});
//
// A batch counts as stored when the control plane answers 2xx; any other answer, a refused
// connection or a deadline fails it (the flusher keeps it). Failures are logged once per run.
//
// Thread-safety: the returned sink may be called from one thread at a time (the flusher's
// flushes never overlap).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "collect/usage_flush/usage_flusher.h"

namespace rolter {

struct UsagePostOptions {
  std::string control_plane;  // base URL, http:// or https://
  std::string node_id;
  std::string node_token;    // empty = no Authorization header
  std::string node_version;  // rolter's software version
  std::chrono::milliseconds connect_timeout{2000};
  std::chrono::milliseconds deadline{5000};    // for the request and the whole answer
  std::function<uint64_t()> snapshot_version;  // the version served; empty = 0
};

// A sink for `options`; a URL that does not parse gives a sink that always fails (and says why
// in the log).
UsageFlusher::Sink make_usage_post_sink(UsagePostOptions options);

}  // namespace rolter
