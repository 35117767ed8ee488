// The options of `torchlight llm`: the flags it accepts, their help text,
// and their conversion into LlmOptions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extension/llm/runner/text_generator.h"
#include "extension/module/module.h"
#include "runtime/core/result.h"
#include "tools/cli/arg_parser.h"

namespace torchlight {
namespace cli {

struct LlmOptions {
  std::string model;
  std::string tokenizer;  // Empty: the program's get_tokenizer() hint.
  std::string prompt;
  bool has_prompt = false;
  // --prompt-tokens: the prompt as token ids (used exactly; no BOS added).
  // Output is then ids, and a tokenizer is optional.
  std::vector<int32_t> prompt_tokens;
  GenerationConfig generation;  // Sampler settings, limits, stop strings.
  int64_t threads = 0;          // 0: leave the pool as it is.
  bool chat = false;
  bool echo = true;
  bool stats = true;
  bool quiet = false;
  bool print_token_ids = false;
  std::string stats_json;  // Empty: no JSON.
  Module::LoadMode load_mode = Module::LoadMode::kMmap;
};

/// The options `torchlight llm` accepts, for ArgParser.
std::vector<OptionSpec> llm_option_specs();

/// Checks and converts parsed arguments. Errors: kInvalidArgument naming
/// the option for a missing --model, a missing --prompt outside --chat, a
/// positional argument, a value out of range, an empty or badly escaped
/// --stop, or an empty --stats-json.
Result<LlmOptions> parse_llm_options(const ArgParser& parser);

/// A --stop value with its escapes applied: \n, \t, \r, \\, \xHH.
/// Errors: kInvalidArgument for an unknown escape, a bad \x, or "".
Result<std::string> unescape_stop_string(const std::string& text);

/// The text of `torchlight llm --help`.
const char* llm_usage();

}  // namespace cli
}  // namespace torchlight
