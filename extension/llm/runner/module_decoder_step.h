// ModuleDecoderStep: DecoderStep over the `forward` method of a .pte, in
// any of three layouts, told apart by the signature:
//
//   ours:      forward(tokens [1, T] int64, input_pos [T] int64) -> logits
//              (examples/llm/README.md); input_pos holds every position
//   upstream:  forward(tokens [1, T] int64, input_pos [1] int64) -> logits
//              (ExecuTorch's export_llama -kv); input_pos is the start position
//   no cache:  forward(tokens [1, T] int64) -> logits (export_llama without
//              -kv): every call re-feeds the whole sequence, which the step
//              keeps
//
// 1 <= T <= max_seq_len; a KV cache lives in the method's mutable buffers,
// which persist between calls. Logits are [1, T, V] float32, or the last
// position's only ([1, 1, V], or [1, V] as upstream's exporter writes), all
// the runner needs. When the program has get_max_context_len() (upstream),
// that is the context and get_max_seq_len() the most tokens per call.
//
// The context length comes from get_max_seq_len() when the program has it,
// else from the tokens input's upper bound; the vocabulary from the logits'
// last dimension (checked against get_vocab_size()). A program whose tokens
// input is static [1, 1] is a decode-only step: prompts are fed one token
// per call.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "extension/llm/runner/decoder_step.h"
#include "extension/llm/runner/llm_metadata.h"
#include "extension/module/module.h"
#include "extension/tensor/owned_tensor.h"

namespace torchlight {

class ModuleDecoderStep final : public DecoderStep {
 public:
  static constexpr const char* kMethodName = "forward";

  /// Loads `module`'s forward method and checks its signature against the
  /// shape above and `metadata` (from read_llm_metadata). `module` is
  /// borrowed and must outlive the step.
  ///
  /// Errors: those of loading the method (kNotFound when the program has no
  /// forward method, kOperatorMissing, ...); kInvalidProgram naming the
  /// input or output when the signature differs (count, dtype, rank, batch
  /// size other than 1, tokens and input_pos lengths that disagree), when
  /// get_vocab_size() disagrees with the logits, use_kv_cache() with the
  /// inputs, or when the context length cannot be told (no get_max_seq_len()
  /// and an unbounded tokens input);
  /// kNotSupported for a static tokens input longer than 1 token, or logits
  /// that are not float32 or not contiguous.
  static Result<std::unique_ptr<ModuleDecoderStep>> create(Module* module,
                                                           const LlmMetadata& metadata);

  Result<Span<const float>> run(Span<const int64_t> tokens, int64_t start_pos) override;
  int64_t max_seq_len() const override { return max_seq_len_; }
  int64_t max_tokens_per_step() const override { return max_tokens_per_step_; }
  int32_t vocab_size() const override { return vocab_size_; }

 private:
  enum class Layout { kPositions, kStartPosition, kNoCache };

  ModuleDecoderStep(Method* method, Layout layout, OwnedTensor tokens, OwnedTensor positions,
                    int64_t max_seq_len, int64_t max_tokens_per_step, int32_t vocab_size,
                    bool last_only, ScalarType logits_dtype);

  Method* method_;                // owned by the Module
  Layout layout_;
  // [1, max_tokens_per_step] int64, resized per call; without a cache
  // [1, max_seq_len], holding the whole sequence fed so far.
  OwnedTensor tokens_;
  OwnedTensor positions_;         // [max_tokens_per_step] or [1] int64; unused without a cache
  int64_t fed_ = 0;               // Without a cache: tokens of the sequence held in tokens_.
  int64_t max_seq_len_;
  int64_t max_tokens_per_step_;
  int32_t vocab_size_;
  bool last_only_;  // Logits of the last position only: [1, vocab] or [1, 1, vocab].
  ScalarType logits_dtype_;      // float32, float16 or bfloat16
  std::vector<float> widened_;   // [vocab] for 16-bit logits, sized at create()
};

}  // namespace torchlight
