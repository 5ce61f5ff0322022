#include "net/deadlines.h"

#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>

#include <utility>

namespace rolter {

Deadlines::Deadlines(asio::execution_context& context) : asio::execution_context::service(context) {
  heap_.reserve(64);
}

Deadlines& Deadlines::of(const asio::any_io_executor& executor) {
  auto& deadlines = asio::use_service<Deadlines>(asio::query(executor, asio::execution::context));
  if (!deadlines.timer_) deadlines.timer_.emplace(executor);
  return deadlines;
}

void Deadlines::shutdown() {
  // Before any service is destroyed: the timer belongs to Asio's timer service, which may be
  // destroyed before this one.
  timer_.reset();
  for (Entry* entry : heap_) entry->index = Entry::kNone;
  heap_.clear();
}

void Deadlines::set(Entry& entry, Clock::time_point at) {
  const Clock::time_point before = entry.at;
  entry.at = at;
  if (!entry.in_heap()) {
    heap_.push_back(&entry);
    entry.index = heap_.size() - 1;
    sift_up(entry.index);
  } else if (at < before) {
    sift_up(entry.index);
  } else {
    sift_down(entry.index);
  }
  if (at < armed_at_ && timer_) arm();
}

void Deadlines::remove(Entry& entry) {
  if (!entry.in_heap()) return;
  erase_at(entry.index);
  // With other deadlines left, the timer stays armed: when it fires early it finds nothing due
  // and re-arms. Disarming on every removal would cost a system call per request.
  if (heap_.empty()) disarm();
}

void Deadlines::disarm() {
  // With no deadline left, a pending wait would keep the loop's run() from returning: a loop run
  // to the end of one exchange must end with it. Cancelling costs no system call.
  if (armed_at_ == Clock::time_point::max() || !timer_) return;
  armed_at_ = Clock::time_point::max();
  timer_->cancel();
}

void Deadlines::replace(Entry& from, Entry& to) {
  to.at = from.at;
  if (!from.in_heap()) return;
  place(from.index, &to);
  from.index = Entry::kNone;
}

void Deadlines::arm() {
  if (heap_.empty()) return;
  armed_at_ = heap_.front()->at;
  timer_->expires_at(armed_at_);  // a wait still pending ends with operation_aborted
  timer_->async_wait([this](error_code ec) {
    if (ec) return;  // re-armed, or the loop is shutting down
    armed_at_ = Clock::time_point::max();
    fire();
  });
}

void Deadlines::fire() {
  const Clock::time_point now = Clock::now();
  while (!heap_.empty() && heap_.front()->at <= now) {
    Entry* due = heap_.front();
    erase_at(0);
    due->expire(due->owner);
  }
  if (!heap_.empty() && timer_) arm();
}

void Deadlines::place(size_t index, Entry* entry) {
  heap_[index] = entry;
  entry->index = index;
}

void Deadlines::sift_up(size_t index) {
  Entry* entry = heap_[index];
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (!(entry->at < heap_[parent]->at)) break;
    place(index, heap_[parent]);
    index = parent;
  }
  place(index, entry);
}

void Deadlines::sift_down(size_t index) {
  Entry* entry = heap_[index];
  const size_t n = heap_.size();
  for (;;) {
    size_t child = 2 * index + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1]->at < heap_[child]->at) ++child;
    if (!(heap_[child]->at < entry->at)) break;
    place(index, heap_[child]);
    index = child;
  }
  place(index, entry);
}

void Deadlines::erase_at(size_t index) {
  Entry* gone = heap_[index];
  gone->index = Entry::kNone;
  Entry* last = heap_.back();
  heap_.pop_back();
  if (index == heap_.size()) return;  // it was the last
  place(index, last);
  sift_up(index);
  sift_down(last->index);
}

}  // namespace rolter
