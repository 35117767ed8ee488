#include "tools/cli/llm_stats.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "extension/llm/runner/peak_rss.h"
#include "tools/cli/cli_report.h"

namespace torchlight {
namespace cli {
namespace {

constexpr int kLabelWidth = 12;

void stat_row(const std::string& label, const std::string& value) {
  std::fprintf(stderr, "%-*s %s\n", kLabelWidth - 1, label.c_str(), value.c_str());
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", digits, value);
  return text;
}

std::string ms(double value) { return fixed(value, value < 10 ? 2 : 1) + " ms"; }

std::string rate(double tokens_per_second) {
  if (tokens_per_second >= 100) {
    return with_commas(static_cast<uint64_t>(std::llround(tokens_per_second))) + " tokens/s";
  }
  return fixed(tokens_per_second, 1) + " tokens/s";
}

// `text` shown with escapes, for messages about stop strings.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (b < 0x20 || b == 0x7F) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02X", b);
      out += hex;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string describe_stop(const GenerationStats& stats, const GenerationConfig& config) {
  switch (stats.stop_reason) {
    case StopReason::kEos:
      return "stopped: end of sequence (token " + std::to_string(stats.eos_id) + ")";
    case StopReason::kStopString:
      return "stopped: stop string \"" +
             escaped(config.stop_strings[static_cast<size_t>(stats.stop_string)]) + "\"";
    case StopReason::kMaxNewTokens:
      return "stopped: " + std::to_string(stats.generated_tokens) +
             " new tokens (--max-new-tokens)";
    case StopReason::kEndOfContext:
      return "stopped: end of context (" + std::to_string(stats.max_seq_len) + " tokens)";
  }
  return "stopped";
}

Totals sum_turns(const std::vector<Turn>& turns) {
  Totals t;
  for (const Turn& turn : turns) {
    const GenerationStats& s = turn.stats;
    t.prompt_tokens += s.prompt_tokens;
    t.generated_tokens += s.generated_tokens;
    t.decode_tokens += s.generated_tokens > 1 ? s.generated_tokens - 1 : 0;
    t.prefill_ms += s.prefill_ms;
    t.decode_ms += s.decode_ms;
    t.total_ms += s.total_ms;
  }
  if (!turns.empty()) t.time_to_first_token_ms = turns[0].stats.time_to_first_token_ms;
  return t;
}

double per_second(int64_t tokens, double milliseconds) {
  return milliseconds > 0 && tokens > 0 ? 1000.0 * static_cast<double>(tokens) / milliseconds : 0;
}

void print_stats(const Session& session, const std::vector<Turn>& turns) {
  const Totals t = sum_turns(turns);
  stat_row("load", ms(session.model_ms + session.tokenizer_ms) + "  (model " +
                       ms(session.model_ms) + ", tokenizer " + ms(session.tokenizer_ms) + ")");
  if (turns.size() > 1) stat_row("turns", std::to_string(turns.size()));
  stat_row("prompt", with_commas(static_cast<uint64_t>(t.prompt_tokens)) + " tokens, prefill " +
                         ms(t.prefill_ms) + " (" + rate(per_second(t.prompt_tokens, t.prefill_ms)) +
                         ")");
  stat_row("first token", ms(t.time_to_first_token_ms));
  stat_row("decode", with_commas(static_cast<uint64_t>(t.generated_tokens)) + " tokens, " +
                         ms(t.decode_ms) + " after the first (" +
                         rate(per_second(t.decode_tokens, t.decode_ms)) + ")");
  stat_row("peak RSS", fixed(static_cast<double>(peak_rss_bytes()) / (1 << 20), 1) + " MiB");
}

void print_token_ids(const Turn& turn) {
  std::string line = "prompt ids: ";
  for (size_t i = 0; i < turn.stats.prompt_ids.size(); ++i) {
    line += (i == 0 ? "" : " ") + std::to_string(turn.stats.prompt_ids[i]);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
  line = "token ids: ";
  for (size_t i = 0; i < turn.token_ids.size(); ++i) {
    line += (i == 0 ? "" : " ") + std::to_string(turn.token_ids[i]);
  }
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace cli
}  // namespace torchlight
