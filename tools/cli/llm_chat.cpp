#include "tools/cli/llm_chat.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <string>
#include <utility>

#include "tools/cli/llm_stats.h"

namespace torchlight {
namespace cli {

Status chat(Session& session, LlmOptions& options, std::vector<Turn>* turns) {
  // A model without EOS would ramble past its turn: end replies at a line.
  if (options.generation.stop_strings.empty() && session.generator->eos_ids().empty()) {
    options.generation.stop_strings.push_back("\n");
  }
  const bool interactive = ::isatty(STDIN_FILENO) != 0;
  StdoutStream out;
  bool first = true;
  while (true) {
    std::string line;
    if (first && options.has_prompt) {
      line = options.prompt;
    } else {
      if (interactive) std::fputs("> ", stderr);
      if (!std::getline(std::cin, line)) break;
    }
    first = false;
    Result<Turn> turn = run_turn(session, line + "\n", options, /*continue=*/true, &out);
    if (!turn.ok() && turn.error() == Error::kOutOfResources) {
      if (!options.quiet) {
        std::fprintf(stderr, "stopped: end of context (%" PRId64 " tokens): %s\n",
                     session.decoder->max_seq_len(), turn.status().message());
      }
      break;
    }
    if (!turn.ok()) return turn.status();
    out.end_line();
    if (options.print_token_ids) print_token_ids(turn.get());
    const bool context_full = turn->stats.stop_reason == StopReason::kEndOfContext;
    if (!options.quiet && (context_full || turn->stats.stop_reason == StopReason::kMaxNewTokens)) {
      std::fprintf(stderr, "%s\n", describe_stop(turn->stats, options.generation).c_str());
    }
    turns->push_back(std::move(turn.get()));
    if (context_full) break;
  }
  return Error::kOk;
}

}  // namespace cli
}  // namespace torchlight
