#include "extension/llm/sampler/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace torchlight {
namespace {

// Most probable first; the lower id first among equals, so the order (and
// so the choice for a given coin) does not depend on the sort algorithm.
bool more_probable(float pa, int32_t ia, float pb, int32_t ib) {
  return pa > pb || (pa == pb && ia < ib);
}

constexpr uint32_t kInfBits = 0x7F800000u;

uint32_t float_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

// A signed integer that orders as the (non-NaN) floats do, -0 just below +0:
// negative floats' magnitude bits flipped.
int32_t ordered_key(float x) {
  const auto bits = static_cast<int32_t>(float_bits(x));
  return bits ^ static_cast<int32_t>(static_cast<uint32_t>(bits >> 31) >> 1);
}

// The first index of `value` (present, not NaN) in data[0, n), by float
// equality (-0 == +0): blocks of 16 tested on the bits, which vectorises.
size_t first_equal(const float* data, size_t n, float value) {
  constexpr size_t kBlock = 16;
  const uint32_t want = float_bits(value);
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    uint32_t hit = 0;
    for (size_t j = 0; j < kBlock; ++j) {
      const uint32_t bits = float_bits(data[i + j]);
      hit |= static_cast<uint32_t>(bits == want) | static_cast<uint32_t>(((bits | want) & 0x7FFFFFFFu) == 0);
    }
    if (hit != 0) break;
  }
  while (data[i] != value) ++i;
  return i;
}

float key_float(int32_t key) {
  const auto bits = static_cast<uint32_t>(key ^ static_cast<int32_t>(static_cast<uint32_t>(key >> 31) >> 1));
  float x;
  std::memcpy(&x, &bits, sizeof(x));
  return x;
}

}  // namespace

Sampler::Sampler(int32_t vocab_size, const SamplerConfig& config)
    : config_(config),
      vocab_size_(vocab_size),
      rng_(config.seed),
      work_(static_cast<size_t>(vocab_size)),
      candidates_(static_cast<size_t>(vocab_size)) {}

Result<Sampler> Sampler::create(int32_t vocab_size, const SamplerConfig& config) {
  TL_CHECK_OR_RETURN(vocab_size >= 1, Error::kInvalidArgument,
                     "sampler: vocab_size is %d; expected at least 1", vocab_size);
  TL_CHECK_OR_RETURN(std::isfinite(config.temperature) && config.temperature >= 0.0f,
                     Error::kInvalidArgument,
                     "sampler: temperature is %g; expected 0 (greedy) or a finite value > 0",
                     static_cast<double>(config.temperature));
  TL_CHECK_OR_RETURN(config.top_k >= 0 && config.top_k <= vocab_size, Error::kInvalidArgument,
                     "sampler: top_k is %d; expected 0 (off) to vocab_size %d", config.top_k,
                     vocab_size);
  TL_CHECK_OR_RETURN(config.top_p > 0.0f && config.top_p <= 1.0f, Error::kInvalidArgument,
                     "sampler: top_p is %g; expected a value in (0, 1]",
                     static_cast<double>(config.top_p));
  TL_CHECK_OR_RETURN(std::isfinite(config.repetition_penalty) && config.repetition_penalty > 0.0f,
                     Error::kInvalidArgument,
                     "sampler: repetition_penalty is %g; expected a finite value > 0 (1 = off)",
                     static_cast<double>(config.repetition_penalty));
  return Sampler(vocab_size, config);
}

Result<int32_t> Sampler::sample(Span<const float> logits, Span<const int32_t> recent) {
  return sample_with_coin(logits, recent, rng_.next_float());
}

