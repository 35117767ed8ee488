// `torchlight llm --chat`: a read-eval-print loop over stdin, one user turn
// per line, each appended to the conversation in the model's KV cache.
#pragma once

#include <vector>

#include "runtime/core/status.h"
#include "tools/cli/llm_options.h"
#include "tools/cli/llm_session.h"

namespace torchlight {
namespace cli {

/// Runs turns (--prompt first, if given) until EOF or a full context,
/// appending each to `turns`. Without stop strings or EOS ids, adds "\n" as
/// a stop string to `options`, so a reply ends at a line.
Status chat(Session& session, LlmOptions& options, std::vector<Turn>* turns);

}  // namespace cli
}  // namespace torchlight
