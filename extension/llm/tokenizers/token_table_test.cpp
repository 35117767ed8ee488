#include "extension/llm/tokenizers/token_table.h"

#include <gtest/gtest.h>

#include <string>

namespace torchlight {
namespace {

TEST(TokenTable, AddFindBytes) {
  TokenTable t;
  EXPECT_EQ(t.find("a"), -1);
  EXPECT_EQ(t.add(5, "hello"), TokenTable::AddResult::kAdded);
  EXPECT_EQ(t.add(0, std::string("\0x", 2)), TokenTable::AddResult::kAdded);
  EXPECT_EQ(t.find("hello"), 5);
  EXPECT_EQ(t.find(std::string("\0x", 2)), 0);
  EXPECT_EQ(t.find("hell"), -1);
  EXPECT_EQ(t.bytes(5), "hello");
  EXPECT_TRUE(t.contains(5));
  EXPECT_FALSE(t.contains(3));
  EXPECT_EQ(t.bytes(3), "");
  EXPECT_EQ(t.id_limit(), 6);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.max_token_bytes(), 5u);
}

TEST(TokenTable, RejectsDuplicatesAndRange) {
  TokenTable t;
  EXPECT_EQ(t.add(1, "a"), TokenTable::AddResult::kAdded);
  EXPECT_EQ(t.add(1, "b"), TokenTable::AddResult::kDuplicateId);
  EXPECT_EQ(t.bytes(1), "a");
  EXPECT_EQ(t.add(-1, "c"), TokenTable::AddResult::kIdOutOfRange);
  EXPECT_EQ(t.add(TokenTable::kMaxId + 1, "c"), TokenTable::AddResult::kIdOutOfRange);
  // Equal bytes: added, and find() answers the lowest id.
  EXPECT_EQ(t.add(7, "a"), TokenTable::AddResult::kDuplicateBytes);
  EXPECT_EQ(t.find("a"), 1);
  EXPECT_EQ(t.add(0, "a"), TokenTable::AddResult::kDuplicateBytes);
  EXPECT_EQ(t.find("a"), 0);
  EXPECT_EQ(t.bytes(7), "a");
}

// The id table is dense: an id far beyond the tokens added (a few bytes of
// a hostile file) would cost gigabytes, so it is out of range.
TEST(TokenTable, IdsMayNotRunFarAheadOfTheTokens) {
  TokenTable t;
  EXPECT_EQ(t.accepted_id_limit(), TokenTable::kMaxIdGap);
  EXPECT_EQ(t.add(TokenTable::kMaxId, "far"), TokenTable::AddResult::kIdOutOfRange);
  EXPECT_EQ(t.add(TokenTable::kMaxIdGap, "far"), TokenTable::AddResult::kIdOutOfRange);
  EXPECT_EQ(t.id_limit(), 0) << "nothing allocated";
  EXPECT_EQ(t.add(TokenTable::kMaxIdGap - 1, "last"), TokenTable::AddResult::kAdded);
  // Each token added lets ids run two further.
  EXPECT_EQ(t.accepted_id_limit(), TokenTable::kMaxIdGap + 2);
  EXPECT_EQ(t.add(TokenTable::kMaxIdGap + 1, "next"), TokenTable::AddResult::kAdded);
}

TEST(TokenTable, ManyTokensSurviveRehashing) {
  TokenTable t;
  for (int i = 0; i < 20000; ++i) {
    ASSERT_EQ(t.add(i, "tok" + std::to_string(i)), TokenTable::AddResult::kAdded);
  }
  // Duplicates added during growth still resolve to the lowest id.
  ASSERT_EQ(t.add(20000, "tok17"), TokenTable::AddResult::kDuplicateBytes);
  for (int i = 0; i < 20000; ++i) ASSERT_EQ(t.find("tok" + std::to_string(i)), i);
  EXPECT_EQ(t.find("tok20000"), -1);
  EXPECT_EQ(t.bytes(20000), "tok17");
}

}  // namespace
}  // namespace torchlight
