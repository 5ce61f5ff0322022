#include "flow/route_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <vector>

namespace rolter {
namespace {

using std::chrono::milliseconds;

// A route of `slots` slots, `busy` of them taken: what FlowCapacity reads from the fleet.
class FixedCapacity final : public FlowCapacity {
 public:
  QueueRoom room(Clock::TimePoint) const override {
    const uint32_t b = busy.load();
    return QueueRoom{.free = b < slots ? slots - b : 0, .any_available = available.load()};
  }
  bool has_room(size_t, Clock::TimePoint now) const override { return room(now).free > 0; }
  uint32_t slots = 2;
  std::atomic<uint32_t> busy{0};
  std::atomic<bool> available{true};
};

class RecordingWaiter final : public QueueWaiter {
 public:
  void wake(const QueueVerdict& v) override {
    EXPECT_FALSE(verdict.has_value()) << "woken twice";
    verdict = v;
  }
  std::optional<QueueVerdict> verdict;
};

class RouteQueueTest : public ::testing::Test {
 protected:
  RouteQueueTest() { configure(); }
  void configure(size_t max_requests = 8, uint64_t max_wait_ms = 30000) {
    queue_.configure(capacity_, QueueSettings{.max_requests = max_requests, .max_wait_ms = max_wait_ms},
                     {});
  }
  // A request that goes at once takes its slot, as the forwarder's in-flight count does.
  QueueAdmission enter(std::shared_ptr<RecordingWaiter> w, uint8_t band = 4,
                       const char* tenant = "a", uint64_t cost = 100) {
    QueueAdmission a = queue_.enter(QueueTicket{.band = band, .tenant = tenant, .cost = cost}, w);
    if (a.kind == QueueAdmission::Kind::kGo) take_slot();
    return a;
  }
  void take_slot() {
    ++capacity_->busy;
    queue_.started();
  }
  // A request ends after `service`.
  void finish(milliseconds service = milliseconds(100)) {
    clock_.advance(service);
    --capacity_->busy;
    queue_.released();
  }

