#include "extension/llm/tokenizers/pretokenizer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchlight {
namespace {

std::vector<std::string> split(PretokenizePattern p, std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t n = next_pretoken(p, text);
    if (n == 0 || n > text.size()) {
      ADD_FAILURE() << "no progress";
      break;
    }
    out.emplace_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return out;
}

using V = std::vector<std::string>;
constexpr auto kGpt2 = PretokenizePattern::kGpt2;
constexpr auto kCl100k = PretokenizePattern::kCl100k;
constexpr auto kO200k = PretokenizePattern::kO200k;

TEST(Pretokenizer, EmptyText) { EXPECT_EQ(next_pretoken(kGpt2, ""), 0u); }

TEST(Pretokenizer, Gpt2Words) {
  EXPECT_EQ(split(kGpt2, "Hello world!"), (V{"Hello", " world", "!"}));
  EXPECT_EQ(split(kGpt2, "I'm here, isn't it"), (V{"I", "'m", " here", ",", " isn", "'t", " it"}));
  // Contractions are case-sensitive in GPT-2's pattern.
  EXPECT_EQ(split(kGpt2, "I'M"), (V{"I", "'", "M"}));
  // Letter runs include non-ASCII letters; numbers are one run.
  EXPECT_EQ(split(kGpt2, "café 12345 x1"), (V{"café", " 12345", " x", "1"}));
  EXPECT_EQ(split(kGpt2, "a... b"), (V{"a", "...", " b"}));
}

TEST(Pretokenizer, Gpt2Whitespace) {
  // \s+(?!\S) leaves the last space to prefix the next word.
  EXPECT_EQ(split(kGpt2, "a   b"), (V{"a", "  ", " b"}));
  EXPECT_EQ(split(kGpt2, "a   "), (V{"a", "   "}));
  // GPT-2 has no newline alternative: "\n\n" before a word splits.
  EXPECT_EQ(split(kGpt2, "a\n\nb"), (V{"a", "\n", "\n", "b"}));
  EXPECT_EQ(split(kGpt2, " \tx"), (V{" ", "\t", "x"}));
}

TEST(Pretokenizer, Cl100k) {
  EXPECT_EQ(split(kCl100k, "Hello world!"), (V{"Hello", " world", "!"}));
  // Case-insensitive contractions.
  EXPECT_EQ(split(kCl100k, "I'M YOU'RE"), (V{"I", "'M", " YOU", "'RE"}));
  // Numbers in groups of at most three.
  EXPECT_EQ(split(kCl100k, "1234567"), (V{"123", "456", "7"}));
  // Any non-letter, non-number, non-newline may prefix a word.
  EXPECT_EQ(split(kCl100k, "\tfoo(bar)"), (V{"\tfoo", "(bar", ")"}));
  // Newline runs, keeping spaces before them.
  EXPECT_EQ(split(kCl100k, "a\n\nb"), (V{"a", "\n\n", "b"}));
  EXPECT_EQ(split(kCl100k, "a  \n  b"), (V{"a", "  \n", " ", " b"}));
  // Punctuation absorbs following newlines.
  EXPECT_EQ(split(kCl100k, "x.\n\ny"), (V{"x", ".\n\n", "y"}));
}

TEST(Pretokenizer, O200k) {
  EXPECT_EQ(split(kO200k, "HelloWorld"), (V{"Hello", "World"}));
  EXPECT_EQ(split(kO200k, "XMLHttpRequest"), (V{"XMLHttp", "Request"}));
  EXPECT_EQ(split(kO200k, "ABC def"), (V{"ABC", " def"}));
  EXPECT_EQ(split(kO200k, "don't"), (V{"don't"}));
  EXPECT_EQ(split(kO200k, "path/to/x"), (V{"path", "/to", "/x"}));
  EXPECT_EQ(split(kO200k, "a//\nb"), (V{"a", "//\n", "b"}));
}

// Whatever the bytes, the pieces are non-empty and concatenate to the text.
TEST(Pretokenizer, PiecesCoverArbitraryBytes) {
  uint32_t x = 12345;
  for (int trial = 0; trial < 2000; ++trial) {
    std::string text;
    const int len = trial % 40;
    for (int i = 0; i < len; ++i) {
      x = x * 1664525u + 1013904223u;
      // Bias towards interesting bytes: spaces, newlines, quotes, UTF-8 leads.
      static const char kPool[] = " \n\r\t'sSaZ09.\xC3\xA9\xE4\xBD\xA0\xF0\x9F\x98\x80\x80\xFF";
      const uint32_t r = x >> 24;
      text.push_back(r < 200 ? kPool[r % (sizeof(kPool) - 1)] : static_cast<char>(x >> 16));
    }
    for (auto p : {kGpt2, kCl100k, kO200k}) {
      std::string joined;
      for (const std::string& piece : split(p, text)) {
        ASSERT_FALSE(piece.empty());
        joined += piece;
      }
      ASSERT_EQ(joined, text) << to_string(p);
    }
  }
}

}  // namespace
}  // namespace torchlight
