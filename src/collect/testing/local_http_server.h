// Loopback HTTP servers for the collectors' thread tests: HTTP/1.1 on 127.0.0.1:<ephemeral>, on a
// thread of their own, one request per connection (the collectors' clients close after each).
//
//   LocalHttpServer collector([&](const SeenRequest& r) { keep(r); return HttpAnswer{}; });
//   FixedHttpServer engine;  engine.answer(200, "vllm:num_requests_running 3\n");
//   client.get(engine.url() + "/metrics");  ...  engine.requests(), engine.last_target()
//
// Thread-safety: a handler runs on the server's thread; FixedHttpServer's accessors may be called
// from any thread. Destruction stops the thread and closes the listener.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace rolter {

// What a server saw of one request.
struct SeenRequest {
  std::string target;
  std::string content_type;
  std::string body;
};

// What it answers.
struct HttpAnswer {
  unsigned status = 200;
  std::string content_type;  // "" = none sent
  std::string body;
};

class LocalHttpServer {
 public:
  using Handler = std::function<HttpAnswer(const SeenRequest&)>;
  explicit LocalHttpServer(Handler handle);
  ~LocalHttpServer();
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  // "http://127.0.0.1:<port>".
  std::string url() const;

 private:
  struct Running;
  std::unique_ptr<Running> running_;
};

// Answers every request with a status and body the test may change; counts the requests and
// keeps the last one's target.
class FixedHttpServer {
 public:
  FixedHttpServer();
  std::string url() const { return server_.url(); }
  void answer(unsigned status, std::string body);
  int requests() const { return requests_.load(); }
  std::string last_target() const;

 private:
  mutable std::mutex mu_;
  unsigned status_ = 200;
  std::string body_;
  std::string last_target_;
  std::atomic<int> requests_{0};
  LocalHttpServer server_;  // last: its thread stops before the state it reads goes
};

}  // namespace rolter
