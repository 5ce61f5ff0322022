#include "balance/prefix/prefix_sharing.h"

#include <gtest/gtest.h>

#include <vector>

#include "balance/prefix/prefix_tree.h"

namespace rolter {
namespace {

std::vector<CandidateSpec> specs(std::initializer_list<const char*> identities) {
  std::vector<CandidateSpec> out;
  for (const char* id : identities) out.push_back(CandidateSpec{.identity = id});
  return out;
}

std::vector<uint32_t> matched(const PrefixTree& tree, std::string_view text) {
  std::vector<uint32_t> out(tree.candidate_count());
  tree.match(text, out);
  return out;
}

TEST(PrefixSharingTest, PublishedInsertionsCarryTheTreeAndTheCandidatesIdentity) {
  PrefixSharing hub;
  const auto candidates = specs({"a/m@http://a", "b/m@http://b"});
  PrefixTree tree(candidates.size());
  PrefixShareLink link(&hub, shared_tree_name("chat", "cache_aware"), candidates, tree);
  link.publish(1, "hello there");
  link.publish(7, "out of range");  // ignored
  link.publish(0, "");              // nothing to share
  const auto outbox = hub.take_outbox();
  ASSERT_EQ(outbox.size(), 1u);
  EXPECT_EQ(outbox[0].tree, "chat|cache_aware");
  EXPECT_EQ(outbox[0].candidate, "b/m@http://b");
  EXPECT_EQ(outbox[0].text, "hello there");
  EXPECT_TRUE(hub.take_outbox().empty());
}

TEST(PrefixSharingTest, DeliveryMapsIdentitiesToThisNodesIndexes) {
  PrefixSharing hub;
  // Another node listed the candidates in another order: identities, not indexes, travel.
  const auto candidates = specs({"b/m@http://b", "a/m@http://a"});
  PrefixTree tree(candidates.size());
  PrefixShareLink link(&hub, "chat|cache_aware", candidates, tree);
  EXPECT_EQ(hub.deliver({"chat|cache_aware", "a/m@http://a", "conversation one"}), 1u);
  EXPECT_EQ(matched(tree, "conversation one, turn two"), (std::vector<uint32_t>{0, 16}));
  // Another tree's or an unknown candidate's insertion goes nowhere.
  EXPECT_EQ(hub.deliver({"chat|pipeline", "a/m@http://a", "other tree"}), 0u);
  EXPECT_EQ(hub.deliver({"chat|cache_aware", "c/m@http://c", "other candidate"}), 0u);
  EXPECT_EQ(matched(tree, "other tree"), (std::vector<uint32_t>{0, 0}));
  EXPECT_EQ(hub.delivered(), 1u);
}

TEST(PrefixSharingTest, ADetachedTreeReceivesNothingAndAttachingAsksForAReplay) {
  PrefixSharing hub;
  EXPECT_FALSE(hub.take_attached());
  const auto candidates = specs({"a/m@http://a"});
  {
    PrefixTree tree(1);
    PrefixShareLink link(&hub, "chat|cache_aware", candidates, tree);
    EXPECT_TRUE(hub.take_attached());
    EXPECT_FALSE(hub.take_attached());
  }
  EXPECT_EQ(hub.deliver({"chat|cache_aware", "a/m@http://a", "after the reload"}), 0u);
}

TEST(PrefixSharingTest, AFullOutboxDropsAndCounts) {
  PrefixSharing hub(2);
  EXPECT_TRUE(hub.publish("t", "c", "1"));
  EXPECT_TRUE(hub.publish("t", "c", "2"));
  EXPECT_FALSE(hub.publish("t", "c", "3"));
  EXPECT_EQ(hub.published(), 2u);
  EXPECT_EQ(hub.dropped(), 1u);
  EXPECT_EQ(hub.take_outbox().size(), 2u);
  EXPECT_TRUE(hub.publish("t", "c", "4"));
}

TEST(PrefixSharingTest, AnUnsharedLinkDoesNothing) {
  PrefixShareLink link;
  link.publish(0, "text");  // no hub: no crash, nothing queued anywhere
}

}  // namespace
}  // namespace rolter
