#include "tools/cli/arg_parser.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <string>

namespace torchlight {
namespace cli {
namespace {

using ::torchlight::testing::ErrorIs;

ArgParser make_parser() {
  return ArgParser("run", {{"repeat"}, {"input", true, true}, {"verbose", false, false}});
}

TEST(ArgParserTest, ParsesValuesFlagsAndPositionals) {
  ArgParser parser = make_parser();
  ASSERT_TRUE(parser.parse({"model.pte", "--repeat", "3", "--input=a.npy", "--input", "b.npy",
                            "--verbose"})
                  .ok());
  EXPECT_FALSE(parser.help_requested());
  ASSERT_EQ(parser.positionals().size(), 1u);
  EXPECT_EQ(parser.positionals()[0], "model.pte");
  EXPECT_EQ(parser.value("repeat", "1"), "3");
  ASSERT_EQ(parser.values("input").size(), 2u);
  EXPECT_EQ(parser.values("input")[0], "a.npy");
  EXPECT_EQ(parser.values("input")[1], "b.npy");
  EXPECT_TRUE(parser.has("verbose"));
  EXPECT_FALSE(ArgParser("x", {}).has("verbose"));
}

TEST(ArgParserTest, FallbackWhenAbsent) {
  ArgParser parser = make_parser();
  ASSERT_TRUE(parser.parse({}).ok());
  EXPECT_EQ(parser.value("repeat", "7"), "7");
  EXPECT_TRUE(parser.values("input").empty());
  EXPECT_FALSE(parser.has("repeat"));
}

TEST(ArgParserTest, HelpAndDoubleDash) {
  ArgParser parser = make_parser();
  ASSERT_TRUE(parser.parse({"-h", "--", "--repeat", "-"}).ok());
  EXPECT_TRUE(parser.help_requested());
  ASSERT_EQ(parser.positionals().size(), 2u);
  EXPECT_EQ(parser.positionals()[0], "--repeat");
  EXPECT_EQ(parser.positionals()[1], "-");
}

TEST(ArgParserTest, ValueMayStartWithDash) {
  ArgParser parser = make_parser();
  ASSERT_TRUE(parser.parse({"--repeat", "-1"}).ok());
  EXPECT_EQ(parser.value("repeat", ""), "-1");
}

TEST(ArgParserTest, Errors) {
  {
    ArgParser parser = make_parser();
    Status s = parser.parse({"--bogus"});
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "--bogus"));
  }
  {
    ArgParser parser = make_parser();
    EXPECT_THAT(parser.parse({"-x"}), ErrorIs(Error::kInvalidArgument, "unknown option '-x'"));
  }
  {
    ArgParser parser = make_parser();
    Status s = parser.parse({"--repeat"});
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "needs a value"));
  }
  {
    ArgParser parser = make_parser();
    EXPECT_THAT(parser.parse({"--repeat", "1", "--repeat", "2"}),
                ErrorIs(Error::kInvalidArgument, "option '--repeat' was given more than once"));
  }
  {
    ArgParser parser = make_parser();
    EXPECT_THAT(parser.parse({"--verbose=yes"}),
                ErrorIs(Error::kInvalidArgument, "option '--verbose' takes no value"));
  }
}

TEST(ParseIntOptionTest, AcceptsOnlyWholeNumbersInRange) {
  Result<int64_t> ok = parse_int_option("repeat", "20", 1, 100);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.get(), 20);
  EXPECT_EQ(parse_int_option("repeat", "1", 1, 100).get(), 1);
  for (const char* bad : {"0", "101", "abc", "", "3x", "1.5", "-2", "99999999999999999999999"}) {
    Result<int64_t> r = parse_int_option("repeat", bad, 1, 100);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_THAT(r, ErrorIs(Error::kInvalidArgument, "--repeat"));
  }
}

TEST(ParseUint64OptionTest, FullRangeButNoSign) {
  EXPECT_EQ(parse_uint64_option("seed", "0").get(), 0u);
  EXPECT_EQ(parse_uint64_option("seed", "18446744073709551615").get(), UINT64_MAX);
  EXPECT_FALSE(parse_uint64_option("seed", "18446744073709551616").ok());
  EXPECT_FALSE(parse_uint64_option("seed", "-1").ok());
  EXPECT_FALSE(parse_uint64_option("seed", "+1").ok());
  EXPECT_FALSE(parse_uint64_option("seed", "").ok());
  EXPECT_FALSE(parse_uint64_option("seed", "12a").ok());
}

TEST(ParseChoiceOptionTest, IndexOrListedChoices) {
  EXPECT_EQ(parse_choice_option("fill", "ones", {"zeros", "ones", "random"}).get(), 1u);
  Result<size_t> bad = parse_choice_option("fill", "twos", {"zeros", "ones", "random"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("zeros, ones, random"), std::string::npos)
      << bad.status().message();
}

}  // namespace
}  // namespace cli
}  // namespace torchlight