  ManualClock clock_;
  std::shared_ptr<FixedCapacity> capacity_ = std::make_shared<FixedCapacity>();
  RouteQueue queue_{"r", clock_};
};

TEST_F(RouteQueueTest, NothingWaitsOrIsShedWhileARouteHasRoom) {
  auto w = std::make_shared<RecordingWaiter>();
  EXPECT_EQ(enter(w).kind, QueueAdmission::Kind::kGo);
  EXPECT_EQ(enter(w).kind, QueueAdmission::Kind::kGo);
  EXPECT_FALSE(queue_.busy());
  EXPECT_FALSE(w->verdict.has_value());
}

// Admission by cost (SPEC §19): while the route is saturated, a request of a band with
// max_ttft_ms whose estimated prefill alone exceeds it is refused at once; below it, or without an
// estimate, or in another band, it queues; with room, nothing is refused whatever its cost.
TEST_F(RouteQueueTest, ABandsMaxTtftRefusesACostlyPrefillOnlyWhenSaturated) {
  QueueSettings settings{.max_requests = 8, .max_wait_ms = 30000};
  settings.max_ttft_ms[6] = 500;
  queue_.configure(capacity_, settings, {});
  auto ticket = [](uint8_t band, std::optional<double> prefill_ms) {
    return QueueTicket{.band = band, .tenant = "a", .cost = 100, .prefill_ms = prefill_ms};
  };
  // Room: a costly request goes.
  auto first = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(queue_.enter(ticket(6, 2000.0), first).kind, QueueAdmission::Kind::kGo);
  take_slot();
  enter(std::make_shared<RecordingWaiter>());
  // Saturated: refused at once, with the reason and a Retry-After.
  const QueueAdmission costly = queue_.enter(ticket(6, 501.0), std::make_shared<RecordingWaiter>());
  EXPECT_EQ(costly.kind, QueueAdmission::Kind::kShed);
  EXPECT_EQ(costly.reason, ShedReason::kMaxTtft);
  EXPECT_GE(costly.retry_after_s, 1u);
  EXPECT_EQ(shed_reason_name(costly.reason), "max_ttft");
  // At the bound, without an estimate, or in a band without max_ttft_ms: queued.
  EXPECT_EQ(queue_.enter(ticket(6, 500.0), std::make_shared<RecordingWaiter>()).kind,
            QueueAdmission::Kind::kQueued);
  EXPECT_EQ(queue_.enter(ticket(6, std::nullopt), std::make_shared<RecordingWaiter>()).kind,
            QueueAdmission::Kind::kQueued);
  EXPECT_EQ(queue_.enter(ticket(4, 5000.0), std::make_shared<RecordingWaiter>()).kind,
            QueueAdmission::Kind::kQueued);
  EXPECT_EQ(queue_.depth(), 3u);
}

TEST_F(RouteQueueTest, QueuedRequestsGoWhenASlotFrees) {
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto w = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(w).kind, QueueAdmission::Kind::kQueued);
  EXPECT_TRUE(queue_.busy());
  EXPECT_FALSE(w->verdict.has_value());
  finish();
  ASSERT_TRUE(w->verdict.has_value());
  EXPECT_EQ(w->verdict->kind, QueueVerdict::Kind::kDispatch);
  take_slot();
  EXPECT_FALSE(queue_.busy());
}

TEST_F(RouteQueueTest, AGrantIsNotGivenTwice) {
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto first = std::make_shared<RecordingWaiter>();
  auto second = std::make_shared<RecordingWaiter>();
  enter(first);
  enter(second);
  finish();        // one slot free: the first gets it
  queue_.poke();   // the first has not started yet: its slot is still spoken for
  EXPECT_TRUE(first->verdict.has_value());
  EXPECT_FALSE(second->verdict.has_value());
  // A newcomer cannot take the granted slot either.
  auto late = std::make_shared<RecordingWaiter>();
  EXPECT_EQ(enter(late).kind, QueueAdmission::Kind::kQueued);
}

TEST_F(RouteQueueTest, HigherBandIsDispatchedFirst) {
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto batch = std::make_shared<RecordingWaiter>();
  auto interactive = std::make_shared<RecordingWaiter>();
  enter(batch, 1);
  enter(interactive, 6);
  finish();
  EXPECT_TRUE(interactive->verdict.has_value());
  EXPECT_FALSE(batch->verdict.has_value());
}

TEST_F(RouteQueueTest, ClientThatLeftIsRemovedAtOnce) {
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto gone = std::make_shared<RecordingWaiter>();
  auto next = std::make_shared<RecordingWaiter>();
  const uint64_t id = enter(gone).id;
  enter(next);
  EXPECT_EQ(queue_.depth(), 2u);
  EXPECT_TRUE(queue_.leave(id));
  EXPECT_EQ(queue_.depth(), 1u);
  EXPECT_FALSE(queue_.leave(id));
  finish();
  EXPECT_FALSE(gone->verdict.has_value());
  EXPECT_TRUE(next->verdict.has_value());
}

TEST_F(RouteQueueTest, FullQueueShedsTheNewestOfTheLowestBandWithItsRetryAfter) {
  configure(/*max_requests=*/2);
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto old_low = std::make_shared<RecordingWaiter>();
  auto new_low = std::make_shared<RecordingWaiter>();
  enter(old_low, 1);
  enter(new_low, 1);
  auto high = std::make_shared<RecordingWaiter>();
  EXPECT_EQ(enter(high, 6).kind, QueueAdmission::Kind::kQueued);
  ASSERT_TRUE(new_low->verdict.has_value());
  EXPECT_EQ(new_low->verdict->kind, QueueVerdict::Kind::kShed);
  EXPECT_EQ(new_low->verdict->reason, ShedReason::kFull);
  EXPECT_GE(new_low->verdict->retry_after_s, 1u);
  EXPECT_FALSE(old_low->verdict.has_value());
  // Another low arrival is refused itself.
  const QueueAdmission refused = enter(std::make_shared<RecordingWaiter>(), 1);
  EXPECT_EQ(refused.kind, QueueAdmission::Kind::kShed);
  EXPECT_EQ(refused.reason, ShedReason::kFull);
}

TEST_F(RouteQueueTest, RetryAfterFollowsTheMeasuredDrainRate) {
  configure(/*max_requests=*/100, /*max_wait_ms=*/600000);
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  // Twenty completions 250 ms apart: 4 requests per second drain.
  std::vector<std::shared_ptr<RecordingWaiter>> waiters;
  for (int i = 0; i < 20; ++i) {
    waiters.push_back(std::make_shared<RecordingWaiter>());
    enter(waiters.back());
    finish(milliseconds(250));
    take_slot();
  }
  // 39 more wait: a 40th arrival on a full queue is 40 ahead at 4/s = 10 s.
  configure(/*max_requests=*/39, /*max_wait_ms=*/600000);
  for (int i = 0; i < 39; ++i) enter(std::make_shared<RecordingWaiter>());
  ASSERT_EQ(queue_.depth(), 39u);
  const QueueAdmission shed = enter(std::make_shared<RecordingWaiter>());
  ASSERT_EQ(shed.kind, QueueAdmission::Kind::kShed);
  EXPECT_EQ(shed.retry_after_s, 10u);
}

TEST_F(RouteQueueTest, RefusedAtOnceWhenTheDrainCannotReachItInTime) {
  configure(/*max_requests=*/100, /*max_wait_ms=*/2000);
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  for (int i = 0; i < 20; ++i) {
    enter(std::make_shared<RecordingWaiter>());
    finish(milliseconds(250));  // 4 per second
    take_slot();
  }
  // 2 s at 4/s drains 8: the 8th waits, the 9th would not be served in time.
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(enter(std::make_shared<RecordingWaiter>()).kind, QueueAdmission::Kind::kQueued);
  }
  const QueueAdmission ninth = enter(std::make_shared<RecordingWaiter>());
  EXPECT_EQ(ninth.kind, QueueAdmission::Kind::kShed);
  EXPECT_EQ(ninth.reason, ShedReason::kPredictedWait);
  EXPECT_EQ(ninth.retry_after_s, 3u);  // ceil(9 / 4)
}

