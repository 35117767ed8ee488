// SentencePiece BPE and llama2.c tokenizer.bin against SentencePiece's own
// library: the test trains small BPE models with SentencePieceTrainer, then
// compares our ids and decodings with SentencePieceProcessor's on the shared
// text set.
#include "extension/llm/tokenizers/sentencepiece_tokenizer.h"

#include <gtest/gtest.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "extension/llm/tokenizers/llama2c_tokenizer.h"
#include "extension/llm/tokenizers/tokenizer_test_util.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using Ids = std::vector<int32_t>;
constexpr const char* kMetaSpace = "\xE2\x96\x81";

// Training text: a long English document from the toolchain when present,
// plus the shared text set (its CJK, emoji and whitespace runs), split into
// lines as the trainer wants.
std::vector<std::string> corpus() {
  std::vector<std::string> lines;
  const std::string gpl = testing::read_text_file("/usr/share/common-licenses/GPL-3");
  std::string all = gpl;
  for (int rep = 0; rep < 3; ++rep) {
    for (const std::string& t : testing::tokenizer_texts()) all += "\n" + t;
  }
  size_t pos = 0;
  while (pos <= all.size()) {
    size_t end = all.find('\n', pos);
    if (end == std::string::npos) end = all.size();
    if (end > pos) lines.push_back(all.substr(pos, end - pos));
    pos = end + 1;
  }
  return lines;
}

// Trains a model; returns the serialized ModelProto ("" and a test failure
// when training fails).
std::string train(const std::string& args) {
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(
      args + " --num_threads=1 --minloglevel=2", corpus(), &model);
  EXPECT_TRUE(status.ok()) << args << ": " << status.ToString();
  return model;
}

// Llama 2's settings: BPE, byte fallback, identity normalization, spaces
// kept as they are, digits split.
const char* kLlamaArgs =
    "--model_type=bpe --vocab_size=1200 --byte_fallback=true --split_digits=true "
    "--normalization_rule_name=identity --remove_extra_whitespaces=false "
    "--add_dummy_prefix=true --allow_whitespace_only_pieces=true --character_coverage=0.9995 "
    "--hard_vocab_limit=false";

// Each model is trained once per process, when first used (ctest runs each
// test in its own process, so a test trains only what it needs).
struct Models {
  static const std::string& llama() {
    static const std::string m = train(kLlamaArgs);
    return m;
  }
  // A smaller Llama-style model for the byte-by-byte truncation test.
  static const std::string& small() {
    static const std::string m = train(
        "--model_type=bpe --vocab_size=500 --byte_fallback=true --normalization_rule_name=identity "
        "--remove_extra_whitespaces=false --character_coverage=0.98 --hard_vocab_limit=false");
    return m;
  }
  // Identity normalization with remove_extra_whitespaces=true.
  static const std::string& squeeze() {
    static const std::string m = train(
        "--model_type=bpe --vocab_size=900 --byte_fallback=true --normalization_rule_name=identity "
        "--remove_extra_whitespaces=true --hard_vocab_limit=false");
    return m;
  }
  // No byte fallback: unknown characters become <unk>.
  static const std::string& no_fallback() {
    static const std::string m = train(
        "--model_type=bpe --vocab_size=700 --byte_fallback=false "
        "--normalization_rule_name=identity --remove_extra_whitespaces=false "
        "--character_coverage=0.98 --hard_vocab_limit=false");
    return m;
  }
  // The default nmt_nfkc normalizer, which the loader refuses.
  static const std::string& nfkc() {
    static const std::string m = train("--model_type=bpe --vocab_size=500 --hard_vocab_limit=false");
    return m;
  }
  static const std::string& unigram() {
    static const std::string m =
        train("--model_type=unigram --vocab_size=500 --hard_vocab_limit=false");
    return m;
  }
};

std::unique_ptr<sentencepiece::SentencePieceProcessor> reference(const std::string& model) {
  auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = sp->LoadFromSerializedProto(model);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return sp;
}

