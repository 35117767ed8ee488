// `torchlight llm --stats-json FILE`: the session's statistics and token
// ids as one JSON object, with one entry per turn.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/status.h"
#include "tools/cli/llm_options.h"
#include "tools/cli/llm_session.h"

namespace torchlight {
namespace cli {

/// A JSON string literal (UTF-8 passes through; control bytes escaped).
std::string json_string(const std::string& text);

/// Writes the statistics of `turns` to `path`. Errors: kAccessFailed when
/// the file cannot be written.
Status write_stats_json(const std::string& path, const LlmOptions& options,
                        const Session& session, const std::vector<Turn>& turns);

}  // namespace cli
}  // namespace torchlight
