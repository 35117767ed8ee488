#include "extension/llm/tokenizers/llama2c_tokenizer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "extension/llm/tokenizers/tokenizer_test_util.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using testing::TempFile;
using Ids = std::vector<int32_t>;

void put_i32(std::string* out, int32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void put_f32(std::string* out, float v) { out->append(reinterpret_cast<const char*>(&v), 4); }

struct Piece {
  std::string text;
  float score;
};

std::string write_bin(const std::vector<Piece>& pieces, int32_t max_len = 0) {
  if (max_len == 0) {
    for (const Piece& p : pieces) max_len = std::max<int32_t>(max_len, int32_t(p.text.size()));
  }
  std::string out;
  put_i32(&out, max_len);
  for (const Piece& p : pieces) {
    put_f32(&out, p.score);
    put_i32(&out, static_cast<int32_t>(p.text.size()));
    out += p.text;
  }
  return out;
}

// Laid out as llama2.c's export of a SentencePiece BPE model with byte
// fallback: <unk>, BOS, EOS, the 256 byte pieces, then merges by score.
std::vector<Piece> small_pieces() {
  std::vector<Piece> p = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    snprintf(name, sizeof(name), "<0x%02X>", b);
    p.push_back({name, 0});
  }
  p.push_back({" ", -1});             // 259
  p.push_back({"a", -2});             // 260
  p.push_back({"b", -3});             // 261
  p.push_back({"c", -4});             // 262
  p.push_back({"ab", -5});            // 263
  p.push_back({"bc", -0.5f});         // 264: the best merge
  p.push_back({" a", -6});            // 265
  p.push_back({"abc", -7});           // 266
  p.push_back({" ab", -8});           // 267
  p.push_back({"\xC3\xA9", -9});      // 268: é
  return p;
}

constexpr int32_t kByte0 = 3;

std::unique_ptr<Llama2cTokenizer> load_small(Llama2cTokenizerOptions o = {}) {
  auto r = Llama2cTokenizer::load_from_contents(write_bin(small_pieces()), "tok.bin", o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r.get()) : nullptr;
}

Ids encode(const Tokenizer& t, const std::string& text, bool bos = false, bool eos = false) {
  Ids ids = {999};
  const Status s = t.encode(text, bos, eos, &ids);
  EXPECT_TRUE(s.ok()) << s.message();
  return ids;
}

TEST(Llama2c, MergesHighestScoreFirst) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab_size(), 269);
  EXPECT_EQ(t->max_token_length(), 6);
  EXPECT_EQ(t->bos_id(), 1);
  EXPECT_EQ(t->eos_id(), 2);
  EXPECT_FLOAT_EQ(t->score(264), -0.5f);
  // " a b c": bc (-0.5) first, then " a" (-6) beats a+bc = "abc" (-7).
  EXPECT_EQ(encode(*t, "abc"), (Ids{265, 264}));
  // " a b": ab (-5) beats " a" (-6), then " " + "ab" = " ab".
  EXPECT_EQ(encode(*t, "ab"), (Ids{267}));
  EXPECT_EQ(encode(*t, "ab", true, true), (Ids{1, 267, 2}));
  // No dummy prefix for empty text.
  EXPECT_EQ(encode(*t, ""), (Ids{}));
  EXPECT_EQ(encode(*t, "", true, true), (Ids{1, 2}));
  Llama2cTokenizerOptions no_prefix;
  no_prefix.add_dummy_prefix = false;
  auto np = load_small(no_prefix);
  ASSERT_NE(np, nullptr);
  // a b c -> a bc -> abc.
  EXPECT_EQ(encode(*np, "abc"), (Ids{266}));
}

TEST(Llama2c, ByteFallback) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  // 'x' is no piece: its byte; é is a piece; € (3 bytes) falls back per byte.
  EXPECT_EQ(encode(*t, "x\xC3\xA9"), (Ids{259, kByte0 + 'x', 268}));
  EXPECT_EQ(encode(*t, "\xE2\x82\xAC"), (Ids{259, kByte0 + 0xE2, kByte0 + 0x82, kByte0 + 0xAC}));
  // Invalid UTF-8: each bad byte on its own.
  EXPECT_EQ(encode(*t, "\xFF" "a\x80"), (Ids{259, kByte0 + 0xFF, 260, kByte0 + 0x80}));
}

TEST(Llama2c, Decode) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(*t->decode(1, 265), "a");    // the space after BOS goes
  EXPECT_EQ(*t->decode(-1, 265), " a");  // run.c strips only after BOS
  EXPECT_EQ(*t->decode(260, 265), " a");
  EXPECT_EQ(*t->decode(1, kByte0 + 'A'), "A");
  EXPECT_EQ(*t->decode(5, kByte0 + 0), std::string(1, '\0'));
  EXPECT_EQ(*t->decode(5, 1), "\n<s>\n");
  EXPECT_THAT(t->decode(5, 269),
              ErrorIs(Error::kInvalidArgument, "token id 269 is outside the vocabulary [0, 269)"));
  EXPECT_THAT(t->decode(5, -1),
              ErrorIs(Error::kInvalidArgument, "token id -1 is outside the vocabulary [0, 269)"));
  const std::string text = "abc x\xC3\xA9\xE2\x82\xAC \xFF end";
  const Ids ids = encode(*t, text);
  std::string back;
  ASSERT_TRUE(decode_all(*t, Span<const int32_t>(ids.data(), ids.size()), &back).ok());
  EXPECT_EQ(back, " " + text);  // the dummy prefix stays without BOS, as in run.c
}

