// What `torchlight llm` reports on stderr: the stop reason, the statistics
// table and the token ids, plus the totals over a session's turns that the
// table and the JSON file (llm_stats_json.h) share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extension/llm/runner/text_generator.h"
#include "tools/cli/llm_session.h"

namespace torchlight {
namespace cli {

// Totals over the turns of a session: sums, with the first turn's TTFT.
struct Totals {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  int64_t decode_tokens = 0;  // Generated after each turn's first token.
  double prefill_ms = 0;
  double decode_ms = 0;
  double total_ms = 0;
  double time_to_first_token_ms = 0;
};

Totals sum_turns(const std::vector<Turn>& turns);

/// tokens per second over `milliseconds`; 0 when either is 0.
double per_second(int64_t tokens, double milliseconds);

/// "stopped: ..." with the reason generation ended.
std::string describe_stop(const GenerationStats& stats, const GenerationConfig& config);

/// The statistics table: load, prompt/prefill, first token, decode, peak RSS.
void print_stats(const Session& session, const std::vector<Turn>& turns);

/// The prompt's and the generated token ids, one line each.
void print_token_ids(const Turn& turn);

}  // namespace cli
}  // namespace torchlight
