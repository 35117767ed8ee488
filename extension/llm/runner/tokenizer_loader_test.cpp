#include "extension/llm/runner/tokenizer_loader.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

// A temporary directory, removed with its files.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/torchlight_tokloader_XXXXXX";
    if (::mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    for (const std::string& f : files_) std::remove(f.c_str());
    ::rmdir(path_.c_str());
  }
  std::string write(const std::string& name, const std::string& contents) {
    const std::string path = path_ + "/" + name;
    std::ofstream(path, std::ios::binary) << contents;
    files_.push_back(path);
    return path;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

std::string base64(const std::string& bytes) {
  static const char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                       (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                       static_cast<unsigned char>(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6) out += kAlphabet[(v >> s) & 63];
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += rest == 2 ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// A tiktoken rank file: the 256 bytes, then "ab" and "abc".
std::string tiktoken_file() {
  std::string out;
  int rank = 0;
  for (int b = 0; b < 256; ++b) {
    out += base64(std::string(1, static_cast<char>(b))) + " " + std::to_string(rank++) + "\n";
  }
  for (const char* merged : {"ab", "abc"}) out += base64(merged) + " " + std::to_string(rank++) + "\n";
  return out;
}

void put_i32(std::string* out, int32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void put_f32(std::string* out, float v) { out->append(reinterpret_cast<const char*>(&v), 4); }

// A llama2.c tokenizer.bin: <unk>, BOS, EOS, then a few pieces.
std::string llama2c_file() {
  const std::vector<std::string> pieces = {"<unk>", "\n<s>\n", "\n</s>\n", " ", "a", "b", " a"};
  std::string out;
  put_i32(&out, 6);
  float score = 0;
  for (const std::string& p : pieces) {
    put_f32(&out, score--);
    put_i32(&out, static_cast<int32_t>(p.size()));
    out += p;
  }
  return out;
}

// GPT-2's byte alphabet for one byte, as a JSON string body.
std::string gpt2_spelling(int b) {
  auto printable = [](int k) { return (k >= 0x21 && k <= 0x7E) || (k >= 0xA1 && k <= 0xAC) || k >= 0xAE; };
  int cp = b;
  if (!printable(b)) {
    int n = 0;
    for (int k = 0; k < b; ++k) n += printable(k) ? 0 : 1;
    cp = 256 + n;
  }
  std::string out;
  if (cp == '"' || cp == '\\') {
    out = std::string("\\") + static_cast<char>(cp);
  } else if (cp < 0x80) {
    out = std::string(1, static_cast<char>(cp));
  } else {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

std::string gpt2_vocab() {
  std::string j = "{";
  for (int b = 0; b < 256; ++b) j += "\"" + gpt2_spelling(b) + "\": " + std::to_string(b) + ", ";
  j += "\"ab\": 256, \"<|endoftext|>\": 257}";
  return j;
}

const std::string kGpt2Merges = "#version: 0.2\na b\n";

TEST(TokenizerLoaderTest, Bytes) {
  auto loaded = load_tokenizer("bytes");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->format, "bytes");
  EXPECT_EQ(loaded->tokenizer->vocab_size(), 256);
}

TEST(TokenizerLoaderTest, MissingAndEmptySpecs) {
  auto missing = load_tokenizer("/no/such/tokenizer.model");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing, ErrorIs(Error::kNotFound, "/no/such/tokenizer.model"));
  EXPECT_THAT(load_tokenizer(""),
              ErrorIs(Error::kInvalidArgument, "pass a tokenizer file or directory, or 'bytes'"));
}

TEST(TokenizerLoaderTest, TiktokenIsDetectedFromContentWhateverTheName) {
  TempDir dir;
  // Llama 3 names its rank file tokenizer.model; content decides.
  const std::string path = dir.write("tokenizer.model", tiktoken_file());
  auto loaded = load_tokenizer(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->format, "tiktoken (cl100k pattern, no special tokens)");
  EXPECT_EQ(loaded->tokenizer->vocab_size(), 258);
  std::vector<int32_t> ids;
  ASSERT_TRUE(loaded->tokenizer->encode("abc", false, false, &ids).ok());
  EXPECT_EQ(ids, (std::vector<int32_t>{257}));
}

TEST(TokenizerLoaderTest, Llama2cTokenizerBin) {
  TempDir dir;
  const std::string path = dir.write("tok.bin", llama2c_file());
  auto loaded = load_tokenizer(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->format, "llama2.c tokenizer.bin");
  EXPECT_EQ(loaded->tokenizer->vocab_size(), 7);
  EXPECT_EQ(loaded->tokenizer->bos_id(), 1);
  EXPECT_EQ(loaded->tokenizer->eos_id(), 2);
  // Also found as tokenizer.bin in a directory.
  dir.write("tokenizer.bin", llama2c_file());
  auto from_dir = load_tokenizer(dir.path());
  ASSERT_TRUE(from_dir.ok()) << from_dir.status().message();
  EXPECT_EQ(from_dir->format, "llama2.c tokenizer.bin");
}

TEST(TokenizerLoaderTest, Gpt2FromEitherFileOrTheDirectory) {
  TempDir dir;
  const std::string vocab = dir.write("vocab.json", gpt2_vocab());
  const std::string merges = dir.write("merges.txt", kGpt2Merges);
  for (const std::string& spec : {vocab, merges, dir.path()}) {
    auto loaded = load_tokenizer(spec);
    ASSERT_TRUE(loaded.ok()) << spec << ": " << loaded.status().message();
    EXPECT_EQ(loaded->format, "GPT-2 BPE");
    EXPECT_EQ(loaded->tokenizer->vocab_size(), 258);
    EXPECT_EQ(loaded->files, vocab + ", " + merges);
  }
}

// A byte-level tokenizer.json over the characters "a", "b", "Ġ" with
// Llama 3's BOS, EOS and end-of-turn tokens.
std::string hf_tokenizer_json() {
  return R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "Ġ": 2, "ab": 3},
                       "merges": ["a b"]},
             "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false},
             "decoder": {"type": "ByteLevel"},
             "added_tokens": [{"id": 4, "content": "<|begin_of_text|>", "special": true},
                              {"id": 5, "content": "<|end_of_text|>", "special": true},
                              {"id": 6, "content": "<|eot_id|>", "special": true}]})";
}

