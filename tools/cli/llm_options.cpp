#include "tools/cli/llm_options.h"

#include <climits>
#include <cstdint>
#include <string>
#include <utility>

namespace torchlight {
namespace cli {
namespace {

constexpr int64_t kMaxThreads = 1024;
constexpr int64_t kMaxNewTokensLimit = int64_t{1} << 31;

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
         "-> logits [1, T, vocab] (float32, float16 or bfloat16), or upstream's\n"
         "forward(tokens, input_pos [1] = start) -> [1, vocab]; optional metadata\n"
         "methods (get_max_seq_len, get_vocab_size, get_bos_id, get_eos_ids,\n"
         "use_kv_cache, get_tokenizer, ...) add what its shapes do not say.\n"
         "\n"
         "options:\n"
         "  --model FILE.pte         the LLM program\n"
         "  --tokenizer T            'bytes' (token id = byte), or a tokenizer file or\n"
         "                           directory: llama2.c tokenizer.bin, SentencePiece\n"
         "                           .model, tiktoken rank file, GPT-2 vocab.json +\n"
         "                           merges.txt; the format is detected (default: the\n"
         "                           program's get_tokenizer() hint)\n"
         "  --prompt TEXT            the text to continue (with --chat: the first turn)\n"
         "  --prompt-tokens IDS      the prompt as comma-separated token ids, e.g.\n"
         "                           1,15043,3186 (no BOS added); prints ids, and needs no\n"
         "                           tokenizer\n"
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
          {"prompt-tokens"},
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

// "1,15043,3186" -> {1, 15043, 3186}: non-negative ids below 2^31, at least one.
static Result<std::vector<int32_t>> parse_token_ids(const std::string& text) {
  std::vector<int32_t> ids;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    bool digits = !item.empty() && item.size() <= 10;
    for (const char c : item) digits = digits && c >= '0' && c <= '9';
    const long long value = digits ? std::stoll(item) : -1;
    TL_CHECK_OR_RETURN(digits && value <= INT32_MAX, Error::kInvalidArgument,
                       "--prompt-tokens: '%s' is not a token id (give comma-separated ids such "
                       "as 1,15043,3186)",
                       item.c_str());
    ids.push_back(static_cast<int32_t>(value));
    begin = end + 1;
  }
  return ids;
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
  if (parser.has("prompt-tokens")) {
    TL_CHECK_OR_RETURN(!o.has_prompt && !o.chat, Error::kInvalidArgument,
                       "llm: --prompt-tokens replaces --prompt and cannot be used with --chat");
    TL_ASSIGN_OR_RETURN(o.prompt_tokens, parse_token_ids(parser.value("prompt-tokens", "")));
    o.has_prompt = true;
  }
  TL_CHECK_OR_RETURN(o.has_prompt || o.chat, Error::kInvalidArgument,
                     "llm: --prompt TEXT is required (or --prompt-tokens IDS, or --chat to read "
                     "turns from stdin)");

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

}  // namespace cli
}  // namespace torchlight
