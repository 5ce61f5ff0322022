#include "collect/follow/snapshot_follower.h"

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "collect/follow/saved_snapshot.h"
#include "collect/follow/testing/scripted_control_plane.h"
#include "observe/metrics.h"

namespace rolter {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kToken = "s3cret-node-token";

// Always the top draw: every wait is (just under) its ceiling, so the delays are known.
class TopRandom final : public Random {
 public:
  uint64_t next_u64() override { return ~uint64_t{0}; }
};

// Keeps every log line, formatted without a pattern, with its level.
class CapturingSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::vector<std::pair<spdlog::level::level_enum, std::string>> lines() {
    std::lock_guard lock(mutex_);
    return lines_;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines_.emplace_back(msg.level, std::string(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  std::vector<std::pair<spdlog::level::level_enum, std::string>> lines_;
};

// The apply step: records every call; a document containing "broken" is refused.
class Applier {
 public:
  SnapshotFollower::Apply callback() {
    return [this](const std::string& toml, uint64_t version) -> std::vector<std::string> {
      std::lock_guard lock(mu_);
      calls_.emplace_back(toml, version);
      if (toml.find("broken") != std::string::npos) return {"rolter.toml:1: routes: broken"};
      return {};
    };
  }
  std::vector<std::pair<std::string, uint64_t>> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::vector<std::pair<std::string, uint64_t>> calls_;
};

ScriptedAnswer document(uint64_t version, std::string toml) {
  return ScriptedAnswer{.status = 200,
                        .body = std::move(toml),
                        .headers = {{"x-rolter-snapshot-version", std::to_string(version)},
                                    {"content-type", "application/toml"}}};
}

// Polls `done` until it holds or 10 s pass: the deadline only turns a hang into a failure.
template <typename Done>
bool eventually(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class SnapshotFollowerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rolter_follow_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    state_dir_ = std::string(pattern) + "/state";
    sink_ = std::make_shared<CapturingSink>();
    previous_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink_));
  }
  void TearDown() override {
    spdlog::set_default_logger(previous_logger_);
    fs::remove_all(fs::path(state_dir_).parent_path());
  }

  // Backoff waits of (just under) 100, 200, 400, 400... ms.
  SnapshotFollower::Options options(const std::string& url) {
    return {.control_plane = url,
            .node_id = "node-1",
            .node_token = kToken,
            .node_version = "1.2.3",
            .state_dir = state_dir_,
            .backoff_min = milliseconds(100),
            .backoff_max = milliseconds(400)};
  }
  // Backoff so long that a test passing within its 10 s deadline proves no backoff was taken.
  SnapshotFollower::Options no_backoff_options(const std::string& url) {
    auto o = options(url);
    o.backoff_min = o.backoff_max = seconds(60);
    return o;
  }
  std::string exposition() { return prometheus::TextSerializer().Serialize(metrics_.collect()); }
  size_t log_lines_with(spdlog::level::level_enum level, const std::string& text) {
    size_t n = 0;
    for (const auto& [l, line] : sink_->lines()) n += l == level && line.find(text) != line.npos;
    return n;
  }

  std::string state_dir_;
  std::shared_ptr<CapturingSink> sink_;
  std::shared_ptr<spdlog::logger> previous_logger_;
  Metrics metrics_;
  TopRandom random_;
  Applier applier_;
};

// The first poll asks for version 0 with the node's four headers; a 200 is applied, saved and
// served; the next poll asks for that version; a 304 is followed by another poll at once.
TEST_F(SnapshotFollowerTest, PollsAppliesAndRepollsAfterNotModified) {
  ScriptedControlPlane cp;
  const std::string doc = "[[routes]]\nname = \"qwen3\"\n";
  cp.script({document(7, doc), ScriptedAnswer{.status = 304}});
  SnapshotFollower follower(no_backoff_options(cp.url()), applier_.callback(), &metrics_, random_);
  follower.start();
  ASSERT_TRUE(follower.wait_first(seconds(10)));
  ASSERT_TRUE(cp.wait_requests(3));  // the third follows the 304 at once: no 60 s backoff

  const auto requests = cp.requests();
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].target, "/internal/snapshot?version=0");
  EXPECT_EQ(requests[0].header("authorization"), std::string("Bearer ") + kToken);
  EXPECT_EQ(requests[0].header("x-rolter-node-id"), "node-1");
  EXPECT_EQ(requests[0].header("x-rolter-node-version"), "1.2.3");
  EXPECT_EQ(requests[0].header("x-rolter-snapshot-version"), "0");
  for (size_t i : {1, 2}) {
    EXPECT_EQ(requests[i].target, "/internal/snapshot?version=7") << i;
    EXPECT_EQ(requests[i].header("x-rolter-snapshot-version"), "7") << i;
  }
  EXPECT_EQ(applier_.calls(), (std::vector<std::pair<std::string, uint64_t>>{{doc, 7}}));
  EXPECT_EQ(follower.serving_version(), 7u);
  EXPECT_TRUE(follower.control_plane_up());
  const auto counts = follower.counts();
  EXPECT_EQ(counts.updated, 1u);
  EXPECT_EQ(counts.not_modified, 1u);
  EXPECT_EQ(counts.errors, 0u);
  follower.stop();

  const std::string text = exposition();
  EXPECT_NE(text.find("rolter_snapshot_fetches_total{result=\"updated\"} 1"), text.npos) << text;
  EXPECT_NE(text.find("rolter_snapshot_fetches_total{result=\"not_modified\"} 1"), text.npos);
  EXPECT_NE(text.find("rolter_snapshot_version 7"), text.npos) << text;
  EXPECT_NE(text.find("rolter_control_plane_up 1"), text.npos) << text;
}

