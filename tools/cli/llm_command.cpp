#include "tools/cli/llm_command.h"

#include <unistd.h>

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <utility>

#include "extension/llm/runner/llm_metadata.h"
#include "extension/llm/runner/module_decoder_step.h"
#include "extension/llm/runner/peak_rss.h"
#include "extension/llm/runner/tokenizer_loader.h"
#include "extension/threadpool/threadpool.h"
#include "tools/cli/cli_backends.h"
#include "tools/cli/cli_report.h"
#include "tools/cli/timing.h"

namespace torchlight {
namespace cli {
namespace {

constexpr int kLabelWidth = 12;
constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxNewTokensLimit = int64_t{1} << 31;

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

// A JSON string literal (UTF-8 passes through; control bytes escaped).
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

// The tokenizer to load: --tokenizer, else the program's hint; a hint that
// names a file is looked up beside the model.
Result<std::string> tokenizer_spec(const LlmOptions& options, const LlmMetadata& metadata) {
  if (!options.tokenizer.empty()) return options.tokenizer;
  TL_CHECK_OR_RETURN(!metadata.tokenizer.empty(), Error::kInvalidArgument,
                     "no tokenizer: pass --tokenizer (a file, a directory or 'bytes'); %s has "
                     "no %s() hint",
                     options.model.c_str(), LlmMetadata::kTokenizer);
  if (metadata.tokenizer == "bytes" || metadata.tokenizer[0] == '/') return metadata.tokenizer;
  const size_t slash = options.model.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : options.model.substr(0, slash + 1);
  return dir + metadata.tokenizer;
}

Result<Session> load_session(const LlmOptions& options) {
  Session session;
  Stopwatch watch;
  session.module = std::make_unique<Module>(options.model, options.load_mode, nullptr,
                                            cli_backends());
  Status loaded = session.module->load();
  if (!loaded.ok()) return blame(options.model, loaded);
  Result<LlmMetadata> metadata = read_llm_metadata(session.module.get());
  if (!metadata.ok()) return blame(options.model, metadata.status());
  session.metadata = std::move(metadata.get());
  Result<std::unique_ptr<ModuleDecoderStep>> decoder =
      ModuleDecoderStep::create(session.module.get(), session.metadata);
  if (!decoder.ok()) return blame(options.model, decoder.status());
  session.decoder = std::move(decoder.get());
  session.model_ms = watch.elapsed_ms();

  watch.restart();
  TL_ASSIGN_OR_RETURN(const std::string spec, tokenizer_spec(options, session.metadata));
  Result<LoadedTokenizer> tokenizer = load_tokenizer(spec);
  if (!tokenizer.ok()) {
    Status s = tokenizer.status();
    return s.with_context("tokenizer '%s'", spec.c_str());
  }
  session.tokenizer = std::move(tokenizer.get());
  session.tokenizer_ms = watch.elapsed_ms();

  TextGeneratorOptions generator_options;
  if (session.metadata.bos_id.has_value()) {
    generator_options.bos_id = static_cast<int32_t>(*session.metadata.bos_id);
  }
  for (const int64_t id : session.metadata.eos_ids) {
    generator_options.eos_ids.push_back(static_cast<int32_t>(id));
  }
  for (const int32_t id : session.tokenizer.extra_eos_ids) generator_options.eos_ids.push_back(id);
  Result<std::unique_ptr<TextGenerator>> generator = TextGenerator::create(
      session.decoder.get(), session.tokenizer.tokenizer.get(), generator_options);
  if (!generator.ok()) {
    Status s = generator.status();
    return s.with_context("%s with tokenizer %s (%s)", options.model.c_str(), spec.c_str(),
                          session.tokenizer.format.c_str());
  }
  session.generator = std::move(generator.get());
  return session;
}

// Streams generated text to stdout as it arrives; remembers whether the
// output ends a line, so a reply can be closed with one.
class StdoutStream {
 public:
  void write(std::string_view text) {
    if (text.empty()) return;
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    at_line_start_ = text.back() == '\n';
    wrote_ = true;
  }
  void end_line() {
    if (wrote_ && !at_line_start_) write("\n");
    wrote_ = false;
  }

