#include "extension/llm/sampler/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

namespace torchlight {
namespace {

// Most probable first; the lower id first among equals, so the order (and
// so the choice for a given coin) does not depend on the sort algorithm.
bool more_probable(float pa, int32_t ia, float pb, int32_t ib) {
  return pa > pb || (pa == pb && ia < ib);
}

uint32_t float_bits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

// The largest of data[0, n) and whether every value is below +inf (no NaN,
// no +inf), in one pass. kLanes independent running maxima let the compiler
// keep them in vector registers; one running maximum (or integer keys, as
// before) left a scalar chain: 18-20 us a decode step at 32000 logits,
// 3% of a stories15m int8 token at 2 threads. A NaN fails `x < inf` and is
// never taken as the maximum, so the maximum means something only when
// every value is below +inf.
struct Scan {
  float max;
  bool below_inf;
};

// Written once, inlined into each build below (the vectoriser then uses
// that build's registers).
template <size_t kLanes>
__attribute__((always_inline)) inline Scan scan_lanes(const float* data, size_t n) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  float lane_max[kLanes];
  int32_t lane_ok[kLanes];
  for (size_t j = 0; j < kLanes; ++j) {
    lane_max[j] = -kInf;
    lane_ok[j] = -1;
  }
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (size_t j = 0; j < kLanes; ++j) {
      const float x = data[i + j];
      lane_ok[j] &= -static_cast<int32_t>(x < kInf);
      lane_max[j] = lane_max[j] < x ? x : lane_max[j];
    }
  }
  Scan out{-kInf, true};
  for (; i < n; ++i) {
    out.below_inf &= data[i] < kInf;
    out.max = out.max < data[i] ? data[i] : out.max;
  }
  for (size_t j = 0; j < kLanes; ++j) {
    out.below_inf &= lane_ok[j] != 0;
    out.max = out.max < lane_max[j] ? lane_max[j] : out.max;
  }
  return out;
}

// The first index of `value` (present, not NaN) in data[0, n), by float
// equality (-0 == +0): blocks tested on the bits, which vectorises.
template <size_t kBlock>
__attribute__((always_inline)) inline size_t first_equal_blocks(const float* data, size_t n, float value) {
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

// The builds, picked once by the CPU (the library is built for any x86-64);
// TORCHLIGHT_SAMPLER_ISA=avx2 or generic asks for a lesser one (tests run
// each build so).
struct LogitPasses {
  Scan (*scan)(const float* data, size_t n);
  size_t (*first_equal)(const float* data, size_t n, float value);
};

Scan scan_generic(const float* data, size_t n) { return scan_lanes<32>(data, n); }
size_t first_equal_generic(const float* data, size_t n, float value) {
  return first_equal_blocks<16>(data, n, value);
}
#if defined(__x86_64__)
__attribute__((target("avx2"))) Scan scan_avx2(const float* data, size_t n) { return scan_lanes<32>(data, n); }
__attribute__((target("avx2"))) size_t first_equal_avx2(const float* data, size_t n, float value) {
  return first_equal_blocks<32>(data, n, value);
}
__attribute__((target("avx512f,avx512bw,prefer-vector-width=512"))) Scan scan_avx512(const float* data, size_t n) {
  return scan_lanes<64>(data, n);
}
__attribute__((target("avx512f,avx512bw,prefer-vector-width=512"))) size_t first_equal_avx512(const float* data,
                                                                                      size_t n, float value) {
  return first_equal_blocks<64>(data, n, value);
}
#endif

const LogitPasses& logit_passes() {
  static const LogitPasses passes = [] {
#if defined(__x86_64__)
    const char* asked = std::getenv("TORCHLIGHT_SAMPLER_ISA");
    const std::string isa = asked != nullptr ? asked : "";
    __builtin_cpu_init();
    if (isa.empty() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
      return LogitPasses{&scan_avx512, &first_equal_avx512};
    }
    if ((isa.empty() || isa == "avx2") && __builtin_cpu_supports("avx2")) {
      return LogitPasses{&scan_avx2, &first_equal_avx2};
    }
#endif
    return LogitPasses{&scan_generic, &first_equal_generic};
  }();
  return passes;
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

  // 1. Validate; penalize recent tokens from the original logits (in a
  // copy), so a token listed twice is penalized once. Greedy without a
  // penalty reads the logits as they are (the usual decode loop of a
  // benchmark: no 128 KB copy a token at 32000 logits), and the pass that
  // validates them also finds the largest.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const bool as_is = config_.temperature == 0.0f && config_.repetition_penalty == 1.0f;
  const LogitPasses& passes = logit_passes();
  const Scan scan = passes.scan(logits.data(), n);
  if (!scan.below_inf) {
    for (size_t i = 0; i < n; ++i) {
      const float x = logits[i];
      TL_CHECK_OR_RETURN(!std::isnan(x) && x != kInf, Error::kInvalidArgument,
                         "sampler: logit %zu is %s", i, std::isnan(x) ? "NaN" : "+inf");
    }
  }
  if (!as_is) std::memcpy(work, logits.data(), n * sizeof(float));
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
  // The largest logit, then its first index by float equality, so -0 and
  // +0 tie as they do as floats: the lowest id among equals.
  const float* scores = as_is ? logits.data() : work;
  const float max_logit = as_is ? scan.max : passes.scan(scores, n).max;
  size_t argmax = passes.first_equal(scores, n, max_logit);
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
