// Reads that track readiness, on Asio's epoll reactor: a read that returns less than its buffer
// marks its socket drained, so the next read on that socket waits for the kernel's event instead
// of trying first and finding nothing (`EAGAIN`), as nginx's loop does.
//
// Asio's own read tries at once whenever nothing else is queued on the socket, and marks a socket
// drained only at an end of stream. The reactor already keeps the flag this needs (whether a try
// is worth making, set again by every readable event), and consults it before any try; only the
// operation decides when to clear it. So a read here is an Asio reactor operation of its own,
// started through the same reactor entry point as Asio's, which reports a short read as the
// socket's last bytes. The reactor clears the flag under the same lock it sets it under, so an
// event that comes after the read is never lost. One case is not drained: the peer's close that
// came in the same wake-up as its last bytes, for which no event will come again (the socket is
// edge-triggered). So the socket is registered for the peer's close too (EPOLLRDHUP, one
// epoll_ctl per connection), and a short read after a wake-up that said so leaves the flag set.
//
//   Reactor& reactor = reactor_read::reactor_of(socket);    // once per socket: a lookup
//   reactor_read::start(reactor, socket, buffer, handler);  // handler(error_code, size_t)
//   reactor_read::may_have_input(socket);                   // false: drained, no event since
//
// InputWatch (below) is the other operation: a look at the socket for input while no read is
// pending, which a read started later takes over.
//
// Written for Boost 1.81's epoll reactor (Debian 12), four of whose private members it reads or
// sets (reactor_read.cc names them); the build stops on any other Boost.
//
// Thread-safety: as the socket's; its context must be run by one thread.
#pragma once

#include <boost/version.hpp>

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/detail/bind_handler.hpp>
#include <boost/asio/detail/epoll_reactor.hpp>
#include <boost/asio/detail/fenced_block.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_cont_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstddef>
#include <memory>
#include <utility>

#include "net/asio_fwd.h"

#if BOOST_VERSION != 108100
#error "net/reactor_read.h drives Boost 1.81's epoll reactor: check it against this Boost"
#endif
#if !defined(BOOST_ASIO_HAS_EPOLL) || defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#error "net/reactor_read.h needs Asio's epoll reactor"
#endif

namespace rolter::reactor_read {

using Reactor = asio::detail::epoll_reactor;
using ReactorOp = asio::detail::reactor_op;

// The reactor of the socket's context (a lookup under the context's lock: callers keep it).
Reactor& reactor_of(asio::ip::tcp::socket& socket);
// The descriptor and its registration with the reactor.
int descriptor(asio::ip::tcp::socket& socket);
Reactor::per_descriptor_data& registration(asio::ip::tcp::socket& socket);
// Sets the descriptor non-blocking for Asio's operations, once; false (and `ec`) on failure.
bool make_non_blocking(asio::ip::tcp::socket& socket, error_code& ec);

// False when the last read found the socket drained and no readable event (data, end of stream,
// error) was seen since: nothing can be waiting in it, short of what arrived after the loop last
// polled. True otherwise, including when no read was made.
bool may_have_input(asio::ip::tcp::socket& socket);

// Registers the socket for the peer's close (EPOLLRDHUP) as well, once: a read can then tell a
// drained socket from one whose end of stream came with its last bytes.
void watch_peer_close(Reactor& reactor, asio::ip::tcp::socket& socket);

// One non-blocking receive into `buffer`: done (bytes, or the end of stream as asio::error::eof,
// or an error), done_and_exhausted when fewer bytes came than the buffer holds and the socket's
// last wake-up did not also bring the peer's close, not_done when nothing was there.
ReactorOp::status receive(int fd, Reactor::per_descriptor_data data, asio::mutable_buffer buffer,
                          error_code& ec, size_t& bytes);

// Whether input is waiting, without taking it: done with bytes = 1 (bytes), 0 (end of stream) or
// an error; not_done when nothing is there.
ReactorOp::status peek(int fd, error_code& ec, size_t& bytes);

class InputWatch;

namespace detail {

// The reactor operation for both: a read into `buffer`, or (with a watch) whatever the watch
// performs. Allocated with the handler's allocator, as Asio's own operations are (recycled per
// thread: no malloc once warm).
template <typename Handler, typename IoExecutor>
class Op : public ReactorOp {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(Op);

  Op(int fd, Reactor::per_descriptor_data data, asio::mutable_buffer buffer, InputWatch* watch,
     Handler& handler, const IoExecutor& io_ex)
      : ReactorOp(error_code(), &Op::do_perform, &Op::do_complete),
        fd_(fd),
        data_(data),
        buffer_(buffer),
        watch_(watch),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  static status do_perform(ReactorOp* base);

