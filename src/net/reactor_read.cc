#include "net/reactor_read.h"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <boost/asio/detail/socket_ops.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>

#include <cassert>
#include <cerrno>

namespace rolter::reactor_read {
namespace {

using SocketImplementation = asio::detail::reactive_socket_service_base::base_implementation_type;

// The socket's implementation (descriptor, state flags, reactor registration): a protected member
// of Asio's socket, named through a derived class as the language allows.
struct SocketAccess : asio::ip::tcp::socket {
  static SocketImplementation& of(asio::ip::tcp::socket& socket) {
    return (socket.*(&SocketAccess::impl_)).get_implementation();
  }
};

// Members private to the reactor, handed out here: an explicit instantiation may name a private
// member. Each is read or written only on the thread that runs the reactor.
template <typename Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type member(Tag) { return Member; }
};
// A registered descriptor's "a read is worth trying" flags, by operation type.
struct SpeculativeTag {
  using type = bool (Reactor::descriptor_state::*)[Reactor::max_ops];
  friend type member(SpeculativeTag);
};
template struct Expose<SpeculativeTag, &Reactor::descriptor_state::try_speculative_>;
// The events the descriptor is registered for.
struct RegisteredTag {
  using type = uint32_t Reactor::descriptor_state::*;
  friend type member(RegisteredTag);
};
template struct Expose<RegisteredTag, &Reactor::descriptor_state::registered_events_>;
// The reactor's epoll set.
struct EpollTag {
  using type = int Reactor::*;
  friend type member(EpollTag);
};
template struct Expose<EpollTag, &Reactor::epoll_fd_>;
// The events of the descriptor's last wake-up (the reactor hands them to its operations' pass in
// this field, which it does not clear).
struct EventsTag {
  using type = unsigned int asio::detail::scheduler_operation::*;
  friend type member(EventsTag);
};
template struct Expose<EventsTag, &asio::detail::scheduler_operation::task_result_>;

uint32_t last_events(Reactor::descriptor_state* data) {
  // The descriptor's state is an operation of the reactor's, a base it keeps private: a C-style
  // cast is the conversion the language allows here.
  auto* operation = (asio::detail::scheduler_operation*)data;  // NOLINT(google-readability-casting)
  return operation->*member(EventsTag{});
}

}  // namespace

Reactor& reactor_of(asio::ip::tcp::socket& socket) {
  return asio::use_service<Reactor>(asio::query(socket.get_executor(), asio::execution::context));
}

int descriptor(asio::ip::tcp::socket& socket) { return SocketAccess::of(socket).socket_; }

Reactor::per_descriptor_data& registration(asio::ip::tcp::socket& socket) {
  return SocketAccess::of(socket).reactor_data_;
}

bool make_non_blocking(asio::ip::tcp::socket& socket, error_code& ec) {
  SocketImplementation& impl = SocketAccess::of(socket);
  if ((impl.state_ & asio::detail::socket_ops::non_blocking) != 0) return true;
  return asio::detail::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, ec);
}

bool may_have_input(asio::ip::tcp::socket& socket) {
  Reactor::per_descriptor_data data = registration(socket);
  if (data == nullptr) return true;
  // Read without the descriptor's lock: the reactor runs on this thread only (see the header).
  return (data->*member(SpeculativeTag{}))[Reactor::read_op];
}

void watch_peer_close(Reactor& reactor, asio::ip::tcp::socket& socket) {
  Reactor::per_descriptor_data data = registration(socket);
  if (data == nullptr) return;
  uint32_t& registered = data->*member(RegisteredTag{});
  if (registered == 0 || (registered & EPOLLRDHUP) != 0) return;
  epoll_event event{};
  event.events = registered | EPOLLRDHUP;
  event.data.ptr = data;  // as the reactor registers it
  if (::epoll_ctl(reactor.*member(EpollTag{}), EPOLL_CTL_MOD, descriptor(socket),
                  &event) == 0) {
    // The reactor adds EPOLLOUT to what it has registered when it first waits to write: it keeps
    // this too.
    registered = event.events;
  }
}