 private:
  bool at_line_start_ = true;
  bool wrote_ = false;
};

Result<Turn> run_turn(Session& session, const std::string& text, const LlmOptions& options,
                      bool continue_conversation, StdoutStream* out) {
  Turn turn;
  const TokenCallback callback = [&turn, out](const TokenEvent& event) {
    if (event.token >= 0) turn.token_ids.push_back(event.token);
    out->write(event.text);
  };
  Result<GenerationStats> stats =
      continue_conversation
          ? session.generator->continue_conversation(text, options.generation, callback)
          : session.generator->generate(text, options.generation, callback);
  if (!stats.ok()) return stats.status();
  turn.stats = std::move(stats.get());
  return turn;
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

// --chat: one user turn per stdin line (plus --prompt first, if given),
// each appended to the conversation in the cache.
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

}  // namespace

const char* llm_usage() {
  return "usage: torchlight llm --model MODEL.pte --prompt TEXT [options]\n"
         "       torchlight llm --model MODEL.pte --chat [options]\n"
         "\n"
         "Generates text with an LLM program: the prompt is prefilled in one call, then\n"
         "tokens are decoded one at a time with the KV cache and streamed to stdout.\n"
         "Generation stops on an end-of-sequence token, a stop string, --max-new-tokens\n"
         "or the end of the context; the reason and statistics (load time, time to\n"
         "first token, prefill and decode tokens/s, peak RSS) go to stderr.\n"
         "\n"
         "The program's method is forward(tokens [1, T] int64, input_pos [T] int64)\n"
         "-> logits [1, T, vocab] float32; optional get_max_seq_len, get_vocab_size,\n"
         "get_bos_id, get_eos_ids and get_tokenizer methods add what its shapes do not\n"
         "say (python/torchlight/llm/metadata.py writes them).\n"
         "\n"
         "options:\n"
         "  --model FILE.pte         the LLM program\n"
         "  --tokenizer T            'bytes' (token id = byte), or a tokenizer file or\n"
         "                           directory: llama2.c tokenizer.bin, SentencePiece\n"
         "                           .model, tiktoken rank file, GPT-2 vocab.json +\n"
         "                           merges.txt; the format is detected (default: the\n"
         "                           program's get_tokenizer() hint)\n"
         "  --prompt TEXT            the text to continue (with --chat: the first turn)\n"
         "  --max-new-tokens N       generate at most N tokens (per reply with --chat;\n"
         "                           default: until EOS or the end of the context)\n"
         "  --temperature T          0 is greedy (argmax); default 0.8\n"
         "  --top-k K                sample from the K most likely tokens (default 0: all)\n"
         "  --top-p P                nucleus mass in (0, 1] (default 0.9)\n"
         "  --repetition-penalty R   > 1 discourages repeating tokens (default 1: off)\n"
         "  --seed S                 sampling seed (default 0; same seed, same text)\n"
         "  --stop STRING            stop when the text contains STRING, which is not\n"
         "                           printed; repeatable; escapes \\n \\t \\r \\\\ \\xHH\n"
         "  --ignore-eos             do not stop on end-of-sequence tokens (benchmarks)\n"
         "  --threads N              kernel worker threads (default: one per core)\n"
         "  --chat                   read user turns from stdin, one per line, until EOF\n"
         "                           or the context is full; the conversation stays in\n"
         "                           the KV cache. Without --stop and EOS ids, a reply\n"
         "                           ends at a newline\n"
         "  --no-echo                do not print the prompt before the continuation\n"
         "  --no-stats               do not print statistics\n"
         "  --quiet                  print only the generated text: no stop reason, no\n"
         "                           statistics\n"
         "  --stats-json FILE        write statistics and token ids as JSON\n"
         "  --print-token-ids        print the prompt's and the generated token ids on\n"
         "                           stderr\n"
         "  --load-mode MODE         file, mmap (default) or mlock\n"
         "  -h, --help               show this help\n";
}

std::vector<OptionSpec> llm_option_specs() {
  return {{"model"},
          {"tokenizer"},
          {"prompt"},
          {"max-new-tokens"},
          {"temperature"},
          {"top-k"},
          {"top-p"},
          {"repetition-penalty"},
          {"seed"},
          {"stop", true, true},
          {"ignore-eos", false},
          {"threads"},
          {"chat", false},
          {"no-echo", false},
          {"no-stats", false},
          {"quiet", false},
          {"stats-json"},
          {"print-token-ids", false},
          {"load-mode"}};
}

Result<std::string> unescape_stop_string(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\') {
      out += text[i];
      continue;
    }
    TL_CHECK_OR_RETURN(i + 1 < text.size(), Error::kInvalidArgument,
                       "--stop '%s' ends with a lone backslash (write \\\\ for one)",
                       text.c_str());
    const char e = text[++i];
    if (e == 'n') out += '\n';
    else if (e == 't') out += '\t';
    else if (e == 'r') out += '\r';
    else if (e == '\\') out += '\\';
    else if (e == 'x') {
      auto hex = [](char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        if (c >= 'A' && c <= 'F') return c - 'A' + 10;
        return -1;
      };
      const int hi = i + 1 < text.size() ? hex(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex(text[i + 2]) : -1;
      TL_CHECK_OR_RETURN(hi >= 0 && lo >= 0, Error::kInvalidArgument,
                         "--stop '%s': \\x needs two hex digits", text.c_str());
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      return Status::error(Error::kInvalidArgument,
                           "--stop '%s': unknown escape '\\%c' (use \\n \\t \\r \\\\ \\xHH)",
                           text.c_str(), e);
    }
  }
  TL_CHECK_OR_RETURN(!out.empty(), Error::kInvalidArgument, "--stop must not be empty");
  return out;
}

Result<LlmOptions> parse_llm_options(const ArgParser& parser) {
  LlmOptions o;
  TL_CHECK_OR_RETURN(parser.positionals().empty(), Error::kInvalidArgument,
                     "llm: unexpected argument '%s' (the model is given with --model; see "
                     "'torchlight llm --help')",
                     parser.positionals().empty() ? "" : parser.positionals()[0].c_str());
  o.model = parser.value("model", "");
  TL_CHECK_OR_RETURN(!o.model.empty(), Error::kInvalidArgument,
                     "llm: --model FILE.pte is required (see 'torchlight llm --help')");
  o.tokenizer = parser.value("tokenizer", "");
  TL_CHECK_OR_RETURN(!parser.has("tokenizer") || !o.tokenizer.empty(), Error::kInvalidArgument,
                     "--tokenizer must not be empty");
  o.chat = parser.has("chat");
  o.has_prompt = parser.has("prompt");
  o.prompt = parser.value("prompt", "");
  TL_CHECK_OR_RETURN(o.has_prompt || o.chat, Error::kInvalidArgument,
                     "llm: --prompt TEXT is required (or --chat to read turns from stdin)");

  GenerationConfig& g = o.generation;
  g.sampler.temperature = 0.8f;
  g.sampler.top_p = 0.9f;
  if (parser.has("max-new-tokens")) {
    TL_ASSIGN_OR_RETURN(g.max_new_tokens,
                        parse_int_option("max-new-tokens", parser.value("max-new-tokens", ""), 1,
                                         kMaxNewTokensLimit));
  }
  if (parser.has("temperature")) {
    TL_ASSIGN_OR_RETURN(const double t, parse_double_option("temperature",
                                                            parser.value("temperature", ""), 0,
                                                            1e6));
    g.sampler.temperature = static_cast<float>(t);
  }
  if (parser.has("top-k")) {
    TL_ASSIGN_OR_RETURN(const int64_t k,
                        parse_int_option("top-k", parser.value("top-k", ""), 0, INT32_MAX));
    g.sampler.top_k = static_cast<int32_t>(k);
  }
  if (parser.has("top-p")) {
    TL_ASSIGN_OR_RETURN(const double p,
                        parse_double_option("top-p", parser.value("top-p", ""), 0, 1));
    TL_CHECK_OR_RETURN(p > 0, Error::kInvalidArgument,
                       "--top-p must be above 0 and at most 1, got '%s'",
                       parser.value("top-p", "").c_str());
    g.sampler.top_p = static_cast<float>(p);
  }
  if (parser.has("repetition-penalty")) {
    const std::string& text = parser.value("repetition-penalty", "");
    TL_ASSIGN_OR_RETURN(const double r,
                        parse_double_option("repetition-penalty", text, 0, 1e6));
    TL_CHECK_OR_RETURN(r > 0, Error::kInvalidArgument,
                       "--repetition-penalty must be above 0, got '%s'", text.c_str());
    g.sampler.repetition_penalty = static_cast<float>(r);
  }
  if (parser.has("seed")) {
    TL_ASSIGN_OR_RETURN(g.sampler.seed, parse_uint64_option("seed", parser.value("seed", "")));
  }
  for (const std::string& stop : parser.values("stop")) {
    TL_ASSIGN_OR_RETURN(std::string unescaped, unescape_stop_string(stop));
    g.stop_strings.push_back(std::move(unescaped));
  }
  g.ignore_eos = parser.has("ignore-eos");
  if (parser.has("threads")) {
    TL_ASSIGN_OR_RETURN(o.threads,
                        parse_int_option("threads", parser.value("threads", ""), 1, kMaxThreads));
  }
  o.echo = !parser.has("no-echo");
  o.quiet = parser.has("quiet");
  o.stats = !parser.has("no-stats") && !o.quiet;
  o.print_token_ids = parser.has("print-token-ids");
  o.stats_json = parser.value("stats-json", "");
  TL_CHECK_OR_RETURN(!parser.has("stats-json") || !o.stats_json.empty(), Error::kInvalidArgument,
                     "--stats-json must not be empty");
  if (parser.has("load-mode")) {
    TL_ASSIGN_OR_RETURN(const size_t mode, parse_choice_option("load-mode",
                                                               parser.value("load-mode", ""),
                                                               {"file", "mmap", "mlock"}));
    const Module::LoadMode modes[] = {Module::LoadMode::kFile, Module::LoadMode::kMmap,
                                      Module::LoadMode::kMmapUseMlock};
    o.load_mode = modes[mode];
  }
  return o;
}

int llm_command(const std::vector<std::string>& args) {
  ArgParser parser("llm", llm_option_specs());
  Status parsed = parser.parse(args);
  if (!parsed.ok()) return report_error("", parsed);
  if (parser.help_requested()) {
    std::fputs(llm_usage(), stdout);
    return 0;
  }
  Result<LlmOptions> parsed_options = parse_llm_options(parser);
  if (!parsed_options.ok()) return report_error("", parsed_options.status());
  LlmOptions& options = parsed_options.get();
  if (options.threads > 0) threadpool::set_num_threads(static_cast<size_t>(options.threads));

  Result<Session> loaded = load_session(options);
  if (!loaded.ok()) return report_error("", loaded.status());
  Session& session = loaded.get();

  std::vector<Turn> turns;
  if (options.chat) {
    Status status = chat(session, options, &turns);
    if (!status.ok()) return report_error("", status);
  } else {
    StdoutStream out;
    if (options.echo) out.write(options.prompt);
    Result<Turn> turn = run_turn(session, options.prompt, options, /*continue=*/false, &out);
    if (!turn.ok()) {
      out.end_line();
      return report_error("", turn.status());
    }
    out.end_line();
    if (options.print_token_ids) print_token_ids(turn.get());
    if (!options.quiet) {
      std::fprintf(stderr, "%s\n", describe_stop(turn->stats, options.generation).c_str());
    }
    turns.push_back(std::move(turn.get()));
  }

  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    return report_error("", "writing the generated text to stdout failed");
  }
  if (options.stats && !turns.empty()) print_stats(session, turns);
  if (!options.stats_json.empty()) {
    Status written = write_stats_json(options.stats_json, options, session, turns);
    if (!written.ok()) return report_error(options.stats_json, written);
  }
  return 0;
}

}  // namespace cli
}  // namespace torchlight
