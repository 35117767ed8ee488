#include "extension/llm/tokenizers/tiktoken_tokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "extension/llm/tokenizers/tokenizer_test_util.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using testing::TempFile;
using Ids = std::vector<int32_t>;

std::string base64(const std::string& bytes) {
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(n >> (6 * k)) & 63]);
  }
  if (bytes.size() - i == 1) {
    const uint32_t n = uint8_t(bytes[i]) << 16;
    out += std::string{kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], '=', '='};
  } else if (bytes.size() - i == 2) {
    const uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += std::string{kAlphabet[n >> 18], kAlphabet[(n >> 12) & 63], kAlphabet[(n >> 6) & 63], '='};
  }
  return out;
}

// Ranks 0..255: the bytes; then a few merges.
std::string small_rank_file() {
  std::string f;
  for (int b = 0; b < 256; ++b) f += base64(std::string(1, char(b))) + " " + std::to_string(b) + "\n";
  const char* merged[] = {"ab", "bc", "abc", "cd", " a", "  "};
  int rank = 256;
  for (const char* m : merged) f += base64(m) + " " + std::to_string(rank++) + "\n";
  return f;
}

TiktokenOptions small_options() {
  TiktokenOptions o;
  o.pattern = PretokenizePattern::kCl100k;
  o.special_tokens = {{"<|end|>", 300}, {"<|begin|>", 301}, {"<|end|>x", 302}};
  o.bos_token = "<|begin|>";
  o.eos_token = "<|end|>";
  o.expected_ranks = 262;
  return o;
}

std::unique_ptr<TiktokenTokenizer> load_small(const TiktokenOptions& o = small_options()) {
  auto r = TiktokenTokenizer::load_from_contents(small_rank_file(), "small.tiktoken", o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r.get()) : nullptr;
}

Ids encode(const Tokenizer& t, const std::string& text, bool bos = false, bool eos = false) {
  Ids ids = {999};
  const Status s = t.encode(text, bos, eos, &ids);
  EXPECT_TRUE(s.ok()) << s.message();
  return ids;
}

TEST(Tiktoken, Base64OfTestHelper) {
  EXPECT_EQ(base64("a"), "YQ==");
  EXPECT_EQ(base64("ab"), "YWI=");
  EXPECT_EQ(base64("abc"), "YWJj");
}

TEST(Tiktoken, MergesByRankOfConcatenation) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->num_ranks(), 262u);
  EXPECT_EQ(t->vocab_size(), 303);
  // A piece that is a token is emitted whole.
  EXPECT_EQ(encode(*t, "abc"), (Ids{258}));
  // ab (256) first, then ab+c = abc (258): the pair's concatenation counts.
  EXPECT_EQ(encode(*t, "abcd"), (Ids{258, 'd'}));
  EXPECT_EQ(encode(*t, "bcd"), (Ids{257, 'd'}));
  // " a" (259) loses to "ab" (256), and " ab" is no token.
  EXPECT_EQ(encode(*t, "x ab"), (Ids{'x', ' ', 256}));
  EXPECT_EQ(encode(*t, ""), (Ids{}));
}

TEST(Tiktoken, SpecialTokens) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->bos_id(), 301);
  EXPECT_EQ(t->eos_id(), 300);
  // Leftmost match, longest at the same position.
  EXPECT_EQ(encode(*t, "ab<|end|>xab<|end|>"), (Ids{256, 302, 256, 300}));
  EXPECT_EQ(encode(*t, "<|begin|>", true, true), (Ids{301, 301, 300}));
  TiktokenOptions o = small_options();
  o.allow_special = false;
  auto ordinary = load_small(o);
  ASSERT_NE(ordinary, nullptr);
  // Pieces "<|", "end", "|>", none of them merging: 7 byte tokens.
  EXPECT_EQ(encode(*ordinary, "<|end|>"), (Ids{'<', '|', 'e', 'n', 'd', '|', '>'}));
  EXPECT_EQ(*t->decode(-1, 302), "<|end|>x");
  EXPECT_THAT(t->decode(-1, 262),
              ErrorIs(Error::kInvalidArgument, "token id 262 is neither a rank nor a special"));
  EXPECT_THAT(t->decode(-1, 303),
              ErrorIs(Error::kInvalidArgument, "token id 303 is neither a rank nor a special"));
}

TEST(Tiktoken, DecodeRoundTripsAnyBytes) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  const std::string text = "abc \xFF\xFE\x80 caf\xC3\xA9  \xF0\x9F\x98\x80<|end|>\r\n  x";
  const Ids ids = encode(*t, text);
  std::string back;
  ASSERT_TRUE(decode_all(*t, Span<const int32_t>(ids.data(), ids.size()), &back).ok());
  EXPECT_EQ(back, text);
}

void expect_error(const std::string& file, Error code, const char* part,
                  const TiktokenOptions& o = small_options()) {
  auto r = TiktokenTokenizer::load_from_contents(file, "bad.tiktoken", o);
  ASSERT_FALSE(r.ok()) << part;
  EXPECT_EQ(r.error(), code) << r.status().message();
  EXPECT_NE(std::string(r.status().message()).find(part), std::string::npos)
      << r.status().message();
}

