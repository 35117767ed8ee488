// DecoderStep: one forward call of a cached decoder-only LLM, the only
// thing the generate loop (text_generator.h) needs from a model.
//
// A step feeds `tokens` at positions start_pos .. start_pos + n - 1, the
// model appends their keys/values to its KV cache (overwriting whatever was
// at those positions), and the step returns the logits that predict the
// token after the last one. Positions before start_pos must hold the
// conversation fed earlier; later positions are ignored by the model's
// causal mask, so starting over is just calling again with start_pos 0.
//
// ModuleDecoderStep (module_decoder_step.h) runs a .pte; tests use a fake.
#pragma once

#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {

/// Longest context (and largest vocabulary) the runner accepts: it keeps
/// buffers of that many tokens, so a program claiming INT32_MAX would make
/// it allocate gigabytes from a few bytes of metadata.
constexpr int64_t kMaxLlmContext = int64_t{1} << 22;

class DecoderStep {
 public:
  virtual ~DecoderStep() = default;

  /// Runs `tokens` (1 <= size <= max_tokens_per_step()) at positions
  /// start_pos.., with start_pos + size <= max_seq_len(). Returns the last
  /// token's logits, [vocab_size()] floats, borrowed from the step: valid
  /// until the next run() or the step's destruction.
  ///
  /// Errors: kInvalidArgument for an empty or too long `tokens`, or
  /// positions outside the context; whatever the model's execution reports.
  virtual Result<Span<const float>> run(Span<const int64_t> tokens, int64_t start_pos) = 0;

  /// Positions the KV cache holds: the context length.
  virtual int64_t max_seq_len() const = 0;
  /// Most tokens one run() accepts (longer prompts are fed in chunks).
  virtual int64_t max_tokens_per_step() const = 0;
  /// Logits per token.
  virtual int32_t vocab_size() const = 0;
};

}  // namespace torchlight
