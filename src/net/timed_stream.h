// TimedStream: a TCP stream whose operations end with beast::error::timeout once its deadline
// passes, timed by its event loop's one timer structure (net/deadlines.h) instead of a kernel
// timer armed for each operation.
//
// It keeps the surface of beast::tcp_stream that the proxy uses (expires_after/at/never, cancel,
// close, socket, async_read_some/write_some/connect), and Beast's meaning of a deadline: it
// applies to every operation until changed; an operation pending when it passes, or started after
// it passed and not completed in the call that starts it, ends with beast::error::timeout and the
// socket is closed. What differs is the cost: a deadline moved later on every request is a heap
// update, with no system call and no timer operation, and an operation's completion goes straight
// to its caller.
//
//   TimedStream stream(std::move(socket));
//   stream.expires_after(std::chrono::seconds(30));
//   auto [ec, n] = co_await stream.async_read_some(buffer, kNoThrow);  // beast::error::timeout
//
// Thread-safety: as the socket; its event loop must be run by one thread (net/deadlines.h).
// REQUIRES: the stream is neither moved nor destroyed while one of its operations is pending (a
// coroutine that awaits the operation holds it, as with Beast's streams).
#pragma once

#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/error.hpp>

#include <chrono>
#include <memory>
#include <type_traits>
#include <utility>

#include "net/asio_fwd.h"
#include "net/deadlines.h"
#include "net/reactor_read.h"

namespace rolter {

class TimedStream;

namespace timed_detail {

// Wraps an operation's handler: counts the operation out and reports a timeout as such.
template <typename Handler>
struct Completion {
  Handler handler;
  TimedStream* stream;

  template <typename... Args>
  void operator()(error_code ec, Args&&... args);
};

}  // namespace timed_detail

class TimedStream {
 public:
  using Clock = Deadlines::Clock;
  using socket_type = asio::ip::tcp::socket;
  using executor_type = socket_type::executor_type;
  using lowest_layer_type = socket_type;

  explicit TimedStream(const executor_type& executor) : socket_(executor) { init(); }
  explicit TimedStream(socket_type socket) : socket_(std::move(socket)) { init(); }
  // REQUIRES: no operation of `other` is pending.
  TimedStream(TimedStream&& other) noexcept;
  TimedStream& operator=(TimedStream&&) = delete;
  ~TimedStream() {
    if (entry_.in_heap()) deadlines_->remove(entry_);
    if (watch_) watch_->forget_sink();
  }

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  socket_type& socket() { return socket_; }
  const socket_type& socket() const { return socket_; }
  socket_type& lowest_layer() { return socket_; }
  const socket_type& lowest_layer() const { return socket_; }

  // The deadline of this and every later operation, until changed.
  void expires_after(Clock::duration after) { expires_at(Clock::now() + after); }
  void expires_at(Clock::time_point at);
  void expires_never();

  // Ends the pending operations with operation_aborted.
  void cancel() {
    error_code ignored;
    socket_.cancel(ignored);
    if (watch_) watch_->ended();
  }
  void close() {
    error_code ignored;
    socket_.close(ignored);
    if (watch_) watch_->ended();
  }

  // Reads what is there into the first non-empty buffer. A read that returns less than its
  // buffer leaves the socket known drained, and the next read waits for the kernel's event
  // without trying first (net/reactor_read.h). A read started while the input watch is queued
  // takes it over.
  template <typename MutableBuffers, typename Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(error_code, size_t)>(
        [this](auto handler, const MutableBuffers& b) {
          begin();
          const asio::mutable_buffer first = first_buffer(b);
          if (watch_ && watch_->live() && first.size() != 0) {
            watch_->take_over(first, wrap(std::move(handler)));
          } else {
            reactor_read::start(reactor(), socket_, first, wrap(std::move(handler)));
          }
        },
        token, buffers);
  }

