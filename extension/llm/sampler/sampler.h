// Sampler: picks the next token from a step's logits, as llama2.c's sampler
// does, extended with top-k and a repetition penalty.
//
// Pipeline, in the order Hugging Face applies it:
//   1. repetition penalty on the logits of recent tokens (CTRL): a positive
//      logit is divided by the penalty, a negative one multiplied;
//   2. temperature 0: the argmax (lowest id on ties), and stop;
//   3. softmax(logits / temperature);
//   4. top-k: keep the k most probable (ties: lower id first);
//   5. top-p: keep the smallest most-probable prefix whose mass reaches
//      top_p of what remains;
//   6. the token where the cumulative probability first exceeds
//      coin * total, scanning in id order when no filter is active, else
//      most probable first.
//
// The sampler owns its seeded RNG (xorshift_rng.h) for the coin; tests
// inject the coin instead. sample() allocates nothing: scratch buffers are
// sized for the vocabulary at create().
#pragma once

#include <cstdint>
#include <vector>

#include "extension/llm/sampler/xorshift_rng.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {

struct SamplerConfig {
  /// 0 means greedy; otherwise > 0.
  float temperature = 1.0f;
  /// Keep only the k most probable tokens; 0 keeps all.
  int32_t top_k = 0;
  /// Nucleus mass in (0, 1]; 1 keeps all.
  float top_p = 1.0f;
  /// > 0; 1 disables; > 1 discourages repeats.
  float repetition_penalty = 1.0f;
  /// Seeds the RNG; the same seed and inputs give the same tokens.
  uint64_t seed = 0;
};

class Sampler {
 public:
  /// A sampler for `vocab_size` logits.
  ///
  /// Errors: kInvalidArgument when vocab_size < 1, temperature is negative
  /// or not finite, top_k is negative or above vocab_size, top_p is outside
  /// (0, 1], or repetition_penalty is not a finite value > 0.
  static Result<Sampler> create(int32_t vocab_size, const SamplerConfig& config);

  /// The next token, with the coin drawn from the sampler's RNG (one draw
  /// per call, also when greedy, so the sequence does not depend on the
  /// mode). `logits` is read, not modified. `recent` lists token ids to
  /// penalize (a caller's window of generated ids; repeats count once).
  ///
  /// Errors: kInvalidArgument when logits.size() != vocab_size, a logit is
  /// NaN or +inf, every logit is -inf, or a recent id is outside the
  /// vocabulary.
  Result<int32_t> sample(Span<const float> logits, Span<const int32_t> recent = {});

  /// As sample() with the coin given: a value in [0, 1). For tests and for
  /// callers that bring their own randomness. Errors: those of sample(), and
  /// kInvalidArgument for a coin outside [0, 1).
  Result<int32_t> sample_with_coin(Span<const float> logits, Span<const int32_t> recent,
                                   float coin);

  /// Restarts the RNG sequence.
  void reseed(uint64_t seed) { rng_.reseed(seed); }

  const SamplerConfig& config() const { return config_; }
  int32_t vocab_size() const { return vocab_size_; }

 private:
  struct Candidate {
    float prob;
    int32_t id;
  };

  Sampler(int32_t vocab_size, const SamplerConfig& config);

  SamplerConfig config_;
  int32_t vocab_size_;
  XorShiftRng rng_;
  std::vector<float> work_;             // [vocab_size] penalized logits, then probabilities
  std::vector<Candidate> candidates_;   // [vocab_size] for top-k / top-p
};

}  // namespace torchlight
