#include "collect/follow/snapshot_applier.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <thread>

#include "collect/follow/failure_run.h"
#include "collect/follow/saved_snapshot.h"

namespace rolter {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

// A stand-in for the node's build-and-publish: documents containing "bad" are refused, "throw"
// throws; the last accepted document is kept.
struct FakeNode {
  std::vector<std::string> applied;
  std::vector<std::string> operator()(const std::string& toml, uint64_t) {
    if (toml.find("throw") != std::string::npos) throw std::runtime_error("boom");
    if (toml.find("bad") != std::string::npos) return {"line 1: bad is not a key"};
    applied.push_back(toml);
    return {};
  }
};

class SnapshotApplierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/rolter_snapshot_applier_XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }
  SnapshotApplier applier(FakeNode& node) {
    return SnapshotApplier(
        root_, [&node](const std::string& t, uint64_t v) { return node(t, v); }, nullptr);
  }
  std::string root_;
};

TEST_F(SnapshotApplierTest, AppliedDocumentsAreServedAndSaved) {
  FakeNode node;
  SnapshotApplier a = applier(node);
  EXPECT_FALSE(a.wait_first(milliseconds(0)));
  ASSERT_TRUE(a.offer("[server]\n", 3, "from http://cp"));
  EXPECT_EQ(a.serving_version(), 3u);
  EXPECT_EQ(a.seen_version(), 3u);
  EXPECT_TRUE(a.wait_first(milliseconds(0)));
  auto saved = read_saved_snapshot(root_);
  ASSERT_TRUE(saved && *saved);
  EXPECT_EQ((*saved)->version, 3u);
  EXPECT_EQ((*saved)->toml, "[server]\n");
}

TEST_F(SnapshotApplierTest, RejectedOrThrowingDocumentsKeepTheOldOneServedAndSaved) {
  FakeNode node;
  SnapshotApplier a = applier(node);
  ASSERT_TRUE(a.offer("good = 1\n", 1, "from http://cp"));
  EXPECT_FALSE(a.offer("bad = 1\n", 2, "from http://cp"));
  EXPECT_EQ(a.serving_version(), 1u);
  EXPECT_EQ(a.seen_version(), 2u);  // not asked for again
  EXPECT_FALSE(a.offer("throw = 1\n", 3, "from http://cp"));
  EXPECT_EQ(a.serving_version(), 1u);
  EXPECT_EQ(a.seen_version(), 3u);
  EXPECT_EQ(node.applied, std::vector<std::string>{"good = 1\n"});
  auto saved = read_saved_snapshot(root_);
  ASSERT_TRUE(saved && *saved);
  EXPECT_EQ((*saved)->version, 1u);
}

TEST_F(SnapshotApplierTest, ASavedDocumentIsAppliedOnceOnLoad) {
  {
    FakeNode node;
    SnapshotApplier a = applier(node);
    ASSERT_TRUE(a.offer("good = 7\n", 7, "from http://cp"));
  }
  FakeNode node;
  SnapshotApplier restarted = applier(node);
  EXPECT_TRUE(restarted.load_saved());
  EXPECT_TRUE(restarted.load_saved());  // the first answer, not a second apply
  EXPECT_EQ(node.applied, std::vector<std::string>{"good = 7\n"});
  EXPECT_EQ(restarted.serving_version(), 7u);
  EXPECT_EQ(restarted.seen_version(), 7u);
}

TEST_F(SnapshotApplierTest, ASavedDocumentThatNoLongerAppliesIsNotServed) {
  ASSERT_TRUE(write_saved_snapshot(root_, {5, "bad = 1\n"}, "from http://cp at now"));
  FakeNode node;
  SnapshotApplier a = applier(node);
  EXPECT_FALSE(a.load_saved());
  EXPECT_EQ(a.serving_version(), 0u);
  EXPECT_FALSE(a.wait_first(milliseconds(0)));
}

TEST_F(SnapshotApplierTest, WaitFirstWakesWhenAnotherThreadServes) {
  FakeNode node;
  SnapshotApplier a = applier(node);
  std::thread applying([&] { a.offer("good = 1\n", 1, "from http://cp"); });
  EXPECT_TRUE(a.wait_first(milliseconds(10000)));
  applying.join();
}

TEST(FailureRunTest, LogsTheStartOfARunItsChangesOfCauseAndItsEnd) {
  FailureRun run;
  EXPECT_EQ(run.ended(), 0u);
  EXPECT_TRUE(run.failed("connection"));
  EXPECT_FALSE(run.failed("connection"));
  EXPECT_FALSE(run.failed("connection"));
  EXPECT_TRUE(run.failed("status 503"));
  EXPECT_FALSE(run.failed("status 503"));
  EXPECT_EQ(run.ended(), 5u);
  EXPECT_EQ(run.ended(), 0u);
  EXPECT_TRUE(run.failed("status 503"));  // a new run
}

}  // namespace
}  // namespace rolter
