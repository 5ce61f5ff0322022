// ScriptedControlPlane: a loopback HTTP server for tests that plays the control plane's part of
// the node protocol from a script, and records what it was asked.
//
// It listens on 127.0.0.1:<ephemeral> and answers each request with the next scripted answer (or
// the fallback once the script is used up): a status, headers and body, optionally after holding
// the request (a long poll), or by closing the connection without a word. Requests are recorded
// when they arrive, before any hold.
//
//   ScriptedControlPlane cp;
//   cp.script({{.status = 200, .body = doc, .headers = {{"x-rolter-snapshot-version", "7"}}},
//              {.status = 304}});
//   ... point the client at cp.url() ...
//   ASSERT_TRUE(cp.wait_requests(2));
//   EXPECT_EQ(cp.requests()[1].target, "/internal/snapshot?version=7");
//
// Thread-safety: the server runs its own thread; every public method may be called from any
// thread. The destructor stops it at once, held requests included.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rolter {

struct ScriptedAnswer {
  unsigned status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  std::chrono::milliseconds hold{0};  // how long to hold the request before answering
  bool close = false;                 // close the connection instead of answering
};

struct RecordedRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::chrono::steady_clock::time_point at;  // when it was read

  // The header's value, or "<absent>".
  std::string header(const std::string& name) const;
};

class ScriptedControlPlane {
 public:
  ScriptedControlPlane();
  ~ScriptedControlPlane();
  ScriptedControlPlane(const ScriptedControlPlane&) = delete;
  ScriptedControlPlane& operator=(const ScriptedControlPlane&) = delete;

  // "http://127.0.0.1:<port>".
  std::string url() const;

  // Appends answers to the script.
  void script(std::vector<ScriptedAnswer> answers);
  // The answer once the script is used up (by default: hold 60 s, then 304).
  void set_fallback(ScriptedAnswer answer);

  std::vector<RecordedRequest> requests() const;
  // Waits until `n` requests arrived; false after `timeout`.
  bool wait_requests(size_t n, std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;
  // Answers sent whole (not closed, not interrupted).
  size_t answered() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A URL on which nothing listens: connections are refused at once.
std::string refused_control_plane_url();

}  // namespace rolter
