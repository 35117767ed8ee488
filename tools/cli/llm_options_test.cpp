#include "tools/cli/llm_options.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace torchlight {
namespace cli {
namespace {

using ::torchlight::testing::ErrorIs;

Result<LlmOptions> parse(const std::vector<std::string>& args) {
  ArgParser parser("llm", llm_option_specs());
  Status s = parser.parse(args);
  if (!s.ok()) return s;
  return parse_llm_options(parser);
}

// The error message of parsing `args`, or "" when it parsed.
std::string error_of(const std::vector<std::string>& args) {
  Result<LlmOptions> o = parse(args);
  if (o.ok()) return "";
  EXPECT_THAT(o, ErrorIs(Error::kInvalidArgument));
  return o.status().message();
}

TEST(LlmCommandTest, DefaultsAndEveryOption) {
  auto defaults = parse({"--model", "m.pte", "--prompt", "Hi"});
  ASSERT_TRUE(defaults.ok()) << defaults.status().message();
  EXPECT_EQ(defaults->model, "m.pte");
  EXPECT_EQ(defaults->prompt, "Hi");
  EXPECT_TRUE(defaults->tokenizer.empty());
  EXPECT_EQ(defaults->generation.max_new_tokens, -1);
  EXPECT_FLOAT_EQ(defaults->generation.sampler.temperature, 0.8f);
  EXPECT_FLOAT_EQ(defaults->generation.sampler.top_p, 0.9f);
  EXPECT_TRUE(defaults->echo);
  EXPECT_TRUE(defaults->stats);
  EXPECT_FALSE(defaults->chat);

  auto all = parse({"--model=m.pte", "--tokenizer", "bytes", "--prompt", "", "--max-new-tokens",
                    "12", "--temperature", "0", "--top-k", "5", "--top-p", "0.5",
                    "--repetition-penalty", "1.3", "--seed", "42", "--stop", "\\n\\n", "--stop",
                    "END", "--ignore-eos", "--threads", "2", "--no-echo", "--quiet", "--stats-json", "s.json",
                    "--print-token-ids", "--load-mode", "file"});
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->tokenizer, "bytes");
  EXPECT_TRUE(all->has_prompt);
  EXPECT_EQ(all->prompt, "");
  EXPECT_EQ(all->generation.max_new_tokens, 12);
  EXPECT_EQ(all->generation.sampler.temperature, 0.0f);
  EXPECT_EQ(all->generation.sampler.top_k, 5);
  EXPECT_FLOAT_EQ(all->generation.sampler.top_p, 0.5f);
  EXPECT_FLOAT_EQ(all->generation.sampler.repetition_penalty, 1.3f);
  EXPECT_EQ(all->generation.sampler.seed, 42u);
  EXPECT_EQ(all->generation.stop_strings, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(all->generation.ignore_eos);
  EXPECT_FALSE(defaults->generation.ignore_eos);
  EXPECT_EQ(all->threads, 2);
  EXPECT_FALSE(all->echo);
  EXPECT_TRUE(all->quiet);
  EXPECT_FALSE(all->stats);  // --quiet implies --no-stats
  EXPECT_EQ(all->stats_json, "s.json");
  EXPECT_TRUE(all->print_token_ids);
  EXPECT_EQ(all->load_mode, Module::LoadMode::kFile);
}

TEST(LlmCommandTest, ChatNeedsNoPrompt) {
  auto chat = parse({"--model", "m.pte", "--chat"});
  ASSERT_TRUE(chat.ok()) << chat.status().message();
  EXPECT_TRUE(chat->chat);
  EXPECT_FALSE(chat->has_prompt);
}

TEST(LlmCommandTest, ErrorsNameTheOption) {
  EXPECT_NE(error_of({"--prompt", "x"}).find("--model"), std::string::npos);
  EXPECT_NE(error_of({"--model", "m.pte"}).find("--prompt"), std::string::npos);
  EXPECT_NE(error_of({"m.pte", "--model", "m.pte", "--prompt", "x"}).find("'m.pte'"),
            std::string::npos);
  const std::vector<std::string> base = {"--model", "m.pte", "--prompt", "x"};
  auto with = [&base](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return error_of(args);
  };
  EXPECT_NE(with({"--max-new-tokens", "0"}).find("--max-new-tokens"), std::string::npos);
  EXPECT_NE(with({"--max-new-tokens", "ten"}).find("--max-new-tokens"), std::string::npos);
  EXPECT_NE(with({"--temperature", "-1"}).find("--temperature"), std::string::npos);
  EXPECT_NE(with({"--temperature", "nan"}).find("--temperature"), std::string::npos);
  EXPECT_NE(with({"--top-k", "-2"}).find("--top-k"), std::string::npos);
  EXPECT_NE(with({"--top-p", "0"}).find("--top-p"), std::string::npos);
  EXPECT_NE(with({"--top-p", "1.5"}).find("--top-p"), std::string::npos);
  EXPECT_NE(with({"--repetition-penalty", "0"}).find("--repetition-penalty"), std::string::npos);
  EXPECT_NE(with({"--seed", "-1"}).find("--seed"), std::string::npos);
  EXPECT_NE(with({"--threads", "0"}).find("--threads"), std::string::npos);
  EXPECT_NE(with({"--stop", ""}).find("--stop"), std::string::npos);
  EXPECT_NE(with({"--stop", "a\\q"}).find("\\q"), std::string::npos);
  EXPECT_NE(with({"--stats-json", ""}).find("--stats-json"), std::string::npos);
  EXPECT_NE(with({"--tokenizer", ""}).find("--tokenizer"), std::string::npos);
  EXPECT_NE(with({"--load-mode", "tape"}).find("--load-mode"), std::string::npos);
  EXPECT_NE(with({"--temprature", "1"}).find("--temprature"), std::string::npos);
  EXPECT_NE(with({"--chat=yes"}).find("takes no value"), std::string::npos);
  EXPECT_NE(with({"--seed", "1", "--seed", "2"}).find("more than once"), std::string::npos);
  EXPECT_EQ(with({}), "");
}

TEST(LlmCommandTest, StopStringEscapes) {
  struct Case {
    std::string in, out;
  };
  for (const Case& c : std::vector<Case>{{"\\n", "\n"},
                                         {"a\\tb", "a\tb"},
                                         {"\\r\\n", "\r\n"},
                                         {"\\\\", "\\"},
                                         {"\\x41\\x0a", "A\n"},
                                         {"plain", "plain"}}) {
    auto out = unescape_stop_string(c.in);
    ASSERT_TRUE(out.ok()) << c.in << ": " << out.status().message();
    EXPECT_EQ(out.get(), c.out) << c.in;
  }
  for (const char* bad : {"", "\\", "x\\", "\\x4", "\\xZZ", "\\e"}) {
    EXPECT_THAT(unescape_stop_string(bad), ErrorIs(Error::kInvalidArgument)) << bad;
  }
}

TEST(LlmCommandTest, UsageListsEveryOption) {
  const std::string usage = llm_usage();
  for (const OptionSpec& spec : llm_option_specs()) {
    EXPECT_NE(usage.find("--" + spec.name), std::string::npos) << spec.name;
  }
}

}  // namespace
}  // namespace cli
}  // namespace torchlight