  static void do_complete(void* owner, asio::detail::operation* base, const error_code&,
                          std::size_t) {
    auto* o = static_cast<Op*>(base);
    ptr p = {std::addressof(o->handler_), o, o};
    asio::detail::handler_work<Handler, IoExecutor> w(std::move(o->work_));
    // The handler leaves the operation's memory before it runs: it may own that memory.
    asio::detail::binder2<Handler, error_code, std::size_t> handler(o->handler_, o->ec_,
                                                                     o->bytes_transferred_);
    p.h = std::addressof(handler.handler_);
    p.reset();
    if (owner != nullptr) {
      asio::detail::fenced_block b(asio::detail::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  int fd_;
  Reactor::per_descriptor_data data_;
  asio::mutable_buffer buffer_;
  InputWatch* watch_;
  Handler handler_;
  asio::detail::handler_work<Handler, IoExecutor> work_;
};

// Per-operation cancellation through the handler's slot (a coroutine's), as Asio's reads have.
struct Cancellation {
  Cancellation(Reactor* r, Reactor::per_descriptor_data* data, int descriptor)
      : reactor(r), registration(data), fd(descriptor) {}
  Reactor* reactor;
  Reactor::per_descriptor_data* registration;
  int fd;
  void operator()(asio::cancellation_type_t type) {
    if (!!(type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                   asio::cancellation_type::total))) {
      reactor->cancel_ops_by_key(fd, *registration, Reactor::read_op, this);
    }
  }
};

template <typename Handler>
void start_op(Reactor& reactor, asio::ip::tcp::socket& socket, asio::mutable_buffer buffer,
              InputWatch* watch, Handler&& handler) {
  using Executor = asio::ip::tcp::socket::executor_type;
  using Operation = Op<std::decay_t<Handler>, Executor>;
  const bool is_continuation = ::boost_asio_handler_cont_helpers::is_continuation(handler);
  auto slot = asio::get_associated_cancellation_slot(handler);
  typename Operation::ptr p = {std::addressof(handler), Operation::ptr::allocate(handler), nullptr};
  p.p = new (p.v) Operation(descriptor(socket), registration(socket), buffer, watch, handler,
                            socket.get_executor());
  if (slot.is_connected()) {
    p.p->cancellation_key_ = &slot.template emplace<Cancellation>(
        &reactor, &registration(socket), descriptor(socket));
  }
  // An empty buffer reads nothing and waits for nothing (as Asio's read of an empty buffer).
  if ((watch == nullptr && buffer.size() == 0) || !make_non_blocking(socket, p.p->ec_)) {
    reactor.post_immediate_completion(p.p, is_continuation);
  } else {
    reactor.start_op(Reactor::read_op, descriptor(socket), registration(socket), p.p,
                     is_continuation, /*allow_speculative=*/true);
  }
  p.v = p.p = nullptr;
}

}  // namespace detail

// Starts a read of `socket` into `buffer`; handler(error_code, size_t) as Asio's
// async_read_some. Tried at once unless the socket is known drained.
template <typename Handler>
void start(Reactor& reactor, asio::ip::tcp::socket& socket, asio::mutable_buffer buffer,
           Handler&& handler) {
  watch_peer_close(reactor, socket);
  detail::start_op(reactor, socket, buffer, nullptr, std::forward<Handler>(handler));
}

// What an InputWatch's owner hears when input arrives while no read took the watch over: bytes
// (they stay in the socket for the next read), the end of the peer's stream, or an error.
class InputSink {
 public:
  enum class Input { kBytes, kEnd, kError };
  virtual void on_input(Input input, const error_code& ec) = 0;

 protected:
  ~InputSink() = default;
};

// A look at a socket for input while no read is pending, left queued on the reactor: with the
// socket drained it costs no system call to start, and none to keep across requests. A read
// started while it is queued takes its place instead of queueing a second operation behind it
// (two completions from one event would make Asio's scheduler poll the reactor once more).
//
// Shared by its stream and its queued operation, so the operation's end, after the stream is
// gone, touches nothing freed.
class InputWatch {
 public:
  // Starts watching `socket`, reporting to `sink` (replaced if it is already watching).
  static void watch(std::shared_ptr<InputWatch>& self, Reactor& reactor,
                    asio::ip::tcp::socket& socket, InputSink* sink);

  // Whether its operation is queued on the reactor and not yet performed: a read may take over.
  bool live() const { return live_; }
  // The sink hears nothing more; the operation stays queued for a read to take over.
  void forget_sink() { sink_ = nullptr; }
  // The socket's operations were cancelled or it was closed: the queued operation ends.
  void ended() { live_ = false; }

  // A read takes the watch over. REQUIRES: live().
  void take_over(asio::mutable_buffer buffer,
                 asio::any_completion_handler<void(error_code, size_t)> reader);

  // For the operation: performs the read taken over, else the look.
  ReactorOp::status perform(int fd, Reactor::per_descriptor_data data, error_code& ec,
                            size_t& bytes);
  // For the operation's handler.
  void complete(const error_code& ec, size_t bytes);

 private:
  InputSink* sink_ = nullptr;
  asio::mutable_buffer buffer_;
  asio::any_completion_handler<void(error_code, size_t)> reader_;
  bool live_ = false;
  bool reading_ = false;    // a read took over
  bool operation_ = false;  // an operation was started and its handler has not run yet
};

template <typename Handler, typename IoExecutor>
ReactorOp::status detail::Op<Handler, IoExecutor>::do_perform(ReactorOp* base) {
  auto* o = static_cast<Op*>(base);
  if (o->watch_ != nullptr) {
    return o->watch_->perform(o->fd_, o->data_, o->ec_, o->bytes_transferred_);
  }
  return receive(o->fd_, o->data_, o->buffer_, o->ec_, o->bytes_transferred_);
}

}  // namespace rolter::reactor_read
