// TextGenerator: the generate loop of an LLM runner, as llama2.c's
// generate() in small pieces: a Tokenizer, a DecoderStep (the model), a
// Sampler and a TextStream.
//
//   prefill: the prompt's tokens in one step (chunks when the step takes
//            fewer), at positions after what the cache already holds;
//   decode:  sample a token from the last logits, stream its text, feed it
//            back at the next position; until EOS, a stop string,
//            max_new_tokens, or the end of the context.
//
// The conversation stays in the model's KV cache between calls, so a chat
// turn (continue_conversation) prefills only its own text. The loop
// allocates nothing per token: buffers are sized for the context up front.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "extension/llm/runner/decoder_step.h"
#include "extension/llm/runner/text_stream.h"
#include "extension/llm/sampler/sampler.h"
#include "extension/llm/tokenizers/tokenizer.h"

namespace torchlight {

enum class StopReason {
  kEos,           // The model produced an end-of-sequence token.
  kStopString,    // The text produced one of the stop strings.
  kMaxNewTokens,  // GenerationConfig::max_new_tokens were generated.
  kEndOfContext,  // The KV cache is full.
};

/// "eos", "stop_string", "max_new_tokens", "end_of_context".
const char* to_string(StopReason reason);

struct GenerationConfig {
  /// Tokens to generate at most; negative: no limit but the context; 0:
  /// prefill only.
  int64_t max_new_tokens = -1;
  SamplerConfig sampler;
  /// Generation stops when the text contains one; it is not streamed.
  /// Must not be empty strings.
  std::vector<std::string> stop_strings;
  /// Treat EOS tokens as ordinary text (benchmarks that need a fixed
  /// number of tokens).
  bool ignore_eos = false;
};

struct GenerationStats {
  int64_t prompt_tokens = 0;     // Tokens prefilled by this call.
  int64_t generated_tokens = 0;  // Tokens sampled, an EOS included.
  double prefill_ms = 0;         // The prefill steps.
  double time_to_first_token_ms = 0;  // From the call's start to the first sampled token.
  double decode_ms = 0;          // From the first sampled token to the last.
  double total_ms = 0;
  StopReason stop_reason = StopReason::kMaxNewTokens;
  int32_t eos_id = -1;           // The EOS token, for kEos.
  int stop_string = -1;          // Index into the stop strings, for kStopString.
  int64_t position = 0;          // Tokens in the conversation afterwards.
  int64_t max_seq_len = 0;
  std::vector<int32_t> prompt_ids;  // This call's text as tokens, BOS included.

  /// prompt_tokens / prefill time; 0 when either is 0.
  double prefill_tokens_per_second() const;
  /// Tokens after the first / decode time; 0 when either is 0.
  double decode_tokens_per_second() const;
};

/// One generated token as it streams: `text` is what may be printed now
/// (possibly empty: held back, an EOS, or text past a stop string). The
/// last call of a generation has token -1 and the held-back rest, when
/// there is one. The view is valid only during the callback.
struct TokenEvent {
  int32_t token;
  std::string_view text;
};
using TokenCallback = std::function<void(const TokenEvent&)>;

struct TextGeneratorOptions {
  /// Token that starts a conversation; unset: the tokenizer's; -1: none.
  std::optional<int32_t> bos_id;
  /// End-of-sequence tokens in addition to the tokenizer's EOS.
  std::vector<int32_t> eos_ids;
};

class TextGenerator {
 public:
  /// `decoder` and `tokenizer` are borrowed and must outlive the generator.
  ///
  /// Errors: kInvalidArgument for a null pointer, a tokenizer with more
  /// tokens than the model has logits (naming both sizes), or a BOS/EOS id
  /// outside the model's vocabulary; kInvalidArgument when the decoder
  /// reports a context or step size below 1.
  static Result<std::unique_ptr<TextGenerator>> create(DecoderStep* decoder,
                                                       const Tokenizer* tokenizer,
                                                       const TextGeneratorOptions& options = {});

  /// Starts a new conversation with `prompt` (after BOS when the model has
  /// one) and generates. See continue_conversation() for the rest.
  Result<GenerationStats> generate(std::string_view prompt, const GenerationConfig& config,
                                   const TokenCallback& on_token);

  /// Appends `text` to the conversation and generates a reply. The first
  /// call after create() or reset() starts with BOS; later calls prefill
  /// the previous reply's last token (not yet in the cache) and `text`.
  ///
  /// Errors: kInvalidArgument for a bad config (stop string "", sampler
  /// settings) or an empty first prompt with no BOS, and when a first
  /// prompt alone is longer than the context; kOutOfResources when a later
  /// turn does not fit in what is left of the context; kInvalidArgument
  /// when the model samples a token the tokenizer cannot decode; whatever
  /// the tokenizer or decoder report. After an error the conversation is
  /// reset.
  Result<GenerationStats> continue_conversation(std::string_view text,
                                                const GenerationConfig& config,
                                                const TokenCallback& on_token);

  /// Starts a new conversation with `ids` exactly as given (no BOS added)
  /// and generates, as generate() does. With no tokenizer (create() with a
  /// null one) the events carry ids only, no text, and stop strings never
  /// match. Errors: as generate(), and kInvalidArgument for an id outside
  /// the model's vocabulary.
  Result<GenerationStats> generate_from_ids(Span<const int32_t> ids, const GenerationConfig& config,
                                            const TokenCallback& on_token);

  /// Forgets the conversation (the cache is overwritten from position 0).
  void reset();

  /// Tokens in the conversation, the last sampled token included.
  int64_t position() const { return static_cast<int64_t>(history_.size()); }
  int64_t max_seq_len() const { return max_seq_len_; }
  int32_t bos_id() const { return bos_id_; }
  const std::vector<int32_t>& eos_ids() const { return eos_ids_; }
  /// The conversation's tokens.
  const std::vector<int32_t>& history() const { return history_; }

 private:
  TextGenerator(DecoderStep* decoder, const Tokenizer* tokenizer, int32_t bos_id,
                std::vector<int32_t> eos_ids);

  bool is_eos(int32_t token) const;
  // Feeds history_[fed_..] to the decoder in chunks; returns the last logits.
  Result<Span<const float>> prefill();
  // `ids` (non-null): the turn's tokens as given, instead of encoding `text`.
  Result<GenerationStats> run_turn(std::string_view text, const Span<const int32_t>* ids,
                                   const GenerationConfig& config, const TokenCallback& on_token);

  DecoderStep* decoder_;
  const Tokenizer* tokenizer_;  // null: ids only (generate_from_ids)
  int32_t bos_id_;
  std::vector<int32_t> eos_ids_;
  int64_t max_seq_len_;
  std::vector<int32_t> history_;  // [<= max_seq_len + 1] the conversation
  int64_t fed_ = 0;               // history_[0, fed_) is in the KV cache
  std::vector<int64_t> step_;     // [max_tokens_per_step] ids for one decoder call
  std::vector<int32_t> encoded_;  // one turn's text as tokens
};

}  // namespace torchlight
