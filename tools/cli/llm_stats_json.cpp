#include "tools/cli/llm_stats_json.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "extension/llm/runner/peak_rss.h"
#include "tools/cli/llm_stats.h"

namespace torchlight {
namespace cli {
namespace {

std::string json_ids(const std::vector<int32_t>& ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i == 0 ? "" : ", ") + std::to_string(ids[i]);
  return out + "]";
}

std::string json_number(double value) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.4f", std::isfinite(value) ? value : 0.0);
  return text;
}

std::string turn_json(const Turn& turn, const GenerationConfig& config) {
  const GenerationStats& s = turn.stats;
  std::string j = "{";
  j += "\"prompt_tokens\": " + std::to_string(s.prompt_tokens);
  j += ", \"generated_tokens\": " + std::to_string(s.generated_tokens);
  j += ", \"time_to_first_token_ms\": " + json_number(s.time_to_first_token_ms);
  j += ", \"prefill_ms\": " + json_number(s.prefill_ms);
  j += ", \"prefill_tokens_per_s\": " + json_number(s.prefill_tokens_per_second());
  j += ", \"decode_ms\": " + json_number(s.decode_ms);
  j += ", \"decode_tokens_per_s\": " + json_number(s.decode_tokens_per_second());
  j += ", \"total_ms\": " + json_number(s.total_ms);
  j += ", \"stop_reason\": " + json_string(to_string(s.stop_reason));
  if (s.stop_reason == StopReason::kStopString) {
    j += ", \"stop_string\": " +
         json_string(config.stop_strings[static_cast<size_t>(s.stop_string)]);
  }
  if (s.stop_reason == StopReason::kEos) j += ", \"eos_id\": " + std::to_string(s.eos_id);
  j += ", \"position\": " + std::to_string(s.position);
  j += ", \"prompt_token_ids\": " + json_ids(s.prompt_ids);
  j += ", \"token_ids\": " + json_ids(turn.token_ids);
  return j + "}";
}

}  // namespace

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (b < 0x20) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\u%04x", b);
      out += hex;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

Status write_stats_json(const std::string& path, const LlmOptions& options,
                        const Session& session, const std::vector<Turn>& turns) {
  const Totals t = sum_turns(turns);
  std::string j = "{\n";
  j += "  \"model\": " + json_string(options.model) + ",\n";
  j += "  \"tokenizer\": " + json_string(session.tokenizer.format) + ",\n";
  j += "  \"max_seq_len\": " + std::to_string(session.decoder->max_seq_len()) + ",\n";
  j += "  \"vocab_size\": " + std::to_string(session.decoder->vocab_size()) + ",\n";
  j += "  \"load_ms\": " + json_number(session.model_ms + session.tokenizer_ms) + ",\n";
  j += "  \"model_load_ms\": " + json_number(session.model_ms) + ",\n";
  j += "  \"tokenizer_load_ms\": " + json_number(session.tokenizer_ms) + ",\n";
  j += "  \"prompt_tokens\": " + std::to_string(t.prompt_tokens) + ",\n";
  j += "  \"generated_tokens\": " + std::to_string(t.generated_tokens) + ",\n";
  j += "  \"time_to_first_token_ms\": " + json_number(t.time_to_first_token_ms) + ",\n";
  j += "  \"ttft_ms\": " + json_number(t.time_to_first_token_ms) + ",\n";
  j += "  \"prefill_ms\": " + json_number(t.prefill_ms) + ",\n";
  j += "  \"prefill_tokens_per_s\": " + json_number(per_second(t.prompt_tokens, t.prefill_ms)) +
       ",\n";
  j += "  \"decode_ms\": " + json_number(t.decode_ms) + ",\n";
  j += "  \"decode_tokens_per_s\": " + json_number(per_second(t.decode_tokens, t.decode_ms)) +
       ",\n";
  j += "  \"total_ms\": " + json_number(t.total_ms) + ",\n";
  j += "  \"peak_rss_bytes\": " + std::to_string(peak_rss_bytes()) + ",\n";
  j += "  \"stop_reason\": " +
       json_string(turns.empty() ? "none" : to_string(turns.back().stats.stop_reason)) + ",\n";
  j += "  \"prompt_token_ids\": " + json_ids(turns.empty() ? std::vector<int32_t>()
                                                           : turns[0].stats.prompt_ids) + ",\n";
  j += "  \"token_ids\": " + json_ids(turns.empty() ? std::vector<int32_t>()
                                                    : turns[0].token_ids) + ",\n";
  j += "  \"turns\": [";
  for (size_t i = 0; i < turns.size(); ++i) {
    j += (i == 0 ? "\n    " : ",\n    ") + turn_json(turns[i], options.generation);
  }
  j += turns.empty() ? "]\n}\n" : "\n  ]\n}\n";
  std::ofstream out(path, std::ios::binary);
  out << j;
  out.close();
  TL_CHECK_OR_RETURN(!out.fail(), Error::kAccessFailed, "%s: cannot write the statistics file",
                     path.c_str());
  return Error::kOk;
}

}  // namespace cli
}  // namespace torchlight