Result<int32_t> Sampler::sample_with_coin(Span<const float> logits, Span<const int32_t> recent,
                                          float coin) {
  TL_CHECK_OR_RETURN(logits.size() == static_cast<size_t>(vocab_size_), Error::kInvalidArgument,
                     "sampler: got %zu logits; the vocabulary has %d", logits.size(),
                     vocab_size_);
  TL_CHECK_OR_RETURN(coin >= 0.0f && coin < 1.0f, Error::kInvalidArgument,
                     "sampler: coin is %g; expected a value in [0, 1)", static_cast<double>(coin));
  const size_t n = logits.size();
  float* work = work_.data();

  // 1. Copy, validating; penalize recent tokens from the original logits,
  // so a token listed twice is penalized once. The passes over the
  // vocabulary work on the floats' bits, which the compiler vectorises
  // (float compares it does not, nor loops that return early): with 32000
  // logits, three scalar passes were 5% of a small model's decode step.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  // Greedy without a penalty reads the logits as they are: no copy (the
  // usual decode loop of a benchmark, 128 KB a token at 32000 logits).
  const bool as_is = config_.temperature == 0.0f && config_.repetition_penalty == 1.0f;
  uint32_t bad = 0;  // Any NaN or +inf: magnitude bits above +inf's, or +inf itself.
  // Read as is, the logits are validated and their largest key found in
  // one pass (a NaN's key is garbage, but a NaN is refused below first).
  int32_t max_key = ordered_key(logits[0]);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t bits = float_bits(logits[i]);
    bad |= static_cast<uint32_t>((bits & 0x7FFFFFFFu) > kInfBits) | static_cast<uint32_t>(bits == kInfBits);
    if (as_is) max_key = std::max(max_key, ordered_key(logits[i]));
  }
  if (!as_is) std::memcpy(work, logits.data(), n * sizeof(float));
  if (bad != 0) {
    for (size_t i = 0; i < n; ++i) {
      const float x = logits[i];
      TL_CHECK_OR_RETURN(!std::isnan(x) && x != kInf, Error::kInvalidArgument,
                         "sampler: logit %zu is %s", i, std::isnan(x) ? "NaN" : "+inf");
    }
  }
  const float penalty = config_.repetition_penalty;
  for (size_t j = 0; j < recent.size(); ++j) {
    const int32_t id = recent[j];
    TL_CHECK_OR_RETURN(id >= 0 && id < vocab_size_, Error::kInvalidArgument,
                       "sampler: recent token %zu is id %d, outside the vocabulary [0, %d)", j, id,
                       vocab_size_);
    if (penalty != 1.0f) {
      const float x = logits[static_cast<size_t>(id)];
      work[id] = x > 0.0f ? x / penalty : x * penalty;
    }
  }
  // The largest logit through keys that order as the floats do (no NaN
  // is left), then its first index by float equality, so -0 and +0 tie as
  // they do as floats: the lowest id among equals.
  const float* scores = as_is ? logits.data() : work;
  if (!as_is) {
    max_key = ordered_key(scores[0]);
    for (size_t i = 1; i < n; ++i) max_key = std::max(max_key, ordered_key(scores[i]));
  }
  const float max_logit = key_float(max_key);
  size_t argmax = first_equal(scores, n, max_logit);
  TL_CHECK_OR_RETURN(max_logit != -kInf, Error::kInvalidArgument,
                     "sampler: every one of the %zu logits is -inf", n);

  // 2. Greedy.
  if (config_.temperature == 0.0f) return static_cast<int32_t>(argmax);

  // 3. Softmax with temperature; exp(-inf) is 0.
  const float inv_t = 1.0f / config_.temperature;
  double total = 0.0;
  for (size_t i = 0; i < n; ++i) {
    work[i] = std::exp((work[i] - max_logit) * inv_t);
    total += work[i];
  }

  const bool use_top_k = config_.top_k > 0 && static_cast<size_t>(config_.top_k) < n;
  const bool use_top_p = config_.top_p < 1.0f;
  if (!use_top_k && !use_top_p) {
    // 6. Over the whole distribution, in id order.
    const double r = static_cast<double>(coin) * total;
    double cdf = 0.0;
    size_t last_nonzero = argmax;
    for (size_t i = 0; i < n; ++i) {
      if (work[i] <= 0.0f) continue;
      cdf += work[i];
      last_nonzero = i;
      if (r < cdf) return static_cast<int32_t>(i);
    }
    return static_cast<int32_t>(last_nonzero);  // rounding left r at the very top
  }

  // 4./5. Candidates, most probable first.
  Candidate* cand = candidates_.data();
  size_t count = 0;
  // A token below this, other than the first in the order, is never in the
  // nucleus: it and the tokens after it number at most n - 1, each no more
  // probable, so together they hold less than 1 - top_p of the mass
  // (llama2.c's cut). Skipped when top-k applies.
  const double cutoff =
      (use_top_p && !use_top_k && n > 1)
          ? (1.0 - static_cast<double>(config_.top_p)) / static_cast<double>(n - 1) * total
          : 0.0;
  for (size_t i = 0; i < n; ++i) {
    // The most probable token is always a candidate: the cut's argument
    // needs a token ahead of the one it drops.
    if (work[i] > 0.0f && (static_cast<double>(work[i]) >= cutoff || i == argmax)) {
      cand[count++] = Candidate{work[i], static_cast<int32_t>(i)};
    }
  }
  auto order = [](const Candidate& a, const Candidate& b) {
    return more_probable(a.prob, a.id, b.prob, b.id);
  };
  if (use_top_k && static_cast<size_t>(config_.top_k) < count) {
    std::nth_element(cand, cand + config_.top_k, cand + count, order);
    count = static_cast<size_t>(config_.top_k);
  }
  std::sort(cand, cand + count, order);
  double kept = 0.0;
  for (size_t i = 0; i < count; ++i) kept += cand[i].prob;
  if (use_top_p) {
    // Mass relative to the whole distribution (top-k applied first).
    const double mass = use_top_k ? kept : total;
    const double target = static_cast<double>(config_.top_p) * mass;
    double cum = 0.0;
    size_t keep = count;
    for (size_t i = 0; i < count; ++i) {
      cum += cand[i].prob;
      if (cum >= target) {
        keep = i + 1;
        break;
      }
    }
    count = keep;
    kept = 0.0;
    for (size_t i = 0; i < count; ++i) kept += cand[i].prob;
  }
  const double r = static_cast<double>(coin) * kept;
  double cdf = 0.0;
  for (size_t i = 0; i < count; ++i) {
    cdf += cand[i].prob;
    if (r < cdf) return cand[i].id;
  }
  return cand[count - 1].id;
}

}  // namespace torchlight