namespace {

// recv(2), again when a signal interrupted it: the bytes, 0 at the end of stream, or -1 (errno).
ssize_t recv_once(int fd, void* data, size_t size, int flags) {
  ssize_t n;
  do {
    n = ::recv(fd, data, size, flags);
  } while (n < 0 && errno == EINTR);
  return n;
}

// A receive that returned -1: not_done when nothing was there, else done with the error.
ReactorOp::status failed(error_code& ec, size_t& bytes) {
  if (errno == EAGAIN || errno == EWOULDBLOCK) return ReactorOp::not_done;
  ec = error_code(errno, asio::error::get_system_category());
  bytes = 0;
  return ReactorOp::done;
}

}  // namespace

ReactorOp::status receive(int fd, Reactor::per_descriptor_data data, asio::mutable_buffer buffer,
                          error_code& ec, size_t& bytes) {
  const ssize_t n = recv_once(fd, buffer.data(), buffer.size(), 0);
  if (n < 0) return failed(ec, bytes);
  bytes = static_cast<size_t>(n);
  if (n == 0) {
    ec = asio::error::eof;
    return ReactorOp::done_and_exhausted;
  }
  ec = {};
  if (bytes == buffer.size()) return ReactorOp::done;
  // Fewer bytes than asked: drained, unless the wake-up also said the peer closed or failed.
  // Then the end of stream (or the error) waits behind these bytes with no event to come
  // (edge-triggered: it came with theirs), and the next read must try.
  if (data != nullptr && (last_events(data) & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0) {
    return ReactorOp::done;
  }
  return ReactorOp::done_and_exhausted;
}

ReactorOp::status peek(int fd, error_code& ec, size_t& bytes) {
  char byte;
  const ssize_t n = recv_once(fd, &byte, 1, MSG_PEEK);
  if (n < 0) return failed(ec, bytes);
  ec = {};
  bytes = static_cast<size_t>(n);
  return ReactorOp::done;
}

namespace {

// The watch operation's handler: holds the watch alive until the operation ends.
struct WatchDone {
  std::shared_ptr<InputWatch> watch;
  void operator()(const error_code& ec, size_t bytes) const { watch->complete(ec, bytes); }
};

}  // namespace

void InputWatch::watch(std::shared_ptr<InputWatch>& self, Reactor& reactor,
                       asio::ip::tcp::socket& socket, InputSink* sink) {
  if (self && self->live_) {
    self->sink_ = sink;
    return;
  }
  if (!self || self->operation_) {
    // The last operation ended but its handler has not run yet: it reports to no one now (the
    // new look finds the same input, if it is still there), and the new one gets its own state.
    if (self) self->sink_ = nullptr;
    self = std::make_shared<InputWatch>();
  }
  // Otherwise reused: the last operation's handler has run (it may still be on the stack, the
  // caller of this, but touches nothing after).
  self->sink_ = sink;
  self->reading_ = false;
  self->live_ = true;
  self->operation_ = true;
  watch_peer_close(reactor, socket);
  detail::start_op(reactor, socket, asio::mutable_buffer(), self.get(), WatchDone{self});
}

void InputWatch::take_over(asio::mutable_buffer buffer,
                           asio::any_completion_handler<void(error_code, size_t)> reader) {
  assert(live_ && !reading_);
  buffer_ = buffer;
  reader_.swap(reader);  // (Boost 1.81's move assignment of this type recurses without end)
  reading_ = true;
}

ReactorOp::status InputWatch::perform(int fd, Reactor::per_descriptor_data data, error_code& ec,
                                     size_t& bytes) {
  const ReactorOp::status status =
      reading_ ? receive(fd, data, buffer_, ec, bytes) : peek(fd, ec, bytes);
  if (status != ReactorOp::not_done) live_ = false;
  return status;
}

void InputWatch::complete(const error_code& ec, size_t bytes) {
  live_ = false;
  operation_ = false;
  if (reading_) {
    reading_ = false;
    auto reader = std::move(reader_);
    std::move(reader)(ec, bytes);
    return;
  }
  if (sink_ == nullptr) return;
  const InputSink::Input input = ec ? InputSink::Input::kError
                                 : bytes > 0 ? InputSink::Input::kBytes
                                             : InputSink::Input::kEnd;
  sink_->on_input(input, ec);
}

}  // namespace rolter::reactor_read
