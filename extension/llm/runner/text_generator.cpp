#include "extension/llm/runner/text_generator.h"

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <utility>

namespace torchlight {
namespace {

using Clock = std::chrono::steady_clock;

double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

const char* to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kEos:
      return "eos";
    case StopReason::kStopString:
      return "stop_string";
    case StopReason::kMaxNewTokens:
      return "max_new_tokens";
    case StopReason::kEndOfContext:
      return "end_of_context";
  }
  return "unknown";
}

double GenerationStats::prefill_tokens_per_second() const {
  return prefill_ms > 0 && prompt_tokens > 0 ? 1000.0 * static_cast<double>(prompt_tokens) / prefill_ms
                                             : 0.0;
}

double GenerationStats::decode_tokens_per_second() const {
  return decode_ms > 0 && generated_tokens > 1
             ? 1000.0 * static_cast<double>(generated_tokens - 1) / decode_ms
             : 0.0;
}

TextGenerator::TextGenerator(DecoderStep* decoder, const Tokenizer* tokenizer, int32_t bos_id,
                             std::vector<int32_t> eos_ids)
    : decoder_(decoder),
      tokenizer_(tokenizer),
      bos_id_(bos_id),
      eos_ids_(std::move(eos_ids)),
      max_seq_len_(decoder->max_seq_len()) {
  history_.reserve(static_cast<size_t>(max_seq_len_) + 1);
  step_.reserve(static_cast<size_t>(std::min(decoder->max_tokens_per_step(), max_seq_len_)));
  encoded_.reserve(static_cast<size_t>(max_seq_len_));
}

Result<std::unique_ptr<TextGenerator>> TextGenerator::create(DecoderStep* decoder,
                                                             const Tokenizer* tokenizer,
                                                             const TextGeneratorOptions& options) {
  TL_CHECK_OR_RETURN(decoder != nullptr, Error::kInvalidArgument, "TextGenerator: null decoder");
  const int32_t vocab = decoder->vocab_size();
  TL_CHECK_OR_RETURN(decoder->max_seq_len() >= 1 && decoder->max_tokens_per_step() >= 1 &&
                         vocab >= 1,
                     Error::kInvalidArgument,
                     "TextGenerator: the model reports a context of %" PRId64 ", %" PRId64
                     " tokens per step and a vocabulary of %d; each must be at least 1",
                     decoder->max_seq_len(), decoder->max_tokens_per_step(), vocab);
  // The generator reserves buffers of the context's length up front.
  TL_CHECK_OR_RETURN(decoder->max_seq_len() <= kMaxLlmContext && vocab <= kMaxLlmContext,
                     Error::kNotSupported,
                     "TextGenerator: the model reports a context of %" PRId64 " tokens and a "
                     "vocabulary of %d; this runner supports at most %" PRId64 " of each",
                     decoder->max_seq_len(), vocab, kMaxLlmContext);
  // A tokenizer smaller than the logits is fine (vocabularies are often
  // padded); a larger one could feed the model ids it has no embedding for.
  const int32_t tokenizer_vocab = tokenizer != nullptr ? tokenizer->vocab_size() : 0;
  TL_CHECK_OR_RETURN(tokenizer_vocab <= vocab, Error::kInvalidArgument,
                     "vocabulary mismatch: the tokenizer has %d tokens, but the model's logits "
                     "cover %d; they were not made for each other",
                     tokenizer_vocab, vocab);
  const int32_t bos = options.bos_id.value_or(tokenizer != nullptr ? tokenizer->bos_id() : -1);
  TL_CHECK_OR_RETURN(bos >= -1 && bos < vocab, Error::kInvalidArgument,
                     "BOS id %d is outside the model's vocabulary of %d", bos, vocab);
  std::vector<int32_t> eos = options.eos_ids;
  if (tokenizer != nullptr && tokenizer->eos_id() >= 0) eos.push_back(tokenizer->eos_id());
  std::sort(eos.begin(), eos.end());
  eos.erase(std::unique(eos.begin(), eos.end()), eos.end());
  for (const int32_t id : eos) {
    TL_CHECK_OR_RETURN(id >= 0 && id < vocab, Error::kInvalidArgument,
                       "EOS id %d is outside the model's vocabulary of %d", id, vocab);
  }
  return std::unique_ptr<TextGenerator>(new TextGenerator(decoder, tokenizer, bos, std::move(eos)));
}