TEST(TokenizerLoaderTest, HuggingFaceTokenizerJsonWinsInADirectory) {
  TempDir dir;
  dir.write("vocab.json", gpt2_vocab());
  dir.write("merges.txt", kGpt2Merges);
  const std::string json = dir.write("tokenizer.json", hf_tokenizer_json());
  dir.write("tokenizer_config.json",
            R"({"bos_token": "<|begin_of_text|>", "eos_token": "<|end_of_text|>"})");
  for (const std::string& spec : {json, dir.path()}) {
    auto loaded = load_tokenizer(spec);
    ASSERT_TRUE(loaded.ok()) << spec << ": " << loaded.status().message();
    EXPECT_EQ(loaded->format, "Hugging Face tokenizer.json");
    EXPECT_EQ(loaded->files, json);
    EXPECT_EQ(loaded->tokenizer->vocab_size(), 7);
    EXPECT_EQ(loaded->tokenizer->bos_id(), 4);
    EXPECT_EQ(loaded->tokenizer->eos_id(), 5);
    EXPECT_EQ(loaded->extra_eos_ids, std::vector<int32_t>{6});
    std::vector<int32_t> ids;
    ASSERT_TRUE(loaded->tokenizer->encode("ab a", true, false, &ids).ok());
    EXPECT_EQ(ids, (std::vector<int32_t>{4, 3, 2, 0}));
  }
  const std::string broken = dir.write("bad-tokenizer.json", "{\"model\": 3}");
  EXPECT_THAT(load_tokenizer(broken), ErrorIs(Error::kInvalidExternalData, "model must be"));
}

TEST(TokenizerLoaderTest, Gpt2PartnerFollowsThePrefix) {
  TempDir dir;
  const std::string vocab = dir.write("gpt2-vocab.json", gpt2_vocab());
  const std::string merges = dir.write("gpt2-merges.txt", kGpt2Merges);
  auto loaded = load_tokenizer(vocab);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->files, vocab + ", " + merges);
}

TEST(TokenizerLoaderTest, Gpt2VocabWithoutMergesIsNotFound) {
  TempDir dir;
  const std::string vocab = dir.write("vocab.json", gpt2_vocab());
  auto loaded = load_tokenizer(vocab);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded, ErrorIs(Error::kNotFound, "merges.txt"));
}

TEST(TokenizerLoaderTest, UnrecognisedFilesSayWhatWasTried) {
  TempDir dir;
  const std::string junk = dir.write("junk.dat", std::string("\x0A\x05garbage-bytes", 15));
  auto loaded = load_tokenizer(junk);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded, ErrorIs(Error::kInvalidExternalData));
  const std::string message = loaded.status().message();
  EXPECT_NE(message.find("SentencePiece"), std::string::npos) << message;
  EXPECT_NE(message.find("llama2.c"), std::string::npos) << message;

  const std::string empty = dir.write("empty.bin", "");
  EXPECT_THAT(load_tokenizer(empty),
              ErrorIs(Error::kInvalidExternalData, "the tokenizer file is empty"));
  const std::string json = dir.write("weird.txt", "{\"a\": 0}");
  EXPECT_THAT(load_tokenizer(json),
              ErrorIs(Error::kInvalidExternalData,
                      "a JSON file that is not named *.json; a GPT-2"));
}

TEST(TokenizerLoaderTest, DirectoryWithoutATokenizer) {
  TempDir dir;
  dir.write("README", "nothing here");
  auto loaded = load_tokenizer(dir.path());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded, ErrorIs(Error::kNotFound, "the directory holds no tokenizer file"));
}

}  // namespace
}  // namespace torchlight