TEST(Tiktoken, LoadErrors) {
  const std::string good = small_rank_file();
  TiktokenOptions any = small_options();
  any.expected_ranks = 0;
  expect_error("", Error::kInvalidExternalData, "has no ranks", any);
  expect_error(good + "YWJj\n", Error::kInvalidExternalData, "line 263 is \"YWJj\"", any);
  expect_error(good + "YW*j 400\n", Error::kInvalidExternalData, "not valid base64", any);
  expect_error(good + "YWI 400\n", Error::kInvalidExternalData, "not valid base64", any);
  expect_error(good + "Y=Jj 400\n", Error::kInvalidExternalData, "not valid base64", any);
  expect_error(good + "eHl6 4x\n", Error::kInvalidExternalData, "not a non-negative integer", any);
  expect_error(good + "eHl6 999999999999\n", Error::kInvalidExternalData, "rank is above", any);
  // A rank a few bytes long but 2^26 away: refused, not a 1 GiB table.
  expect_error(good + "eHl6 67108863\n", Error::kInvalidExternalData,
               "line 263: rank 67108863 skips too far ahead: after 262 ranks, ranks stop at "
               "66059",
               any);
  expect_error(good + "eHl6 100\n", Error::kInvalidExternalData,
               "rank 100 is not above the previous rank 261", any);
  expect_error(good + "YWI= 400\n", Error::kInvalidExternalData,
               "repeats the token of rank 256", any);
  expect_error(good.substr(good.find('\n') + 1), Error::kInvalidExternalData,
               "single byte 0x00", any);
  expect_error(good + "eHl6 400\n", Error::kInvalidExternalData,
               "has 263 ranks, but this encoding has 262");
  TiktokenOptions clash = small_options();
  clash.special_tokens.push_back({"<|x|>", 5});
  expect_error(good, Error::kInvalidArgument, "a rank of the file", clash);
  TiktokenOptions twice = small_options();
  twice.special_tokens.push_back({"<|end|>", 310});
  expect_error(good, Error::kInvalidArgument, "listed twice", twice);
  TiktokenOptions bad_bos = small_options();
  bad_bos.bos_token = "<s>";
  expect_error(good, Error::kInvalidArgument, "BOS token \"<s>\"", bad_bos);
  EXPECT_THAT(TiktokenTokenizer::load("/nonexistent.tiktoken", small_options()),
              ErrorIs(Error::kNotFound, "cannot open"));
}

// With the expected rank count, every cut of the file fails: inside a line
// the line is malformed, or its rank is cut to a smaller number; at a line
// boundary the count is short.
TEST(Tiktoken, EveryTruncationFails) {
  const std::string good = small_rank_file();
  for (size_t len = 0; len + 1 < good.size(); ++len) {
    auto r = TiktokenTokenizer::load_from_contents(good.substr(0, len), "t.tiktoken",
                                                   small_options());
    ASSERT_FALSE(r.ok()) << "length " << len;
    EXPECT_THAT(r, ErrorIs(Error::kInvalidExternalData)) << "length " << len;
  }
  EXPECT_TRUE(TiktokenTokenizer::load_from_contents(good.substr(0, good.size() - 1), "t.tiktoken",
                                                    small_options())
                  .ok());
}

TEST(Tiktoken, LoadsFromFile) {
  TempFile f(small_rank_file());
  auto r = TiktokenTokenizer::load(f.path(), small_options());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(encode(**r, "abcd"), (Ids{258, 'd'}));
}

struct Encoding {
  const char* name;
  TiktokenOptions (*options)();
};

void PrintTo(const Encoding& e, std::ostream* os) { *os << e.name; }

class TiktokenParity : public ::testing::TestWithParam<Encoding> {};

// Parity with tiktoken (the npm wasm build of its Rust core) on the shared
// text set, for rank files rebuilt from the same package.
TEST_P(TiktokenParity, MatchesReferenceIds) {
  const Encoding& e = GetParam();
  const std::string dir = testing::tokenizer_assets_dir();
  const std::string golden_path = dir + "/golden/" + e.name + ".json";
  TL_REQUIRE_ASSET(golden_path);
  const std::string rank_path = dir + "/tiktoken/" + e.name + ".tiktoken";
  auto loaded = TiktokenTokenizer::load(rank_path, e.options());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  TiktokenOptions ordinary_options = e.options();
  ordinary_options.allow_special = false;
  auto ordinary = TiktokenTokenizer::load(rank_path, ordinary_options);
  ASSERT_TRUE(ordinary.ok()) << ordinary.status().message();

  const auto golden = nlohmann::json::parse(testing::read_text_file(golden_path));
  const auto& cases = golden.at("cases");
  ASSERT_EQ(cases.size(), testing::tokenizer_texts().size())
      << "the cached expected ids are stale: rerun tools/llm_assets/fetch_tokenizer_assets.sh";
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    const Ids ids = c.at("ids").get<Ids>();
    EXPECT_EQ(encode(**loaded, text), ids) << e.name << " " << testing::show(text);
    EXPECT_EQ(encode(**ordinary, text), c.at("ids_ordinary").get<Ids>())
        << e.name << " " << testing::show(text);
    std::string decoded;
    ASSERT_TRUE(decode_all(**loaded, Span<const int32_t>(ids.data(), ids.size()), &decoded).ok());
    EXPECT_EQ(decoded, testing::hex_decode(c.at("decoded_hex").get<std::string>()));
    EXPECT_EQ(decoded, text);
  }
}

INSTANTIATE_TEST_SUITE_P(Encodings, TiktokenParity,
                         ::testing::Values(Encoding{"r50k_base", &TiktokenOptions::r50k_base},
                                           Encoding{"cl100k_base", &TiktokenOptions::cl100k_base},
                                           Encoding{"o200k_base", &TiktokenOptions::o200k_base}),
                         [](const ::testing::TestParamInfo<Encoding>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace torchlight