void TextGenerator::reset() {
  history_.clear();
  fed_ = 0;
}

bool TextGenerator::is_eos(int32_t token) const {
  return std::binary_search(eos_ids_.begin(), eos_ids_.end(), token);
}

Result<GenerationStats> TextGenerator::generate(std::string_view prompt,
                                                const GenerationConfig& config,
                                                const TokenCallback& on_token) {
  reset();
  return continue_conversation(prompt, config, on_token);
}

Result<GenerationStats> TextGenerator::continue_conversation(std::string_view text,
                                                             const GenerationConfig& config,
                                                             const TokenCallback& on_token) {
  TL_CHECK_OR_RETURN(tokenizer_ != nullptr, Error::kInvalidArgument,
                     "text prompts need a tokenizer; give token ids instead");
  Result<GenerationStats> stats = run_turn(text, nullptr, config, on_token);
  if (!stats.ok()) reset();  // The cache may hold part of a turn.
  return stats;
}

Result<GenerationStats> TextGenerator::generate_from_ids(Span<const int32_t> ids,
                                                         const GenerationConfig& config,
                                                         const TokenCallback& on_token) {
  reset();
  for (size_t i = 0; i < ids.size(); ++i) {
    TL_CHECK_OR_RETURN(ids[i] >= 0 && ids[i] < decoder_->vocab_size(), Error::kInvalidArgument,
                       "prompt token %zu is %d, outside the model's vocabulary of %d", i, ids[i],
                       decoder_->vocab_size());
  }
  Result<GenerationStats> stats = run_turn({}, &ids, config, on_token);
  if (!stats.ok()) reset();
  return stats;
}

Result<Span<const float>> TextGenerator::prefill() {
  const auto end = static_cast<int64_t>(history_.size());
  const int64_t chunk = decoder_->max_tokens_per_step();
  Span<const float> logits;
  while (fed_ < end) {
    const int64_t n = std::min(chunk, end - fed_);
    step_.assign(history_.begin() + fed_, history_.begin() + fed_ + n);
    TL_ASSIGN_OR_RETURN(logits, decoder_->run(Span<const int64_t>(step_.data(), step_.size()), fed_));
    fed_ += n;
  }
  return logits;
}