// 500s and a closed connection are waited out with a doubling bound (100, 200, 400, 400 ms here);
// the run of failures is logged when it starts and when its cause changes, then its end.
TEST_F(SnapshotFollowerTest, FailuresBackOffAndRecover) {
  ScriptedControlPlane cp;
  const ScriptedAnswer error{.status = 500, .body = "database unavailable"};
  cp.script({error, error, error, ScriptedAnswer{.close = true}, document(3, "a = 1\n")});
  SnapshotFollower follower(options(cp.url()), applier_.callback(), &metrics_, random_);
  follower.start();
  ASSERT_TRUE(follower.wait_first(seconds(10)));
  ASSERT_TRUE(cp.wait_requests(5));
  follower.stop();

  const auto requests = cp.requests();
  const std::vector<milliseconds> at_least = {milliseconds(99), milliseconds(199),
                                              milliseconds(399), milliseconds(399)};
  for (size_t i = 0; i < at_least.size(); ++i) {
    EXPECT_GE(requests[i + 1].at - requests[i].at, at_least[i]) << "wait before request " << i + 1;
    EXPECT_EQ(requests[i + 1].target, "/internal/snapshot?version=0");
  }
  EXPECT_EQ(follower.counts().errors, 4u);
  EXPECT_EQ(follower.counts().updated, 1u);
  EXPECT_EQ(follower.serving_version(), 3u);
  EXPECT_EQ(log_lines_with(spdlog::level::warn, "failed"), 2u);
  EXPECT_EQ(log_lines_with(spdlog::level::warn, "status 500: database unavailable"), 1u);
  EXPECT_EQ(log_lines_with(spdlog::level::info, "reachable again after 4 failures"), 1u);
  const std::string text = exposition();
  EXPECT_NE(text.find("rolter_snapshot_fetches_total{result=\"error\"} 4"), text.npos) << text;
}

// A refused connection counts as an error and marks the control plane down.
TEST_F(SnapshotFollowerTest, RefusedConnectionMarksControlPlaneDown) {
  SnapshotFollower follower(options(refused_control_plane_url()), applier_.callback(), &metrics_,
                            random_);
  follower.start();
  ASSERT_TRUE(eventually([&] { return follower.counts().errors >= 2; }));
  follower.stop();
  EXPECT_FALSE(follower.control_plane_up());
  EXPECT_EQ(follower.serving_version(), 0u);
  EXPECT_FALSE(follower.wait_first(milliseconds(0)));
  EXPECT_EQ(log_lines_with(spdlog::level::warn, "connecting"), 1u);
  EXPECT_NE(exposition().find("rolter_control_plane_up 0"), std::string::npos);
}

// An applied document is saved; a node restarted while the control plane is down serves it, and
// start() applies it before the first poll, which then asks for its version.
TEST_F(SnapshotFollowerTest, SavedSnapshotServesARestartWhileControlPlaneIsDown) {
  const std::string doc = "[[routes]]\nname = \"saved\"\n";
  {
    ScriptedControlPlane cp;
    cp.script({document(5, doc)});
    SnapshotFollower follower(options(cp.url()), applier_.callback(), &metrics_, random_);
    EXPECT_FALSE(follower.load_saved());  // nothing saved yet
    follower.start();
    ASSERT_TRUE(follower.wait_first(seconds(10)));
    ASSERT_TRUE(cp.wait_requests(2));
  }
  const std::string saved = read_file(saved_snapshot_path(state_dir_));
  EXPECT_EQ(saved.rfind("# rolter snapshot version 5 from http://127.0.0.1:", 0), 0u) << saved;
  EXPECT_EQ(saved.substr(saved.find('\n') + 1), doc);

  Applier restarted;
  SnapshotFollower down(options(refused_control_plane_url()), restarted.callback(), &metrics_,
                        random_);
  ASSERT_TRUE(down.load_saved());
  EXPECT_EQ(restarted.calls(), (std::vector<std::pair<std::string, uint64_t>>{{doc, 5}}));
  EXPECT_EQ(down.serving_version(), 5u);
  EXPECT_TRUE(down.wait_first(milliseconds(0)));
  down.start();
  ASSERT_TRUE(eventually([&] { return down.counts().errors >= 1; }));
  down.stop();
  EXPECT_EQ(down.serving_version(), 5u);
  EXPECT_EQ(restarted.calls().size(), 1u);

  ScriptedControlPlane cp;
  Applier again;
  SnapshotFollower up(options(cp.url()), again.callback(), &metrics_, random_);
  up.start();  // no load_saved(): start() does it first
  ASSERT_TRUE(cp.wait_requests(1));
  EXPECT_EQ(again.calls().size(), 1u);
  EXPECT_EQ(cp.requests()[0].target, "/internal/snapshot?version=5");
  EXPECT_EQ(cp.requests()[0].header("x-rolter-snapshot-version"), "5");
}