TEST_F(RouteQueueTest, WithoutAMeasuredRateTheWaitDecides) {
  configure(/*max_requests=*/100, /*max_wait_ms=*/2000);
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto w = std::make_shared<RecordingWaiter>();
  const QueueAdmission a = enter(w);
  ASSERT_EQ(a.kind, QueueAdmission::Kind::kQueued);
  clock_.advance(milliseconds(2000));
  const std::optional<uint32_t> retry_after = queue_.expire(a.id);
  ASSERT_TRUE(retry_after.has_value());
  EXPECT_EQ(*retry_after, 2u);  // no rate measured: the queue's own bound
  EXPECT_FALSE(queue_.expire(a.id).has_value());
  EXPECT_FALSE(w->verdict.has_value());
}

TEST_F(RouteQueueTest, NoAvailableCandidateIsLeftToTheAttemptLoop) {
  capacity_->available = false;
  EXPECT_EQ(queue_.enter(QueueTicket{}, std::make_shared<RecordingWaiter>()).kind,
            QueueAdmission::Kind::kGo);
}

// Waiting requests whose every candidate goes out (an engine died, breakers opened) leave at the
// next poke, to the attempt loop's answer, instead of waiting out max_wait_ms for a 429.
TEST_F(RouteQueueTest, WaitingRequestsLeaveWhenNoCandidateIsAvailableAnyMore) {
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  auto hi = std::make_shared<RecordingWaiter>();
  auto lo = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(lo, /*band=*/1).kind, QueueAdmission::Kind::kQueued);
  ASSERT_EQ(enter(hi, /*band=*/6).kind, QueueAdmission::Kind::kQueued);
  capacity_->available = false;
  clock_.advance(milliseconds(200));
  queue_.poke();
  ASSERT_TRUE(hi->verdict.has_value());
  ASSERT_TRUE(lo->verdict.has_value());
  EXPECT_EQ(hi->verdict->kind, QueueVerdict::Kind::kDispatch);
  EXPECT_EQ(lo->verdict->kind, QueueVerdict::Kind::kDispatch);
  EXPECT_EQ(queue_.depth(), 0u);
}

