// `torchlight llm --model M.pte --tokenizer T --prompt TEXT`: generates text
// with an LLM program (extension/llm/runner), streaming it to stdout, with
// the stop reason and statistics on stderr (and as JSON with --stats-json).
// With --chat, user turns come from stdin and the conversation stays in
// the model's KV cache. The parts: llm_options (flags), llm_session
// (loading, one turn), llm_chat (the REPL), llm_stats (stderr reports) and
// llm_stats_json (--stats-json).
#pragma once

#include <string>
#include <vector>

namespace torchlight {
namespace cli {

/// Runs the subcommand on `args` (the words after "llm"). Returns 0, or
/// prints one `error:` line on stderr and returns 1.
int llm_command(const std::vector<std::string>& args);

}  // namespace cli
}  // namespace torchlight
