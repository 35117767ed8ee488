// A loaded `torchlight llm` session (program, tokenizer, text generator),
// and one generation turn streamed to stdout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "extension/llm/runner/llm_metadata.h"
#include "extension/llm/runner/module_decoder_step.h"
#include "extension/llm/runner/text_generator.h"
#include "extension/llm/runner/tokenizer_loader.h"
#include "extension/module/module.h"
#include "runtime/core/result.h"
#include "tools/cli/llm_options.h"

namespace torchlight {
namespace cli {

// Everything a generation needs, loaded once.
struct Session {
  std::unique_ptr<Module> module;
  LlmMetadata metadata;
  std::unique_ptr<ModuleDecoderStep> decoder;
  LoadedTokenizer tokenizer;
  std::unique_ptr<TextGenerator> generator;
  double model_ms = 0;
  double tokenizer_ms = 0;
};

// One generate call's results, with the ids the stream reported.
struct Turn {
  GenerationStats stats;
  std::vector<int32_t> token_ids;
};

/// Loads the program, its metadata, the tokenizer (--tokenizer, else the
/// program's hint, looked up beside the model) and the generator, timing
/// the model and the tokenizer. Errors name the file that failed.
Result<Session> load_session(const LlmOptions& options);

// Streams generated text to stdout as it arrives; remembers whether the
// output ends a line, so a reply can be closed with one.
class StdoutStream {
 public:
  void write(std::string_view text);
  void end_line();

 private:
  bool at_line_start_ = true;
  bool wrote_ = false;
};

/// Generates from `text` (continuing the conversation in the KV cache when
/// `continue_conversation`), streaming to `out`, which must not be null.
/// Generates from options.prompt_tokens (as given; no BOS added), writing
/// each generated id and a space to `out`.
Result<Turn> run_turn_from_ids(Session& session, const LlmOptions& options, StdoutStream* out);

Result<Turn> run_turn(Session& session, const std::string& text, const LlmOptions& options,
                      bool continue_conversation, StdoutStream* out);

}  // namespace cli
}  // namespace torchlight
