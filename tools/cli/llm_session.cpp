#include "tools/cli/llm_session.h"

#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "tools/cli/cli_report.h"
#include "tools/cli/timing.h"

namespace torchlight {
namespace cli {
namespace {

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

}  // namespace

Result<Session> load_session(const LlmOptions& options) {
  Session session;
  Stopwatch watch;
  session.module = std::make_unique<Module>(options.model, options.load_mode);
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
  // Token ids in and out need no tokenizer; one is still used when named.
  const bool ids_only = !options.prompt_tokens.empty() && options.tokenizer.empty() &&
                        session.metadata.tokenizer.empty();
  std::string spec = "none";
  if (!ids_only) {
    TL_ASSIGN_OR_RETURN(spec, tokenizer_spec(options, session.metadata));
    Result<LoadedTokenizer> tokenizer = load_tokenizer(spec);
    if (!tokenizer.ok()) {
      Status s = tokenizer.status();
      return s.with_context("tokenizer '%s'", spec.c_str());
    }
    session.tokenizer = std::move(tokenizer.get());
  } else {
    session.tokenizer.format = "none (token ids)";
  }
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

void StdoutStream::write(std::string_view text) {
  if (text.empty()) return;
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  at_line_start_ = text.back() == '\n';
  wrote_ = true;
}

void StdoutStream::end_line() {
  if (wrote_ && !at_line_start_) write("\n");
  wrote_ = false;
}

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

Result<Turn> run_turn_from_ids(Session& session, const LlmOptions& options, StdoutStream* out) {
  Turn turn;
  const TokenCallback callback = [&turn, out](const TokenEvent& event) {
    if (event.token < 0) return;
    turn.token_ids.push_back(event.token);
    out->write(std::to_string(event.token) + " ");
  };
  const Span<const int32_t> ids(options.prompt_tokens.data(), options.prompt_tokens.size());
  Result<GenerationStats> stats =
      session.generator->generate_from_ids(ids, options.generation, callback);
  if (!stats.ok()) return stats.status();
  turn.stats = std::move(stats.get());
  return turn;
}

}  // namespace cli
}  // namespace torchlight