TEST_F(RouteQueueTest, FairnessAcrossTenantsInCost) {
  configure(/*max_requests=*/1000);
  enter(std::make_shared<RecordingWaiter>());
  enter(std::make_shared<RecordingWaiter>());
  struct Tagged {
    std::shared_ptr<RecordingWaiter> w;
    char tenant;
  };
  std::vector<Tagged> all;
  for (int i = 0; i < 200; ++i) {
    all.push_back({std::make_shared<RecordingWaiter>(), 'a'});
    enter(all.back().w, 4, "a", 8000);
    all.push_back({std::make_shared<RecordingWaiter>(), 'b'});
    enter(all.back().w, 4, "b", 2000);
  }
  for (int i = 0; i < 100; ++i) {
    finish();
    take_slot();
  }
  int a = 0, b = 0;
  for (const auto& t : all) {
    if (t.w->verdict) (t.tenant == 'a' ? a : b)++;
  }
  EXPECT_EQ(a + b, 100);
  EXPECT_NEAR(static_cast<double>(b) / a, 4.0, 0.3) << a << " vs " << b;
}

// A dispatched request the queue may displace; records the stop.
class RecordingTarget final : public PreemptTarget {
 public:
  void stop() override { ++stops; }
  int stops = 0;
};

// Preemption (SPEC §19): band 6 preempts. A band-6 arrival that must wait displaces the most
// recently dispatched request of the lowest band below it whose answer has not begun, once; the
// displaced request's slot, once released, goes to the arrival.
TEST_F(RouteQueueTest, APreemptingBandDisplacesTheNewestLowestBandRequestNotYetAnswering) {
  QueueSettings settings{.max_requests = 8, .max_wait_ms = 30000};
  settings.preempt[6] = true;
  queue_.configure(capacity_, settings, {});
  capacity_->slots = 3;
  EXPECT_TRUE(queue_.registers(4));
  EXPECT_FALSE(queue_.registers(6));
  // Three running: band 1 (older), band 1 (newer, already answering), band 2.
  auto older = std::make_shared<RecordingTarget>();
  auto answering = std::make_shared<RecordingTarget>();
  auto band2 = std::make_shared<RecordingTarget>();
  for (int i = 0; i < 3; ++i) enter(std::make_shared<RecordingWaiter>());
  const uint64_t older_id = queue_.register_running(1, "a", older);
  queue_.register_running(1, "a", answering);
  queue_.register_running(2, "a", band2);
  ASSERT_TRUE(answering->begin_answer());

  // A band-4 arrival waits and displaces nobody: band 4 does not preempt.
  auto w4 = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(w4, 4).kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(older->stops + answering->stops + band2->stops, 0);

  // A band-6 arrival: the newer band-1 request is answering, so the older one is displaced.
  auto w6 = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(w6, 6).kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(older->stops, 1);
  EXPECT_TRUE(older->displaced());
  EXPECT_FALSE(older->begin_answer()) << "a displaced request must not answer";
  EXPECT_EQ(answering->stops, 0);
  EXPECT_FALSE(answering->displaced());
  EXPECT_EQ(band2->stops, 0);

  // The displaced request ends without completing: its slot goes to band 6, not band 4.
  queue_.unregister(older_id);
  --capacity_->busy;
  queue_.released(false);
  ASSERT_TRUE(w6->verdict.has_value());
  EXPECT_EQ(w6->verdict->kind, QueueVerdict::Kind::kDispatch);
  EXPECT_FALSE(w4->verdict.has_value());
  take_slot();

  // A second band-6 arrival: band 1 has no candidate left (one displaced, one answering), so
  // band 2's request goes.
  ASSERT_EQ(enter(std::make_shared<RecordingWaiter>(), 6).kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(band2->stops, 1);
  // A third finds none: it just waits.
  ASSERT_EQ(enter(std::make_shared<RecordingWaiter>(), 6).kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(older->stops + answering->stops + band2->stops, 2);
}

// fair_preempt: within a band, a tenant holding fewer running requests displaces the newest
// not-yet-answering request of the tenant holding the most, when that is two or more above its
// own; the slot it frees goes to that arrival, ahead of the requests already waiting.
TEST_F(RouteQueueTest, FairPreemptDisplacesTheHeaviestTenantsNewestRequestForALighterTenant) {
  QueueSettings settings{.max_requests = 16, .max_wait_ms = 30000};
  settings.fair_preempt = true;
  queue_.configure(capacity_, settings, {});
  capacity_->slots = 4;
  EXPECT_TRUE(queue_.registers(4));
  // Tenant a holds three slots, tenant b one; a's newest has begun its answer.
  std::vector<std::shared_ptr<RecordingTarget>> a;
  std::vector<uint64_t> a_ids;
  for (int i = 0; i < 3; ++i) {
    enter(std::make_shared<RecordingWaiter>(), 4, "a");
    a.push_back(std::make_shared<RecordingTarget>());
    a_ids.push_back(queue_.register_running(4, "a", a.back()));
  }
  enter(std::make_shared<RecordingWaiter>(), 4, "b");
  auto b = std::make_shared<RecordingTarget>();
  queue_.register_running(4, "b", b);
  ASSERT_TRUE(a[2]->begin_answer());
  // a waits too: a tenant displaces nobody of its own, and none of a lighter tenant.
  auto a_waiting = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(a_waiting, 4, "a").kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(a[0]->stops + a[1]->stops + a[2]->stops + b->stops, 0);

  // b (1 held) against a (3 held): a's newest open request, the second, is displaced.
  auto b_waiting = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(b_waiting, 4, "b").kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(a[1]->stops, 1);
  EXPECT_EQ(a[0]->stops + a[2]->stops + b->stops, 0);
  // Its slot goes to b, though a's request waited first.
  queue_.unregister(a_ids[1]);
  --capacity_->busy;
  queue_.released(false);
  ASSERT_TRUE(b_waiting->verdict.has_value());
  EXPECT_FALSE(a_waiting->verdict.has_value());
  take_slot();
  auto b2 = std::make_shared<RecordingTarget>();
  queue_.register_running(4, "b", b2);

  // Now a holds two (one displaceable) and b two: no tenant is two above the other.
  ASSERT_EQ(enter(std::make_shared<RecordingWaiter>(), 4, "b").kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(a[0]->stops, 0);
  // A different band is never touched by fairness.
  ASSERT_EQ(enter(std::make_shared<RecordingWaiter>(), 5, "c").kind, QueueAdmission::Kind::kQueued);
  EXPECT_EQ(a[0]->stops + b->stops + b2->stops, 0);
}

// fair_reserve: once a light tenant (two or more fewer running requests than the band's
// heaviest) has arrived, the route's last `fair_reserve` free slots go only to light tenants,
// at enter() and at dispatch alike; a second later, anyone may take them again.
TEST_F(RouteQueueTest, FairReserveKeepsTheLastFreeSlotsForALightTenant) {
  QueueSettings settings{.max_requests = 16, .max_wait_ms = 30000};
  settings.fair_reserve = 2;
  queue_.configure(capacity_, settings, {});
  capacity_->slots = 6;
  EXPECT_TRUE(queue_.registers(4));
  const auto run = [&](const char* tenant) {
    ASSERT_EQ(enter(std::make_shared<RecordingWaiter>(), 4, tenant).kind,
              QueueAdmission::Kind::kGo);
    queue_.register_running(4, tenant, std::make_shared<RecordingTarget>());
  };
  // Alone, a may take every slot but the last two at once, and those too while no light tenant
  // has come.
  run("a");
  run("a");
  run("a");
  // b holds none against a's three: light. It goes, and from now on the last two are kept.
  run("b");
  EXPECT_EQ(capacity_->room(clock_.now()).free, 2u);
  auto a_waiting = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(a_waiting, 4, "a").kind, QueueAdmission::Kind::kQueued);
  EXPECT_FALSE(a_waiting->verdict.has_value());
  // Nor does a dispatch pass give them to it (as when a request of another route ends).
  queue_.released();
  EXPECT_FALSE(a_waiting->verdict.has_value());
  // b's next request takes one of them, though a's waited first.
  auto b_waiting = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(b_waiting, 4, "b").kind, QueueAdmission::Kind::kQueued);
  ASSERT_TRUE(b_waiting->verdict.has_value());
  EXPECT_EQ(b_waiting->verdict->kind, QueueVerdict::Kind::kDispatch);
  EXPECT_FALSE(a_waiting->verdict.has_value());
  take_slot();
  queue_.register_running(4, "b", std::make_shared<RecordingTarget>());
  // b now holds two against a's three: no longer light, so b too leaves the last slot alone.
  auto b_third = std::make_shared<RecordingWaiter>();
  ASSERT_EQ(enter(b_third, 4, "b").kind, QueueAdmission::Kind::kQueued);
  EXPECT_FALSE(b_third->verdict.has_value());
  // A second after b's last light arrival the reserve lapses: the waiting go, in the queue's order.
  clock_.advance(RouteQueue::kReserveWindow);
  queue_.poke();
  ASSERT_TRUE(a_waiting->verdict.has_value());
  EXPECT_EQ(a_waiting->verdict->kind, QueueVerdict::Kind::kDispatch);
  EXPECT_FALSE(b_third->verdict.has_value());  // one free slot, and a's turn came first
}

// Without a light tenant, fair_reserve keeps nothing: one tenant alone fills the route.
TEST_F(RouteQueueTest, FairReserveKeepsNothingForATenantAlone) {
  QueueSettings settings{.max_requests = 16, .max_wait_ms = 30000};
  settings.fair_reserve = 2;
  queue_.configure(capacity_, settings, {});
  capacity_->slots = 3;
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(enter(std::make_shared<RecordingWaiter>(), 4, "a").kind, QueueAdmission::Kind::kGo);
    queue_.register_running(4, "a", std::make_shared<RecordingTarget>());
  }
  EXPECT_EQ(capacity_->room(clock_.now()).free, 0u);
}

// With room, a preempting band displaces nothing: it goes at once.
TEST_F(RouteQueueTest, APreemptingBandDisplacesNothingWhileThereIsRoom) {
  QueueSettings settings{.max_requests = 8, .max_wait_ms = 30000};
  settings.preempt[6] = true;
  queue_.configure(capacity_, settings, {});
  enter(std::make_shared<RecordingWaiter>());
  auto low = std::make_shared<RecordingTarget>();
  queue_.register_running(0, "a", low);
  EXPECT_EQ(enter(std::make_shared<RecordingWaiter>(), 6).kind, QueueAdmission::Kind::kGo);
  EXPECT_EQ(low->stops, 0);
  EXPECT_FALSE(low->displaced());
}

}  // namespace
}  // namespace rolter
