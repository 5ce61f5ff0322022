#include "balance/prefix/prefix_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/random.h"

namespace rolter {
namespace {

std::vector<uint32_t> match(const PrefixTree& tree, std::string_view text) {
  std::vector<uint32_t> out(tree.candidate_count(), 12345);
  tree.match(text, out);
  return out;
}

// Text of `len` bytes drawn from `alphabet`, so small alphabets give many shared prefixes.
std::string random_text(Random& random, size_t len, std::string_view alphabet) {
  std::string s(len, ' ');
  for (char& c : s) c = alphabet[random.uniform(alphabet.size())];
  return s;
}

TEST(PrefixTreeTest, MatchesLongestServedPrefixPerCandidate) {
  PrefixTree tree(3);
  tree.insert("hello world", 0);
  tree.insert("hello there", 1);
  tree.insert("help", 2);
  // "hel" {0,1,2} -> "lo " {0,1} -> "world" {0} | "there" {1};  "hel" -> "p" {2}
  EXPECT_EQ(tree.node_count(), 5u);
  struct Case {
    std::string_view text;
    std::vector<uint32_t> matched;
  };
  const Case cases[] = {
      {"hello world", {11, 6, 3}},
      {"hello world, again", {11, 6, 3}},  // longer than anything stored
      {"hello wormhole", {9, 6, 3}},       // leaves "world" after "wor"
      {"hello", {5, 5, 3}},                // ends inside the "lo " edge
      {"help me", {3, 3, 4}},
      {"hex", {2, 2, 2}},  // leaves the first edge after one shared byte
      {"x", {0, 0, 0}},
      {"", {0, 0, 0}},
  };
  for (const Case& c : cases) EXPECT_EQ(match(tree, c.text), c.matched) << c.text;
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, InsertEndingInsideAnEdgeSplitsIt) {
  PrefixTree tree(2);
  tree.insert("abcdef", 0);
  tree.insert("abc", 1);
  EXPECT_EQ(tree.node_count(), 2u);  // "abc" {0,1} -> "def" {0}
  EXPECT_EQ(match(tree, "abcdef"), (std::vector<uint32_t>{6, 3}));
  EXPECT_EQ(match(tree, "abcd"), (std::vector<uint32_t>{4, 3}));
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, LabelsAreCappedSoNodesBoundBytes) {
  PrefixTree tree(1);
  SeededRandom random(3);
  const std::string text = random_text(random, 1000, "abcdefgh");
  tree.insert(text, 0);
  EXPECT_EQ(tree.node_count(), (1000 + PrefixTree::kMaxLabel - 1) / PrefixTree::kMaxLabel);
  EXPECT_EQ(match(tree, text)[0], 1000u);
  // Leaving the path at byte 100 (inside the second label) splits it once and adds a new chain.
  std::string other = text;
  other[100] = 'z';
  tree.insert(other, 0);
  EXPECT_EQ(tree.node_count(), 16u + 1 + (900 + 63) / 64);
  EXPECT_EQ(match(tree, other)[0], 1000u);
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, TextBeyondMaxTextBytesIsNotStored) {
  PrefixTree tree(1, {.max_nodes = 100, .max_text_bytes = 10});
  tree.insert("0123456789abcdef", 0);
  EXPECT_EQ(match(tree, "0123456789abcdef")[0], 10u);
}

TEST(PrefixTreeTest, MoreThan64Candidates) {
  constexpr size_t kCandidates = 130;
  PrefixTree tree(kCandidates);
  for (size_t c : {0, 63, 64, 127, 128, 129}) tree.insert("shared prompt A", c);
  tree.insert("shared prompt B", 65);
  const auto out = match(tree, "shared prompt A");
  for (size_t c = 0; c < kCandidates; ++c) {
    const bool served_a = c == 0 || c == 63 || c == 64 || c == 127 || c == 128 || c == 129;
    EXPECT_EQ(out[c], served_a ? 15u : (c == 65 ? 14u : 0u)) << c;
  }
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, IgnoresOutOfRangeCandidateAndEmptyText) {
  PrefixTree tree(2);
  tree.insert("abc", 2);
  tree.insert("", 0);
  EXPECT_EQ(tree.node_count(), 0u);
  EXPECT_EQ(match(tree, "abc"), (std::vector<uint32_t>{0, 0}));
  // A span longer than the candidate count gets zeros past the end.
  tree.insert("abc", 1);
  std::vector<uint32_t> longer(4, 99);
  tree.match("abc", longer);
  EXPECT_EQ(longer, (std::vector<uint32_t>{0, 3, 0, 0}));
}

// Without eviction, match() must equal the brute-force answer: for each candidate, the longest
// common prefix of the text with any string inserted under it.
TEST(PrefixTreeTest, AgreesWithBruteForceOnRandomText) {
  constexpr size_t kCandidates = 5;
  SeededRandom random(11);
  PrefixTree tree(kCandidates);
  std::vector<std::pair<std::string, size_t>> inserted;
  for (int i = 0; i < 400; ++i) {
    // A two-letter alphabet and lengths around the label cap give many splits at every depth.
    std::string text = random_text(random, 1 + random.uniform(200), "ab");
    const size_t candidate = random.uniform(kCandidates);
    tree.insert(text, candidate);
    inserted.emplace_back(std::move(text), candidate);
  }
  ASSERT_EQ(tree.check_invariants(), std::nullopt);
  for (int q = 0; q < 300; ++q) {
    const std::string text = random_text(random, random.uniform(220), "ab");
    std::vector<uint32_t> expected(kCandidates, 0);
    for (const auto& [s, c] : inserted) {
      const auto n = std::min(s.size(), text.size());
      const auto at = std::mismatch(s.begin(), s.begin() + n, text.begin()).first - s.begin();
      expected[c] = std::max(expected[c], static_cast<uint32_t>(at));
    }
    ASSERT_EQ(match(tree, text), expected) << text;
  }
}

TEST(PrefixTreeTest, EvictsLeastRecentlyInsertedFirst) {
  PrefixTree tree(1, {.max_nodes = 3});
  tree.insert("aaa", 0);
  tree.insert("bbb", 0);
  tree.insert("ccc", 0);
  EXPECT_EQ(tree.lru_tail_text(), "aaa");
  tree.insert("aaa", 0);  // touched again: "bbb" is now the least recent
  EXPECT_EQ(tree.lru_tail_text(), "bbb");
  tree.insert("ddd", 0);
  EXPECT_EQ(tree.node_count(), 3u);
  const std::pair<std::string_view, uint32_t> expected[] = {
      {"aaa", 3}, {"bbb", 0}, {"ccc", 3}, {"ddd", 3}};
  for (const auto& [text, matched] : expected) EXPECT_EQ(match(tree, text)[0], matched) << text;
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, EvictsALeafBeforeTheSharedHeadAboveIt) {
  PrefixTree tree(3, {.max_nodes = 3});
  tree.insert("shared-one", 0);
  tree.insert("shared-two", 1);  // "shared-" {0,1} -> "one" {0} | "two" {1}
  EXPECT_EQ(tree.lru_tail_text(), "shared-one");
  tree.insert("zzz", 2);  // a fourth node: "one" goes, the shared head stays
  EXPECT_EQ(tree.node_count(), 3u);
  EXPECT_EQ(match(tree, "shared-one"), (std::vector<uint32_t>{7, 7, 0}));
  EXPECT_EQ(match(tree, "shared-two"), (std::vector<uint32_t>{7, 10, 0}));
  EXPECT_EQ(match(tree, "zzz"), (std::vector<uint32_t>{0, 0, 3}));
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, ATextLongerThanTheCapKeepsItsHead) {
  PrefixTree tree(1, {.max_nodes = 4});
  SeededRandom random(5);
  const std::string text = random_text(random, 1000, "xyz");
  tree.insert(text, 0);
  EXPECT_EQ(tree.node_count(), 4u);
  EXPECT_EQ(match(tree, text)[0], 4 * PrefixTree::kMaxLabel);
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

TEST(PrefixTreeTest, StaysUnderItsCapWithTenTimesAsManyPrompts) {
  constexpr size_t kCap = 1000;
  constexpr int kPrompts = 10 * kCap;
  constexpr int kRecent = 40;
  PrefixTree tree(4, {.max_nodes = kCap});
  SeededRandom random(7);
  const std::string system = "You are a helpful assistant. " + random_text(random, 150, "abcd");
  std::vector<std::string> prompts;
  size_t memory_at_half = 0;
  for (int i = 0; i < kPrompts; ++i) {
    prompts.push_back(system + std::to_string(i) + random_text(random, 200, "abcd"));
    tree.insert(prompts.back(), i % 4);
    ASSERT_LE(tree.node_count(), kCap) << "after insert " << i;
    if (i % 1000 == 999) {
      ASSERT_EQ(tree.check_invariants(), std::nullopt) << i;
    }
    if (i == kPrompts / 2) memory_at_half = tree.memory_bytes();
  }
  EXPECT_EQ(tree.memory_bytes(), memory_at_half);  // flat once the cap is reached
  for (int i = kPrompts - kRecent; i < kPrompts; ++i) {
    EXPECT_EQ(match(tree, prompts[i])[i % 4], prompts[i].size()) << "recent prompt " << i;
  }
  // The oldest prompts are gone beyond the shared system prompt.
  EXPECT_LT(match(tree, prompts[0])[0], system.size() + 10);
}

TEST(PrefixTreeTest, ConcurrentMatchesWhileInserting) {
  constexpr size_t kCandidates = 8;
  PrefixTree tree(kCandidates, {.max_nodes = 500});
  std::vector<std::string> prompts;
  SeededRandom random(9);
  for (int i = 0; i < 300; ++i) prompts.push_back("system " + random_text(random, 300, "abc"));
  constexpr int kReaders = 3;
  std::atomic<bool> done{false};
  std::atomic<int> started{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < kReaders; ++t) {
    readers.emplace_back([&, t] {
      std::vector<uint32_t> out(kCandidates);
      ++started;
      for (size_t i = t; !done.load(std::memory_order_relaxed); i = (i + 7) % prompts.size()) {
        tree.match(prompts[i], out);
        for (uint32_t m : out) bad += m > prompts[i].size();
      }
    });
  }
  while (started.load() < kReaders) std::this_thread::yield();  // so the inserts overlap matches
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < prompts.size(); ++i) tree.insert(prompts[i], i % kCandidates);
  }
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_LE(tree.node_count(), 500u);
  EXPECT_EQ(tree.check_invariants(), std::nullopt);
}

}  // namespace
}  // namespace rolter