TEST(Llama2c, LoadErrors) {
  auto expect = [](const std::string& bin, Error code, const char* part,
                   Llama2cTokenizerOptions o = {}) {
    auto r = Llama2cTokenizer::load_from_contents(bin, "tok.bin", o);
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_EQ(r.error(), code) << r.status().message();
    EXPECT_NE(std::string(r.status().message()).find(part), std::string::npos)
        << r.status().message();
  };
  const std::string good = write_bin(small_pieces());
  expect("", Error::kInvalidExternalData, "is 0 bytes");
  expect(write_bin({}, 5), Error::kInvalidExternalData, "has no tokens");
  expect(write_bin(small_pieces(), -3), Error::kInvalidExternalData, "max_token_length is -3");
  expect(write_bin(small_pieces(), 3), Error::kInvalidExternalData,
         "token 0 at offset 4 has length 5; expected 0..3");
  std::vector<Piece> nan = small_pieces();
  nan[7].score = std::nanf("");
  expect(write_bin(nan), Error::kInvalidExternalData, "token 7 at offset");
  std::string negative = good;
  const int32_t minus_one = -1;
  std::memcpy(&negative[8], &minus_one, 4);
  expect(negative, Error::kInvalidExternalData, "token 0 at offset 4 has length -1");
  Llama2cTokenizerOptions n;
  n.expected_vocab_size = 300;
  expect(good, Error::kInvalidExternalData, "has 269 tokens; the model's vocab_size is 300", n);
  n.expected_vocab_size = 200;
  expect(good, Error::kInvalidExternalData, "bytes after its 200 tokens", n);
  expect(good.substr(0, good.size() - 1), Error::kInvalidExternalData, "run past the end");
  expect(good.substr(0, good.size() - 5), Error::kInvalidExternalData, "need 8 bytes");
  Llama2cTokenizerOptions bad_bos;
  bad_bos.bos_id = 269;
  expect(good, Error::kInvalidArgument, "BOS id 269", bad_bos);
  EXPECT_THAT(Llama2cTokenizer::load("/nonexistent/tokenizer.bin"),
              ErrorIs(Error::kNotFound, "cannot open"));
}

// Every strict prefix of a tokenizer.bin fails cleanly once the vocabulary
// size is known; without it, a prefix either fails or loads fewer tokens.
TEST(Llama2c, EveryTruncationFailsCleanly) {
  const std::string good = write_bin(small_pieces());
  Llama2cTokenizerOptions sized;
  sized.expected_vocab_size = 269;
  for (size_t len = 0; len < good.size(); ++len) {
    auto r = Llama2cTokenizer::load_from_contents(good.substr(0, len), "tok.bin", sized);
    ASSERT_FALSE(r.ok()) << "length " << len;
    ASSERT_THAT(r, ErrorIs(Error::kInvalidExternalData)) << r.status().message();
    ASSERT_NE(std::string(r.status().message()).find("tok.bin"), std::string::npos);
    auto unsized = Llama2cTokenizer::load_from_contents(good.substr(0, len), "tok.bin");
    if (unsized.ok()) {
      ASSERT_LT((*unsized)->vocab_size(), 269);
      Ids ids;
      ASSERT_TRUE((*unsized)->encode("abc \xC3\xA9", true, true, &ids).ok());
    } else {
      ASSERT_TRUE(unsized.error() == Error::kInvalidExternalData ||
                  unsized.error() == Error::kInvalidArgument)
          << unsized.status().message();
    }
  }
  EXPECT_TRUE(Llama2cTokenizer::load_from_contents(good, "tok.bin", sized).ok());
}

// Random corruption: loading never crashes, and what loads encodes and
// decodes without touching memory it should not (ASan runs this too).
TEST(Llama2c, CorruptFilesNeverCrash) {
  const std::string good = write_bin(small_pieces());
  uint32_t x = 7;
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return x >> 8;
  };
  size_t loaded = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bad = good;
    const int flips = 1 + int(next() % 4);
    for (int f = 0; f < flips; ++f) bad[next() % bad.size()] = static_cast<char>(next());
    auto r = Llama2cTokenizer::load_from_contents(bad, "tok.bin");
    if (!r.ok()) continue;
    ++loaded;
    Ids ids;
    ASSERT_TRUE((*r)->encode("abc x\xC3\xA9 \xE2\x82\xAC", true, false, &ids).ok());
    std::string text;
    ASSERT_TRUE(decode_all(**r, Span<const int32_t>(ids.data(), ids.size()), &text).ok());
  }
  EXPECT_GT(loaded, 0u);  // flips inside piece text or scores still load
}

TEST(Llama2c, LoadsFromFile) {
  TempFile f(write_bin(small_pieces()));
  auto r = Llama2cTokenizer::load(f.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(encode(**r, "abc"), (Ids{265, 264}));
}

}  // namespace
}  // namespace torchlight