Result<GenerationStats> TextGenerator::run_turn(std::string_view text,
                                                const Span<const int32_t>* ids,
                                                const GenerationConfig& config,
                                                const TokenCallback& on_token) {
  const Clock::time_point start = Clock::now();
  for (const std::string& stop : config.stop_strings) {
    TL_CHECK_OR_RETURN(!stop.empty(), Error::kInvalidArgument, "a stop string must not be empty");
  }
  TL_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(decoder_->vocab_size(), config.sampler));
  TextStream stream(config.stop_strings);

  GenerationStats stats;
  stats.max_seq_len = max_seq_len_;
  const bool first_turn = history_.empty();
  if (ids != nullptr) {
    stats.prompt_ids.assign(ids->begin(), ids->end());
  } else {
    TL_RETURN_IF_ERROR(tokenizer_->encode(text, false, false, &encoded_));
    if (first_turn && bos_id_ >= 0) stats.prompt_ids.push_back(bos_id_);
    stats.prompt_ids.insert(stats.prompt_ids.end(), encoded_.begin(), encoded_.end());
  }

  const auto used = static_cast<int64_t>(history_.size());
  const auto adding = static_cast<int64_t>(stats.prompt_ids.size());
  if (first_turn) {
    TL_CHECK_OR_RETURN(adding > 0, Error::kInvalidArgument,
                       "the prompt is empty and the model has no BOS token; give some text");
    TL_CHECK_OR_RETURN(adding <= max_seq_len_, Error::kInvalidArgument,
                       "the prompt is %" PRId64 " tokens, longer than the model's context of "
                       "%" PRId64 " positions",
                       adding, max_seq_len_);
  } else {
    TL_CHECK_OR_RETURN(used + adding <= max_seq_len_, Error::kOutOfResources,
                       "the conversation holds %" PRId64 " of %" PRId64 " positions; %" PRId64
                       " more tokens do not fit",
                       used, max_seq_len_, adding);
  }
  history_.insert(history_.end(), stats.prompt_ids.begin(), stats.prompt_ids.end());
  TL_CHECK_OR_RETURN(fed_ < static_cast<int64_t>(history_.size()), Error::kInvalidArgument,
                     "nothing to feed the model: the text is empty and the conversation has no "
                     "token waiting");

  stats.prompt_tokens = static_cast<int64_t>(history_.size()) - fed_;
  const Clock::time_point prefill_start = Clock::now();
  TL_ASSIGN_OR_RETURN(Span<const float> logits, prefill());
  stats.prefill_ms = ms_between(prefill_start, Clock::now());

  Clock::time_point first_token;
  Clock::time_point last_token = Clock::now();
  const bool limited = config.max_new_tokens >= 0;
  if (limited && config.max_new_tokens == 0) stats.stop_reason = StopReason::kMaxNewTokens;
  while (!limited || stats.generated_tokens < config.max_new_tokens) {
    // Repeats are penalized over the whole conversation, as Hugging Face
    // does over input_ids.
    TL_ASSIGN_OR_RETURN(const int32_t token,
                        sampler.sample(logits, Span<const int32_t>(history_.data(), history_.size())));
    const int32_t prev = history_.back();
    history_.push_back(token);
    last_token = Clock::now();
    if (stats.generated_tokens++ == 0) first_token = last_token;

    if (!config.ignore_eos && is_eos(token)) {
      stats.stop_reason = StopReason::kEos;
      stats.eos_id = token;
      if (on_token) on_token({token, {}});
      break;
    }
    Result<std::string_view> piece =
        tokenizer_ != nullptr ? tokenizer_->decode(prev, token) : Result<std::string_view>("");
    if (!piece.ok()) {
      return Status::error(Error::kInvalidArgument,
                           "the model produced token %d, which the tokenizer cannot decode "
                           "(its vocabulary has %d tokens): %s",
                           token, tokenizer_ != nullptr ? tokenizer_->vocab_size() : 0,
                           piece.status().message());
    }
    const std::string_view released = stream.push(*piece);
    if (on_token) on_token({token, released});
    if (stream.stopped()) {
      stats.stop_reason = StopReason::kStopString;
      stats.stop_string = stream.matched_stop();
      break;
    }
    if (limited && stats.generated_tokens == config.max_new_tokens) {
      stats.stop_reason = StopReason::kMaxNewTokens;
      break;  // The last token is not fed: nobody would read its logits.
    }
    if (fed_ >= max_seq_len_) {
      stats.stop_reason = StopReason::kEndOfContext;
      break;
    }
    step_.assign(1, token);
    TL_ASSIGN_OR_RETURN(logits, decoder_->run(Span<const int64_t>(step_.data(), 1), fed_));
    ++fed_;
  }
  const std::string_view rest = stream.finish();
  if (!rest.empty() && on_token) on_token({-1, rest});

  const Clock::time_point end = Clock::now();
  if (stats.generated_tokens > 0) {
    stats.time_to_first_token_ms = ms_between(start, first_token);
    stats.decode_ms = ms_between(first_token, last_token);
  }
  stats.total_ms = ms_between(start, end);
  stats.position = static_cast<int64_t>(history_.size());
  return stats;
}

}  // namespace torchlight
