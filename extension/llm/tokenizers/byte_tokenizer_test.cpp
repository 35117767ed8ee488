#include "extension/llm/tokenizers/byte_tokenizer.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using Ids = std::vector<int32_t>;

std::unique_ptr<ByteTokenizer> make(const ByteTokenizerOptions& options = {}) {
  auto tokenizer = ByteTokenizer::create(options);
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().message();
  return std::move(tokenizer.get());
}

TEST(ByteTokenizerTest, IdsAreBytes) {
  auto tok = make();
  EXPECT_EQ(tok->vocab_size(), 256);
  EXPECT_EQ(tok->bos_id(), -1);
  EXPECT_EQ(tok->eos_id(), -1);
  Ids ids = {99};  // replaced, not appended to
  ASSERT_TRUE(tok->encode("Hi \xC3\xA9", false, false, &ids).ok());
  EXPECT_EQ(ids, (Ids{72, 105, 32, 0xC3, 0xA9}));
  ASSERT_TRUE(tok->encode("", false, false, &ids).ok());
  EXPECT_TRUE(ids.empty());
}

TEST(ByteTokenizerTest, EveryByteRoundTrips) {
  auto tok = make();
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  Ids ids;
  ASSERT_TRUE(tok->encode(all, false, false, &ids).ok());
  ASSERT_EQ(ids.size(), 256u);
  for (int b = 0; b < 256; ++b) EXPECT_EQ(ids[b], b);
  std::string back;
  ASSERT_TRUE(decode_all(*tok, Span<const int32_t>(ids.data(), ids.size()), &back).ok());
  EXPECT_EQ(back, all);
}

TEST(ByteTokenizerTest, DecodeRejectsIdsOutsideTheVocabulary) {
  auto tok = make();
  for (int32_t id : {-1, 256, 1000}) {
    auto piece = tok->decode(-1, id);
    ASSERT_FALSE(piece.ok()) << id;
    EXPECT_THAT(piece, ErrorIs(Error::kInvalidArgument));
    EXPECT_NE(std::string(piece.status().message()).find(std::to_string(id)), std::string::npos);
  }
}

TEST(ByteTokenizerTest, BosAndEosOnlyWhenConfigured) {
  auto plain = make();
  Ids ids;
  EXPECT_THAT(plain->encode("a", true, false, &ids),
              ErrorIs(Error::kInvalidArgument,
                      "BOS requested, but this byte tokenizer has no BOS token"));
  EXPECT_THAT(plain->encode("a", false, true, &ids),
              ErrorIs(Error::kInvalidArgument,
                      "EOS requested, but this byte tokenizer has no EOS token"));
  EXPECT_THAT(plain->encode("a", false, false, nullptr),
              ErrorIs(Error::kInvalidArgument, "null output vector"));

  auto with_specials = make({/*bos_id=*/256, /*eos_id=*/257});
  EXPECT_EQ(with_specials->vocab_size(), 258);
  ASSERT_TRUE(with_specials->encode("a", true, true, &ids).ok());
  EXPECT_EQ(ids, (Ids{256, 97, 257}));
  auto bos = with_specials->decode(-1, 256);
  ASSERT_TRUE(bos.ok());
  EXPECT_EQ(*bos, "");
  auto eos = with_specials->decode(97, 257);
  ASSERT_TRUE(eos.ok());
  EXPECT_EQ(*eos, "");

  auto eos_only = make({-1, 256});
  EXPECT_EQ(eos_only->vocab_size(), 257);
  EXPECT_FALSE(eos_only->decode(-1, 257).ok());
}

TEST(ByteTokenizerTest, RejectsBadSpecialIds) {
  EXPECT_THAT(ByteTokenizer::create({65, -1}),
              ErrorIs(Error::kInvalidArgument,
                      "id must be -1 (none), 256 or 257, got 65"));  // a byte
  EXPECT_THAT(ByteTokenizer::create({-1, 300}),
              ErrorIs(Error::kInvalidArgument, "id must be -1 (none), 256 or 257, got 300"));
  EXPECT_THAT(ByteTokenizer::create({256, 256}),
              ErrorIs(Error::kInvalidArgument, "BOS and EOS must be different ids, both are 256"));
}

}  // namespace
}  // namespace torchlight
