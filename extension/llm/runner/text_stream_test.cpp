#include "extension/llm/runner/text_stream.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchlight {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

// Pushes each piece and concatenates what is released, then finish().
std::string stream_all(TextStream& stream, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& piece : pieces) out += std::string(stream.push(piece));
  out += std::string(stream.finish());
  return out;
}

TEST(TextStreamTest, PassesAsciiThroughImmediately) {
  TextStream stream;
  EXPECT_EQ(stream.push("Hello"), "Hello");
  EXPECT_EQ(stream.push(", world"), ", world");
  EXPECT_EQ(stream.finish(), "");
  EXPECT_FALSE(stream.stopped());
}

TEST(TextStreamTest, HoldsAnIncompleteUtf8CharacterUntilItCompletes) {
  TextStream stream;
  EXPECT_EQ(stream.push("caf\xC3"), "caf");  // é = C3 A9, split across tokens
  EXPECT_EQ(stream.push("\xA9!"), "\xC3\xA9!");
  // A 4-byte character (U+1F600) in three pieces.
  EXPECT_EQ(stream.push("\xF0"), "");
  EXPECT_EQ(stream.push("\x9F\x98"), "");
  EXPECT_EQ(stream.push("\x80"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(stream.finish(), "");
}

TEST(TextStreamTest, ReplacesInvalidUtf8LikePython) {
  // Expected values are Python's bytes.decode("utf-8", errors="replace").
  struct Case {
    std::string in, out;
  };
  const Case cases[] = {
      {"\xFF" "a", kFffd + "a"},
      {"\x80", kFffd},                                  // stray continuation
      {"\xC3" "A", kFffd + "A"},                        // lead then ASCII
      {"\xE0\x80", kFffd + kFffd},                      // overlong: E0 needs A0..BF
      {"\xED\xA0\x80", kFffd + kFffd + kFffd},          // surrogate
      {"\xF4\x90\x80\x80", kFffd + kFffd + kFffd + kFffd},  // above U+10FFFF
      {"\xE2\x82" "x", kFffd + "x"},                    // maximal subpart is one U+FFFD
      {"\xC0\xAF", kFffd + kFffd},
  };
  for (const Case& c : cases) {
    TextStream stream;
    EXPECT_EQ(stream_all(stream, {c.in}), c.out) << "input bytes: " << c.in.size();
  }
}

TEST(TextStreamTest, FinishReplacesATruncatedCharacter) {
  TextStream stream;
  EXPECT_EQ(stream.push("ok\xE2\x82"), "ok");
  EXPECT_EQ(stream.finish(), kFffd);
}

TEST(TextStreamTest, StopStringSpanningTokensIsNeverPrinted) {
  TextStream stream({"\n\n"});
  EXPECT_EQ(stream.push("Hello\n"), "Hello");  // "\n" might begin the stop string
  EXPECT_FALSE(stream.stopped());
  EXPECT_EQ(stream.push("\nWorld"), "");
  EXPECT_TRUE(stream.stopped());
  EXPECT_EQ(stream.matched_stop(), 0);
  EXPECT_EQ(stream.push("more"), "");
  EXPECT_EQ(stream.finish(), "");
}

TEST(TextStreamTest, HeldPrefixIsReleasedWhenTheStopStringDoesNotComplete) {
  TextStream stream({"</s>"});
  EXPECT_EQ(stream.push("a<"), "a");
  EXPECT_EQ(stream.push("/"), "");
  EXPECT_EQ(stream.push("b"), "</b");
  EXPECT_EQ(stream.push("x</"), "x");
  EXPECT_EQ(stream.finish(), "</");  // generation ended without the stop string
  EXPECT_FALSE(stream.stopped());
}

TEST(TextStreamTest, StopStringInsideOneTokenCutsThatToken) {
  TextStream stream({"STOP"});
  EXPECT_EQ(stream.push("abSTOPcd"), "ab");
  EXPECT_TRUE(stream.stopped());
}

TEST(TextStreamTest, EarliestOfSeveralStopStringsWins) {
  TextStream stream({"world", "lo"});
  EXPECT_EQ(stream_all(stream, {"hel", "lo world"}), "hel");
  EXPECT_EQ(stream.matched_stop(), 1);
}

TEST(TextStreamTest, StopStringAcrossManySingleByteTokens) {
  TextStream stream({"END"});
  std::string out;
  for (char c : std::string("xyENxENDzz")) out += std::string(stream.push(std::string(1, c)));
  out += std::string(stream.finish());
  EXPECT_EQ(out, "xyENx");
  EXPECT_TRUE(stream.stopped());
}

TEST(TextStreamTest, MultibyteStopStringAndHeldUtf8) {
  TextStream stream({"\xC3\xA9t\xC3\xA9"});  // "été"
  EXPECT_EQ(stream.push("un \xC3"), "un ");
  EXPECT_EQ(stream.push("\xA9t"), "");
  EXPECT_EQ(stream.push("\xC3\xA9!"), "");
  EXPECT_TRUE(stream.stopped());
}

TEST(TextStreamTest, ResetForgetsHeldBytesAndTheMatch) {
  TextStream stream({"ab"});
  EXPECT_EQ(stream.push("xab"), "x");
  ASSERT_TRUE(stream.stopped());
  stream.reset();
  EXPECT_FALSE(stream.stopped());
  EXPECT_EQ(stream.push("a"), "");
  stream.reset();
  EXPECT_EQ(stream.push("c"), "c");
}

}  // namespace
}  // namespace torchlight