  // Input watch: while no read is pending, `sink` hears of input on the socket (bytes, which
  // stay for the next read; the end of the peer's stream; an error) once, when it arrives. The
  // look stays queued on the socket after that sink is forgotten, and the next read takes it over:
  // starting and ending a watch around each request costs no system call on a drained socket.
  // Calling it again with a watch queued changes only the sink. Its end is not an operation of
  // the stream's: no deadline applies to it.
  void watch_input(reactor_read::InputSink* sink) {
    reactor_read::InputWatch::watch(watch_, reactor(), socket_, sink);
  }
  // The sink hears nothing more.
  void forget_input_sink() {
    if (watch_) watch_->forget_sink();
  }
  // False when the socket is known drained since its last read and no event came since.
  bool may_have_input() { return reactor_read::may_have_input(socket_); }

  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return asio::async_initiate<Token, void(error_code, size_t)>(
        [this](auto handler, const ConstBuffers& b) {
          begin();
          socket_.async_write_some(b, wrap(std::move(handler)));
        },
        token, buffers);
  }

  // Connects to the first of `endpoints` that accepts (asio::async_connect).
  template <typename Endpoints, typename Token>
  auto async_connect(const Endpoints& endpoints, Token&& token) {
    using Endpoint = asio::ip::tcp::endpoint;
    return asio::async_initiate<Token, void(error_code, Endpoint)>(
        [this](auto handler, const Endpoints& e) {
          begin();
          asio::async_connect(socket_, e, wrap(std::move(handler)));
        },
        token, endpoints);
  }

 private:
  template <typename Handler>
  friend struct timed_detail::Completion;

  void init() {
    entry_.expire = &TimedStream::expire;
    entry_.owner = this;
  }
  // Counts an operation in. A deadline that passed while nothing was pending (it left the heap
  // then) goes back in, due at once: the operation ends with a timeout at the loop's next turn
  // unless it completes in the call that starts it (a write that fits the socket's buffer).
  void begin() {
    ++pending_;
    if (!entry_.in_heap() && entry_.at != Clock::time_point::max()) {
      deadlines_->set(entry_, entry_.at);
    }
  }
  error_code finish(error_code ec) {
    --pending_;
    if (timed_out_) {
      ec = beast::error::timeout;
      if (pending_ == 0) timed_out_ = false;
    }
    return ec;
  }
  static void expire(void* owner);

  template <typename Handler>
  timed_detail::Completion<Handler> wrap(Handler handler) {
    return {std::move(handler), this};
  }
  reactor_read::Reactor& reactor() {
    if (reactor_ == nullptr) reactor_ = &reactor_read::reactor_of(socket_);
    return *reactor_;
  }
  template <typename MutableBuffers>
  static asio::mutable_buffer first_buffer(const MutableBuffers& buffers) {
    for (auto it = asio::buffer_sequence_begin(buffers); it != asio::buffer_sequence_end(buffers);
         ++it) {
      const asio::mutable_buffer buffer(*it);
      if (buffer.size() != 0) return buffer;
    }
    return {};
  }

  socket_type socket_;
  Deadlines* deadlines_ = nullptr;  // looked up at the first deadline
  Deadlines::Entry entry_;
  reactor_read::Reactor* reactor_ = nullptr;        // looked up at the first read
  std::shared_ptr<reactor_read::InputWatch> watch_;  // created by the first watch_input()
  unsigned pending_ = 0;    // operations started and not yet completed
  bool timed_out_ = false;  // the deadline passed while operations were pending
};

template <typename Handler>
template <typename... Args>
void timed_detail::Completion<Handler>::operator()(error_code ec, Args&&... args) {
  ec = stream->finish(ec);
  std::move(handler)(ec, std::forward<Args>(args)...);
}

}  // namespace rolter

// The wrapped handler keeps its executor, allocator and cancellation slot: a coroutine's operation
// completes where and as it would without the wrapper.
template <template <typename, typename> class Associator, typename Handler,
          typename DefaultCandidate>
struct boost::asio::associator<Associator, rolter::timed_detail::Completion<Handler>,
                               DefaultCandidate> : Associator<Handler, DefaultCandidate> {
  static typename Associator<Handler, DefaultCandidate>::type get(
      const rolter::timed_detail::Completion<Handler>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler);
  }
  static auto get(const rolter::timed_detail::Completion<Handler>& h,
                  const DefaultCandidate& c) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler, c)) {
    return Associator<Handler, DefaultCandidate>::get(h.handler, c);
  }
};
