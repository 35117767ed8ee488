#include "extension/llm/tokenizers/hf_tokenizer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "extension/llm/tokenizers/tokenizer_test_util.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using Ids = std::vector<int32_t>;
using nlohmann::json;
using ::torchlight::testing::ErrorIs;

// A SentencePiece-style file as Llama 2's tokenizer.json lays it out:
// spaces become "▁" in the normalizer, unknown characters fall back to
// "<0xHH>" byte pieces.
json metaspace_tokenizer() {
  json vocab = json::object();
  vocab["<unk>"] = 0;
  vocab["<s>"] = 1;
  vocab["</s>"] = 2;
  for (int b = 0; b < 256; ++b) {
    char name[8];
    snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = 3 + b;
  }
  int id = 259;
  for (const char* piece : {"\u2581", "a", "b", "c", "\u2581a", "ab", "\u2581ab", "bc"}) {
    vocab[piece] = id++;
  }
  return {
      {"version", "1.0"},
      {"added_tokens",
       {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
        {{"id", 1}, {"content", "<s>"}, {"special", true}},
        {{"id", 2}, {"content", "</s>"}, {"special", true}}}},
      {"normalizer",
       {{"type", "Sequence"},
        {"normalizers",
         {{{"type", "Prepend"}, {"prepend", "\u2581"}},
          {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\u2581"}}}}}},
      {"pre_tokenizer", nullptr},
      {"post_processor",
       {{"type", "TemplateProcessing"},
        {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                    {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}}}},
      {"decoder",
       {{"type", "Sequence"},
        {"decoders",
         {{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
          {{"type", "ByteFallback"}},
          {{"type", "Fuse"}},
          {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
      {"model",
       {{"type", "BPE"},
        {"unk_token", "<unk>"},
        {"fuse_unk", true},
        {"byte_fallback", true},
        {"vocab", vocab},
        // Ranks: "▁ a" first, so "▁ab" comes from "▁a" + "b", not "▁" + "ab".
        {"merges", {"\u2581 a", "a b", "\u2581a b", "b c"}}}},
  };
}

// A byte-level file as Llama 3's: the cl100k split, then bytes spelled in
// GPT-2's alphabet ("Ġ" is a space).
json byte_level_tokenizer(bool ignore_merges) {
  json vocab = json::object();
  int id = 0;
  for (const char* piece : {"a", "b", "c", "\u0120", "\u0120a", "ab", "abc", "\u0120ab"}) {
    vocab[piece] = id++;
  }
  return {
      {"added_tokens",
       {{{"id", 8}, {"content", "<|begin|>"}, {"special", true}},
        {{"id", 9}, {"content", "<|end|>"}, {"special", true}},
        {{"id", 10}, {"content", "[plain]"}, {"special", false}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"},
           {"pattern",
            {{"Regex",
              "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| "
              "?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}}},
           {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model",
       {{"type", "BPE"},
        {"ignore_merges", ignore_merges},
        {"vocab", vocab},
        // (json::array: nested two-string lists would read as an object)
        {"merges", json::array({json::array({"a", "b"}), json::array({"\u0120", "a"}),
                                json::array({"\u0120a", "b"})})}}},
  };
}

Result<std::unique_ptr<HfTokenizer>> load(const json& j, const std::string& config = "",
                                          const HfTokenizerOptions& options = {}) {
  const std::string text = j.dump();
  return HfTokenizer::load_from_contents(text, "tokenizer.json", config, options);
}

Ids encode(const Tokenizer& t, const std::string& text) {
  Ids ids;
  const Status s = t.encode(text, false, false, &ids);
  EXPECT_TRUE(s.ok()) << s.message();
  return ids;
}

std::string decode(const Tokenizer& t, const Ids& ids) {
  std::string text;
  const Status s = decode_all(t, Span<const int32_t>(ids.data(), ids.size()), &text);
  EXPECT_TRUE(s.ok()) << s.message();
  return text;
}

TEST(HfTokenizer, MetaspaceMergesByRankAndFallsBackToBytes) {
  auto t = load(metaspace_tokenizer());
  ASSERT_TRUE(t.ok()) << t.status().message();
  const HfTokenizer& tok = **t;
  EXPECT_EQ(tok.vocab_size(), 267);
  EXPECT_EQ(tok.bos_id(), 1);  // the TemplateProcessing's first special token
  EXPECT_EQ(tok.eos_id(), -1);
  // "▁abc": "▁ a" (rank 0), then "▁a b" (rank 2) before "b c" (rank 3) can apply.
  EXPECT_EQ(encode(tok, "abc"), (Ids{265, 262}));
  EXPECT_EQ(encode(tok, "a b"), (Ids{263, 259, 261}));
  // "é" is not a piece: its two UTF-8 bytes become byte pieces.
  EXPECT_EQ(encode(tok, "é"), (Ids{259, 3 + 0xC3, 3 + 0xA9}));
  EXPECT_EQ(decode(tok, encode(tok, "é a")), "é a");
  EXPECT_EQ(decode(tok, encode(tok, "abc bc")), "abc bc");
  // Added tokens split the text; each stretch gets its own "▁".
  EXPECT_EQ(encode(tok, "a<s>ab"), (Ids{263, 1, 265}));
  Ids ids;
  ASSERT_TRUE(tok.encode("ab", true, false, &ids).ok());
  EXPECT_EQ(ids, (Ids{1, 265}));
  EXPECT_THAT(tok.encode("ab", false, true, &ids), ErrorIs(Error::kInvalidArgument, "no EOS"));
  EXPECT_EQ(*tok.decode(-1, 265), "ab");  // only the very first piece drops its space
  EXPECT_EQ(*tok.decode(1, 265), " ab");
  EXPECT_EQ(*tok.decode(265, 265), " ab");
  EXPECT_THAT(tok.decode(-1, 267), ErrorIs(Error::kInvalidArgument, "267"));
}

TEST(HfTokenizer, UnknownCharactersWithoutByteFallbackFuseIntoOneUnk) {
  json j = metaspace_tokenizer();
  j["model"]["byte_fallback"] = false;
  auto t = load(j);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(encode(**t, "a\u00e9\u00e9"), (Ids{263, 0}));
  j["model"]["fuse_unk"] = false;
  auto unfused = load(j);
  ASSERT_TRUE(unfused.ok());
  EXPECT_EQ(encode(**unfused, "a\u00e9\u00e9"), (Ids{263, 0, 0}));
}

TEST(HfTokenizer, ByteLevelSplitsThenMerges) {
  auto t = load(byte_level_tokenizer(/*ignore_merges=*/false));
  ASSERT_TRUE(t.ok()) << t.status().message();
  // "abc" has no merge path to the vocabulary's "abc" ("ab" + "c" is no merge), and in
  // " ab" the rank-0 "a b" wins over "Ġ a", so "Ġab" is never reached.
  EXPECT_EQ(encode(**t, "abc ab"), (Ids{5, 2, 3, 5}));
  EXPECT_EQ(decode(**t, Ids{5, 2, 3, 5}), "abc ab");
  auto whole = load(byte_level_tokenizer(/*ignore_merges=*/true));
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(encode(**whole, "abc ab"), (Ids{6, 7}));  // a whole-piece match skips merging
  // Special and plain added tokens, and the option that turns off the special ones.
  EXPECT_EQ(encode(**t, "<|begin|>ab[plain]"), (Ids{8, 5, 10}));
  HfTokenizerOptions plain;
  plain.allow_special = false;
  auto no_special = load(byte_level_tokenizer(false), "", plain);
  ASSERT_TRUE(no_special.ok());
  const Ids as_text = encode(**no_special, "<|begin|>[plain]");
  EXPECT_EQ(as_text.back(), 10);
  EXPECT_EQ(std::count(as_text.begin(), as_text.end(), 8), 0);
  // Characters outside a byte-level vocabulary have no token: they vanish, as in `tokenizers`.
  EXPECT_EQ(encode(**t, "a!"), (Ids{0}));
  EXPECT_EQ(decode(**t, Ids{8, 5, 9}), "<|begin|>ab<|end|>");
}

TEST(HfTokenizer, BosAndEosFromConfigOrOptions) {
  auto t = load(byte_level_tokenizer(false),
                R"({"bos_token": "<|begin|>", "eos_token": {"content": "<|end|>"}})");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ((*t)->bos_id(), 8);
  EXPECT_EQ((*t)->eos_id(), 9);
  HfTokenizerOptions options;
  options.eos_token = "[plain]";
  auto overridden = load(byte_level_tokenizer(false), R"({"eos_token": "<|end|>"})", options);
  ASSERT_TRUE(overridden.ok());
  EXPECT_EQ((*overridden)->eos_id(), 10);
  options.eos_token = "<|nope|>";
  EXPECT_THAT(load(byte_level_tokenizer(false), "", options),
              ErrorIs(Error::kInvalidArgument, "EOS token \"<|nope|>\""));
  EXPECT_THAT(load(byte_level_tokenizer(false), R"({"bos_token": 5})"),
              ErrorIs(Error::kInvalidExternalData, "bos_token must be a string"));
  EXPECT_THAT(load(byte_level_tokenizer(false), "{"),
              ErrorIs(Error::kInvalidExternalData, "tokenizer_config.json"));
}

TEST(HfTokenizer, MalformedFilesNameTheField) {
  auto with = [](const char* pointer, const json& value) {
    json j = metaspace_tokenizer();
    j[json::json_pointer(pointer)] = value;
    return load(j);
  };
  EXPECT_THAT(with("/model/vocab/a", "x"), ErrorIs(Error::kInvalidExternalData, "model.vocab[\"a\"]"));
  EXPECT_THAT(with("/model/vocab/zz", 260), ErrorIs(Error::kInvalidExternalData, "id 260"));
  EXPECT_THAT(with("/model/merges/1", "a q"),
              ErrorIs(Error::kInvalidExternalData, "model.merges[1] merges \"a\" + \"q\""));
  EXPECT_THAT(with("/model/merges/1", "ab"), ErrorIs(Error::kInvalidExternalData, "model.merges[1]"));
  EXPECT_THAT(with("/model/merges", 3), ErrorIs(Error::kInvalidExternalData, "model.merges must"));
  EXPECT_THAT(with("/model/unk_token", "<nope>"), ErrorIs(Error::kInvalidExternalData, "unk_token"));
  EXPECT_THAT(with("/added_tokens/1/id", 7), ErrorIs(Error::kInvalidExternalData, "model.vocab gives it id 1"));
  EXPECT_THAT(with("/added_tokens/0/content", 3), ErrorIs(Error::kInvalidExternalData, "added_tokens[0].content"));
  EXPECT_THAT(with("/normalizer/normalizers/0/prepend", nullptr),
              ErrorIs(Error::kInvalidExternalData, "normalizer.normalizers[0].prepend is missing"));
  EXPECT_THAT(load(json::array()), ErrorIs(Error::kInvalidExternalData, "must be a JSON object"));
  EXPECT_THAT(load(json{{"version", "1.0"}}), ErrorIs(Error::kInvalidExternalData, "no \"model\""));
  EXPECT_THAT(HfTokenizer::load("/nonexistent/tokenizer.json"), ErrorIs(Error::kNotFound));
}

TEST(HfTokenizer, UnsupportedComponentsAreRefusedByName) {
  auto with = [](const char* pointer, const json& value) {
    json j = byte_level_tokenizer(false);
    j[json::json_pointer(pointer)] = value;
    return load(j);
  };
  EXPECT_THAT(with("/model/type", "Unigram"), ErrorIs(Error::kNotSupported, "model is a \"Unigram\""));
  EXPECT_THAT(with("/normalizer", json{{"type", "NFC"}}),
              ErrorIs(Error::kNotSupported, "normalizer is a \"NFC\""));
  EXPECT_THAT(with("/pre_tokenizer/pretokenizers/0/pattern/Regex", "\\w+"),
              ErrorIs(Error::kNotSupported, "pre_tokenizer.pretokenizers[0].pattern.Regex"));
  EXPECT_THAT(with("/pre_tokenizer/pretokenizers/0/behavior", "Removed"),
              ErrorIs(Error::kNotSupported, "behavior"));
  EXPECT_THAT(with("/decoder", json{{"type", "WordPiece"}}), ErrorIs(Error::kNotSupported, "decoder"));
  EXPECT_THAT(with("/added_tokens/0/lstrip", true), ErrorIs(Error::kNotSupported, "added_tokens[0].lstrip"));
  EXPECT_THAT(with("/model/continuing_subword_prefix", "##"),
              ErrorIs(Error::kNotSupported, "continuing_subword_prefix"));
}

// Every prefix of a valid file is refused with a message, never a crash.
TEST(HfTokenizer, EveryTruncationFails) {
  json j = byte_level_tokenizer(false);
  const std::string good = j.dump();
  for (size_t len = 0; len < good.size(); ++len) {
    auto r = HfTokenizer::load_from_contents(good.substr(0, len), "t.json", "");
    ASSERT_FALSE(r.ok()) << "length " << len;
    EXPECT_THAT(r, ErrorIs(Error::kInvalidExternalData)) << "length " << len;
  }
  EXPECT_TRUE(HfTokenizer::load_from_contents(good, "t.json", "").ok());
}

class HfParity : public ::testing::TestWithParam<const char*> {};

// Parity with tokenizers.js (Hugging Face's JavaScript port) on the shared
// text set: real Llama 2-format and Llama 3 tokenizer.json files, and GPT-2's
// vocabulary written as one.
TEST_P(HfParity, MatchesReferenceIds) {
  const std::string model = GetParam();
  const std::string dir = testing::tokenizer_assets_dir();
  const std::string golden_path = dir + "/golden/hf_" + model + ".json";
  TL_REQUIRE_ASSET(golden_path);
  auto loaded = HfTokenizer::load(dir + "/hf/" + model + "/tokenizer.json");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const auto golden = json::parse(testing::read_text_file(golden_path));
  const auto& cases = golden.at("cases");
  ASSERT_EQ(cases.size(), testing::tokenizer_texts().size())
      << "the cached expected ids are stale: rerun tools/llm_assets/fetch_tokenizer_assets.sh";
  for (const auto& c : cases) {
    const std::string text = c.at("text").get<std::string>();
    const Ids ids = c.at("ids").get<Ids>();
    EXPECT_EQ(encode(**loaded, text), ids) << model << " " << testing::show(text);
    EXPECT_EQ(decode(**loaded, ids), testing::hex_decode(c.at("decoded_hex").get<std::string>()))
        << model << " " << testing::show(text);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, HfParity, ::testing::Values("gpt2", "llama2", "llama3"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

}  // namespace
}  // namespace torchlight