// A document `apply` refuses is logged, not saved and not served; the next poll (at once) asks
// for its version, while x-rolter-snapshot-version names the one still served.
TEST_F(SnapshotFollowerTest, RejectedDocumentKeepsTheOldOne) {
  ScriptedControlPlane cp;
  cp.script({document(1, "good = 1\n"), document(2, "broken = 1\n")});
  SnapshotFollower follower(no_backoff_options(cp.url()), applier_.callback(), &metrics_, random_);
  follower.start();
  ASSERT_TRUE(cp.wait_requests(3));
  follower.stop();

  const auto requests = cp.requests();
  EXPECT_EQ(requests[2].target, "/internal/snapshot?version=2");
  EXPECT_EQ(requests[2].header("x-rolter-snapshot-version"), "1");
  EXPECT_EQ(applier_.calls().size(), 2u);
  EXPECT_EQ(follower.serving_version(), 1u);
  EXPECT_EQ(follower.seen_version(), 2u);
  EXPECT_EQ(follower.counts().rejected, 1u);
  EXPECT_EQ(follower.counts().errors, 0u);
  EXPECT_EQ(log_lines_with(spdlog::level::err, "rolter.toml:1: routes: broken"), 1u);
  EXPECT_EQ(log_lines_with(spdlog::level::err, "still serving version 1"), 1u);
  auto saved = read_saved_snapshot(state_dir_);
  ASSERT_TRUE(saved && *saved);
  EXPECT_EQ((*saved)->version, 1u);
  EXPECT_EQ((*saved)->toml, "good = 1\n");
  const std::string text = exposition();
  EXPECT_NE(text.find("rolter_snapshot_fetches_total{result=\"rejected\"} 1"), text.npos);
  EXPECT_NE(text.find("rolter_snapshot_version 1"), text.npos) << text;
}

// 401 and 403 back off and log an error naming the cause, never the token.
TEST_F(SnapshotFollowerTest, RefusedTokenBacksOffAndLogsWithoutTheToken) {
  const struct {
    unsigned status;
    const char* cause;
  } kCases[] = {{401, "status 401: the control plane refused the node token"},
                {403, "status 403: the control plane refused the node token"}};
  for (const auto& c : kCases) {
    ScriptedControlPlane cp;
    cp.script({ScriptedAnswer{.status = c.status, .body = std::string("bad token ") + kToken},
               ScriptedAnswer{.status = c.status}});
    SnapshotFollower follower(options(cp.url()), applier_.callback(), &metrics_, random_);
    follower.start();
    ASSERT_TRUE(cp.wait_requests(3));
    follower.stop();
    const auto requests = cp.requests();
    EXPECT_GE(requests[1].at - requests[0].at, milliseconds(99)) << c.status;
    EXPECT_GE(requests[2].at - requests[1].at, milliseconds(199)) << c.status;
    EXPECT_FALSE(follower.control_plane_up());
    EXPECT_EQ(log_lines_with(spdlog::level::err, c.cause), 1u) << c.status;
  }
  for (const auto& [level, line] : sink_->lines()) {
    EXPECT_EQ(line.find(kToken), std::string::npos) << line;
  }
}

// stop() ends a poll the control plane holds, at once: well before the hold would end.
TEST_F(SnapshotFollowerTest, StopInterruptsALongPoll) {
  ScriptedControlPlane cp;  // its fallback holds every poll for 60 s
  cp.script({document(1, "a = 1\n")});
  SnapshotFollower follower(options(cp.url()), applier_.callback(), &metrics_, random_);
  follower.start();
  ASSERT_TRUE(cp.wait_requests(2));
  const auto before = std::chrono::steady_clock::now();
  follower.stop();
  EXPECT_LT(std::chrono::steady_clock::now() - before, seconds(5));
  EXPECT_EQ(cp.answered(), 1u);  // the held poll was never answered
}

}  // namespace
}  // namespace rolter