Ids reference_ids(const sentencepiece::SentencePieceProcessor& sp, const std::string& text) {
  std::vector<int> ids;
  EXPECT_TRUE(sp.Encode(text, &ids).ok());
  return Ids(ids.begin(), ids.end());
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

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

// llama2.c's tokenizer.py, in C++: every piece with its score, BOS and EOS
// respelled, U+2581 replaced by ' ', little-endian records.
std::string export_llama2c(const sentencepiece::SentencePieceProcessor& sp) {
  std::vector<std::string> tokens;
  int32_t max_len = 0;
  for (int i = 0; i < sp.GetPieceSize(); ++i) {
    std::string t = sp.IdToPiece(i);
    if (i == sp.bos_id()) t = "\n<s>\n";
    if (i == sp.eos_id()) t = "\n</s>\n";
    t = replace_all(t, kMetaSpace, " ");
    max_len = std::max<int32_t>(max_len, static_cast<int32_t>(t.size()));
    tokens.push_back(t);
  }
  std::string out(reinterpret_cast<const char*>(&max_len), 4);
  for (int i = 0; i < sp.GetPieceSize(); ++i) {
    const float score = sp.GetScore(i);
    const int32_t len = static_cast<int32_t>(tokens[i].size());
    out.append(reinterpret_cast<const char*>(&score), 4);
    out.append(reinterpret_cast<const char*>(&len), 4);
    out += tokens[i];
  }
  return out;
}

bool has_meta_space(const std::string& text) { return text.find(kMetaSpace) != std::string::npos; }

void expect_parity(const std::string& model, const char* label) {
  ASSERT_FALSE(model.empty());
  auto sp = reference(model);
  auto ours = SentencePieceTokenizer::load_from_contents(model, label);
  ASSERT_TRUE(ours.ok()) << ours.status().message();
  const SentencePieceTokenizer& t = **ours;
  ASSERT_EQ(t.vocab_size(), sp->GetPieceSize());
  EXPECT_EQ(t.bos_id(), sp->bos_id());
  EXPECT_EQ(t.eos_id(), sp->eos_id());
  EXPECT_EQ(t.unk_id(), sp->unk_id());
  for (int i = 0; i < sp->GetPieceSize(); ++i) {
    ASSERT_EQ(std::string(t.piece(i)), replace_all(sp->IdToPiece(i), kMetaSpace, " ")) << i;
    ASSERT_EQ(t.score(i), sp->GetScore(i)) << i;
  }
  size_t nonempty = 0;
  for (const std::string& text : testing::tokenizer_texts()) {
    const Ids expected = reference_ids(*sp, text);
    const Ids got = encode(t, text);
    EXPECT_EQ(got, expected) << label << " " << testing::show(text);
    std::string expected_text;
    ASSERT_TRUE(sp->Decode(std::vector<int>(expected.begin(), expected.end()), &expected_text).ok());
    EXPECT_EQ(decode(t, got), expected_text) << label << " " << testing::show(text);
    nonempty += expected.empty() ? 0 : 1;
  }
  EXPECT_GE(nonempty, 55u);
  Ids with_specials;
  ASSERT_TRUE(t.encode("hello", true, true, &with_specials).ok());
  EXPECT_EQ(with_specials.front(), sp->bos_id());
  EXPECT_EQ(with_specials.back(), sp->eos_id());
}

TEST(SentencePieceParity, LlamaStyleBpeModel) {
  expect_parity(Models::llama(), "llama.model");
  // The comparison covers byte fallback and multi-character merges.
  auto sp = reference(Models::llama());
  size_t bytes = 0;
  size_t merged = 0;
  for (const std::string& text : testing::tokenizer_texts()) {
    for (int32_t id : reference_ids(*sp, text)) {
      bytes += sp->IsByte(id) ? 1 : 0;
      merged += sp->IdToPiece(id).size() > 4 ? 1 : 0;
    }
  }
  EXPECT_GT(bytes, 20u);
  EXPECT_GT(merged, 50u);
}

TEST(SentencePieceParity, RemoveExtraWhitespaces) {
  expect_parity(Models::squeeze(), "squeeze.model");
}

TEST(SentencePieceParity, UnknownWithoutByteFallback) {
  expect_parity(Models::no_fallback(), "no_fallback.model");
  // The comparison above only means something if unknowns occur.
  auto sp = reference(Models::no_fallback());
  size_t unknowns = 0;
  for (const std::string& text : testing::tokenizer_texts()) {
    for (int32_t id : reference_ids(*sp, text)) unknowns += id == sp->unk_id() ? 1 : 0;
  }
  EXPECT_GT(unknowns, 0u);
}

// llama2.c's tokenizer.bin, exported from the same model as tokenizer.py
// does, gives SentencePiece's ids. The one difference is text holding a
// literal U+2581: SentencePiece reads it as its escaped space, while the
// export has turned every U+2581 into ' ', so run.c (and we) byte-encode it.
TEST(SentencePieceParity, Llama2cTokenizerBinFromTheModel) {
  auto sp = reference(Models::llama());
  const std::string bin = export_llama2c(*sp);
  Llama2cTokenizerOptions options;
  options.expected_vocab_size = sp->GetPieceSize();
  auto loaded = Llama2cTokenizer::load_from_contents(bin, "tokenizer.bin", options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Llama2cTokenizer& t = **loaded;
  EXPECT_EQ(t.bos_id(), sp->bos_id());
  EXPECT_EQ(t.eos_id(), sp->eos_id());
  size_t compared = 0;
  size_t differing = 0;
  for (const std::string& text : testing::tokenizer_texts()) {
    const Ids expected = reference_ids(*sp, text);
    Ids got;
    ASSERT_TRUE(t.encode(text, true, false, &got).ok());
    ASSERT_EQ(got.front(), sp->bos_id());
    got.erase(got.begin());
    if (has_meta_space(text)) {
      EXPECT_NE(got, expected) << "expected the documented U+2581 difference";
      ++differing;
      continue;
    }
    EXPECT_EQ(got, expected) << testing::show(text);
    // Decoding after BOS drops the dummy prefix, as SentencePiece does.
    Ids with_bos = got;
    with_bos.insert(with_bos.begin(), t.bos_id());
    std::string decoded;
    int32_t prev = -1;
    for (int32_t id : with_bos) {
      if (id != t.bos_id()) decoded += std::string(*t.decode(prev, id));
      prev = id;
    }
    std::string expected_text;
    ASSERT_TRUE(sp->Decode(std::vector<int>(expected.begin(), expected.end()), &expected_text).ok());
    EXPECT_EQ(decoded, expected_text) << testing::show(text);
    ++compared;
  }
  EXPECT_GE(compared, 60u);
  EXPECT_EQ(differing, 1u);
}

TEST(SentencePieceModel, RefusesUnsupportedModels) {
  auto nfkc = SentencePieceTokenizer::load_from_contents(Models::nfkc(), "nfkc.model");
  ASSERT_FALSE(nfkc.ok());
  EXPECT_THAT(nfkc, ErrorIs(Error::kNotSupported, "'nmt_nfkc' normalizer"));
  auto unigram = SentencePieceTokenizer::load_from_contents(Models::unigram(), "uni.model");
  ASSERT_FALSE(unigram.ok());
  EXPECT_THAT(unigram, ErrorIs(Error::kNotSupported, "unigram"));
  EXPECT_THAT(SentencePieceTokenizer::load("/nonexistent.model"),
              ErrorIs(Error::kNotFound, "cannot open"));
  auto empty = SentencePieceTokenizer::load_from_contents("", "empty.model");
  EXPECT_THAT(empty, ErrorIs(Error::kInvalidExternalData, "has no pieces"));
}

// Every prefix of a model either fails with a message naming the file, or
// (cut between two pieces) loads a smaller model that still works.
TEST(SentencePieceModel, EveryTruncationFailsCleanly) {
  const std::string& model = Models::small();
  ASSERT_FALSE(model.empty());
  size_t failed = 0;
  for (size_t len = 0; len < model.size(); ++len) {
    auto r = SentencePieceTokenizer::load_from_contents(std::string_view(model).substr(0, len),
                                                        "cut.model");
    if (!r.ok()) {
      ASSERT_TRUE(r.error() == Error::kInvalidExternalData || r.error() == Error::kNotSupported)
          << r.status().message();
      ASSERT_NE(std::string(r.status().message()).find("cut.model"), std::string::npos);
      ++failed;
      continue;
    }
    Ids ids;
    ASSERT_TRUE((*r)->encode("Hello w\xC3\xB6rld \xF0\x9F\x98\x80", true, true, &ids).ok());
    std::string text;
    ASSERT_TRUE(decode_all(**r, Span<const int32_t>(ids.data(), ids.size()), &text).ok());
  }
  EXPECT_GT(failed, model.size() / 2);
  EXPECT_LT(model.size(), 20000u);  // keeps this byte-by-byte loop quick
}

TEST(SentencePieceModel, CorruptModelsNeverCrash) {
  const std::string& model = Models::small();
  ASSERT_FALSE(model.empty());
  uint32_t x = 99;
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return x >> 8;
  };
  for (int trial = 0; trial < 1500; ++trial) {
    std::string bad = model;
    const int flips = 1 + int(next() % 3);
    for (int f = 0; f < flips; ++f) bad[next() % bad.size()] = static_cast<char>(next());
    auto r = SentencePieceTokenizer::load_from_contents(bad, "flip.model");
    if (!r.ok()) continue;
    Ids ids;
    ASSERT_TRUE((*r)->encode("Hello w\xC3\xB6rld  \xE6\x97\xA5", true, true, &ids).ok());
    std::string text;
    ASSERT_TRUE(decode_all(**r, Span<const int32_t>(ids.data(), ids.size()), &text).ok());
  }
}

}  // namespace
}  // namespace torchlight
