// The pieces of `torchlight llm`'s reports that need no model: JSON string
// escaping, the stop-reason line and the totals over turns. Whole runs
// (stderr table, --stats-json file, --chat) are tested end to end by
// python/tests/llm/test_llm_runner_cli.py.
#include "tools/cli/llm_stats_json.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tools/cli/llm_stats.h"

namespace torchlight {
namespace cli {
namespace {

TEST(LlmStatsJsonTest, JsonStringEscapesQuotesBackslashesAndControlBytes) {
  EXPECT_EQ(json_string(""), "\"\"");
  EXPECT_EQ(json_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(json_string("line\nnext\t\x01"), "\"line\\nnext\\u0009\\u0001\"");
  EXPECT_EQ(json_string("h\xC3\xA9llo"), "\"h\xC3\xA9llo\"");  // UTF-8 passes through.
}

TEST(LlmStatsTest, DescribeStopNamesTheReason) {
  GenerationConfig config;
  config.stop_strings = {"END", "\n\n"};
  GenerationStats s;
  s.stop_reason = StopReason::kEos;
  s.eos_id = 50256;
  EXPECT_EQ(describe_stop(s, config), "stopped: end of sequence (token 50256)");
  s.stop_reason = StopReason::kStopString;
  s.stop_string = 1;
  EXPECT_EQ(describe_stop(s, config), "stopped: stop string \"\\n\\n\"");
  s.stop_reason = StopReason::kMaxNewTokens;
  s.generated_tokens = 12;
  EXPECT_EQ(describe_stop(s, config), "stopped: 12 new tokens (--max-new-tokens)");
  s.stop_reason = StopReason::kEndOfContext;
  s.max_seq_len = 256;
  EXPECT_EQ(describe_stop(s, config), "stopped: end of context (256 tokens)");
}

TEST(LlmStatsTest, TotalsSumTurnsAndKeepTheFirstTimeToFirstToken) {
  std::vector<Turn> turns(2);
  turns[0].stats.prompt_tokens = 5;
  turns[0].stats.generated_tokens = 4;
  turns[0].stats.prefill_ms = 10;
  turns[0].stats.decode_ms = 30;
  turns[0].stats.time_to_first_token_ms = 11;
  turns[1].stats.prompt_tokens = 2;
  turns[1].stats.generated_tokens = 1;  // Its only token is the first: no decode tokens.
  turns[1].stats.time_to_first_token_ms = 99;
  const Totals t = sum_turns(turns);
  EXPECT_EQ(t.prompt_tokens, 7);
  EXPECT_EQ(t.generated_tokens, 5);
  EXPECT_EQ(t.decode_tokens, 3);
  EXPECT_DOUBLE_EQ(t.prefill_ms, 10);
  EXPECT_DOUBLE_EQ(t.time_to_first_token_ms, 11);
  EXPECT_DOUBLE_EQ(per_second(3, 30), 100);
  EXPECT_DOUBLE_EQ(per_second(0, 30), 0);
  EXPECT_DOUBLE_EQ(per_second(3, 0), 0);
  EXPECT_EQ(sum_turns({}).prompt_tokens, 0);
}

}  // namespace
}  // namespace cli
}  // namespace torchlight
