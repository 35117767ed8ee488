// SpecialTokens and encode_around_specials, on hand-made tokens and a fake
// ordinary encoder that records the stretches it is given.
#include "extension/llm/tokenizers/special_tokens.h"

#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchlight {
namespace {

using ::testing::ElementsAre;

// Encodes a stretch as one id, its length + 1000, and records its text.
struct RecordingEncoder {
  std::vector<std::string>* stretches;
  void operator()(std::string_view text, std::vector<int32_t>* ids) const {
    stretches->emplace_back(text);
    ids->push_back(1000 + static_cast<int32_t>(text.size()));
  }
};

SpecialTokens end_and_endoftext() {
  SpecialTokens specials;
  specials.add("<|end|>", 7);
  specials.add("<|endoftext|>", 9);
  specials.add("", 3);  // Ignored: it would match everywhere.
  return specials;
}

TEST(SpecialTokensTest, FindsLeftmostThenLongest) {
  const SpecialTokens specials = end_and_endoftext();
  EXPECT_EQ(specials.size(), 2u);
  const SpecialTokens::Match m = specials.find("ab<|endoftext|><|end|>", 0);
  EXPECT_EQ(m.pos, 2u);
  EXPECT_EQ(m.size, 13u);
  EXPECT_EQ(m.id, 9);
  EXPECT_EQ(specials.find("ab<|endoftext|><|end|>", 3).id, 7);
  EXPECT_EQ(specials.find("<|en", 0).pos, std::string_view::npos);
  EXPECT_EQ(specials.id_of("<|end|>"), 7);
  EXPECT_EQ(specials.id_of("<|nope|>"), -1);
  EXPECT_EQ(specials.text_of(9), "<|endoftext|>");
  EXPECT_EQ(specials.max_id(), 9);
}

TEST(SpecialTokensTest, EncodeAroundSpecialsSplitsTheText) {
  const SpecialTokens specials = end_and_endoftext();
  std::vector<std::string> stretches;
  std::vector<int32_t> ids = {42};  // Appended to, not replaced.
  encode_around_specials(specials, true, "hi<|end|>there<|endoftext|><|end|>x", &ids,
                         RecordingEncoder{&stretches});
  EXPECT_THAT(ids, ElementsAre(42, 1002, 7, 1005, 9, 1000, 7, 1001));
  EXPECT_THAT(stretches, ElementsAre("hi", "there", "", "x"));
}

TEST(SpecialTokensTest, EncodeAroundSpecialsWithoutMatchingEncodesEverything) {
  const SpecialTokens specials = end_and_endoftext();
  std::vector<std::string> stretches;
  std::vector<int32_t> ids;
  encode_around_specials(specials, false, "a<|end|>b", &ids, RecordingEncoder{&stretches});
  EXPECT_THAT(ids, ElementsAre(1009));
  EXPECT_THAT(stretches, ElementsAre("a<|end|>b"));
}

TEST(SpecialTokensTest, EncodeAroundSpecialsOnEmptyOrOnlySpecialText) {
  const SpecialTokens specials = end_and_endoftext();
  std::vector<std::string> stretches;
  std::vector<int32_t> ids;
  encode_around_specials(specials, true, "", &ids, RecordingEncoder{&stretches});
  EXPECT_TRUE(ids.empty());
  EXPECT_TRUE(stretches.empty());
  encode_around_specials(specials, true, "<|end|>", &ids, RecordingEncoder{&stretches});
  EXPECT_THAT(ids, ElementsAre(1000, 7));  // The empty stretch before it, then the token.
  EXPECT_THAT(stretches, ElementsAre(""));
}

}  // namespace
}  // namespace torchlight
