#include "extension/llm/tokenizers/vocab_json.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <string>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

TEST(VocabJson, ParsesKeysAndEscapes) {
  auto r = parse_vocab_json(
      " {\"a\": 0, \"\\u0120the\":1,\n\"q\\\"\\\\\\/\\n\\t\" : 2, \"\\ud83d\\ude00\": 3, \"é\": 4} ",
      "v.json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 5u);
  EXPECT_EQ((*r)[0].key, "a");
  EXPECT_EQ((*r)[0].id, 0);
  EXPECT_EQ((*r)[1].key, "\xC4\xA0the");
  EXPECT_EQ((*r)[2].key, "q\"\\/\n\t");
  EXPECT_EQ((*r)[3].key, "\xF0\x9F\x98\x80");
  EXPECT_EQ((*r)[4].key, "\xC3\xA9");
  EXPECT_EQ((*r)[4].id, 4);
  auto empty = parse_vocab_json("{}", "e.json");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(VocabJson, ErrorsNameFileLineAndProblem) {
  struct Case {
    const char* json;
    const char* message_part;
  } cases[] = {
      {"", "file ends"},
      {"[1]", "expected '{'"},
      {"{\"a\": 1", "file ends"},
      {"{\"a\": -1}", "negative"},
      {"{\"a\": 1.5}", "not an integer"},
      {"{\"a\": 99999999999}", "31 bits"},
      {"{\"a\": 01}", "leading zero"},
      {"{\"a\": \"x\"}", "expected an integer"},
      {"{\"a\": 1,\n \"a\": 2}", "appears twice"},
      {"{\"a\\q\": 1}", "unknown escape"},
      {"{\"\\ud800\": 1}", "surrogate"},
      {"{\"\\udc00\": 1}", "lone low surrogate"},
      {"{\"\\u12\": 1}", "hex digits"},
      {"{\"a\nb\": 1}", "control character"},
      {"{\"\xFF\": 1}", "invalid UTF-8"},
      {"{\"a\": 1} x", "unexpected data"},
      {"{\"a\" 1}", "expected ':'"},
      {"{\"a\": 1 \"b\": 2}", "expected ',' or '}'"},
  };
  for (const Case& c : cases) {
    auto r = parse_vocab_json(c.json, "bad.json");
    ASSERT_FALSE(r.ok()) << c.json;
    EXPECT_THAT(r, ErrorIs(Error::kInvalidExternalData)) << c.json;
    const std::string m = r.status().message();
    EXPECT_NE(m.find("bad.json"), std::string::npos) << m;
    EXPECT_NE(m.find(c.message_part), std::string::npos) << c.json << " -> " << m;
  }
  auto r = parse_vocab_json("{\"a\": 1,\n  \"b\": x}", "f.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("line 2 column 8"), std::string::npos)
      << r.status().message();
}

TEST(VocabJson, EveryTruncationFails) {
  const std::string json = "{\"hello\": 1, \"w\\u00f6rld\": 22, \"\\ud83d\\ude00\": 333}";
  for (size_t len = 0; len < json.size(); ++len) {
    auto r = parse_vocab_json(std::string_view(json).substr(0, len), "t.json");
    EXPECT_FALSE(r.ok()) << len;
  }
  EXPECT_TRUE(parse_vocab_json(json, "t.json").ok());
}

}  // namespace
}  // namespace torchlight
