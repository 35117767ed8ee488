#include "extension/llm/sampler/sampler.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

// Counts heap allocations so the tests can show sample() makes none. The
// replacements pair malloc with free; GCC, seeing both inlined, mistakes
// that for a new/free mismatch.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {

using ::torchlight::testing::ErrorIs;
std::atomic<size_t> g_allocations{0};
}  // namespace

namespace {
void* counted_malloc(size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

// Every plain form is replaced, so whatever gtest allocates is freed by the
// matching replacement (ASan checks that pairing).
void* operator new(size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace torchlight {
namespace {

Span<const float> span(const std::vector<float>& v) { return {v.data(), v.size()}; }
Span<const int32_t> span(const std::vector<int32_t>& v) { return {v.data(), v.size()}; }

// Logits whose softmax at temperature 1 is exactly proportional to `probs`.
std::vector<float> logits_for(const std::vector<double>& probs) {
  std::vector<float> out;
  for (double p : probs) out.push_back(p > 0 ? static_cast<float>(std::log(p)) : -INFINITY);
  return out;
}

Sampler make(int32_t vocab, SamplerConfig c) {
  auto r = Sampler::create(vocab, c);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return std::move(r.get());
}

int32_t pick(Sampler& s, const std::vector<float>& logits, float coin,
             const std::vector<int32_t>& recent = {}) {
  auto r = s.sample_with_coin(span(logits), span(recent), coin);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : -1;
}

TEST(XorShiftRng, SeededAndUniform) {
  XorShiftRng a(42), b(42), c(43), zero(0);
  bool differs = false;
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const float fa = a.next_float();
    ASSERT_EQ(fa, b.next_float());
    differs |= fa != c.next_float();
    ASSERT_GE(fa, 0.0f);
    ASSERT_LT(fa, 1.0f);
    sum += fa;
    (void)zero.next_u32();
  }
  EXPECT_TRUE(differs);
  EXPECT_NEAR(sum / 100000, 0.5, 0.005);
  XorShiftRng d(7);
  const uint32_t first = d.next_u32();
  d.reseed(7);
  EXPECT_EQ(d.next_u32(), first);
}

TEST(Sampler, GreedyTakesArgmaxLowestIdOnTies) {
  SamplerConfig c;
  c.temperature = 0;
  Sampler s = make(5, c);
  EXPECT_EQ(pick(s, {1, 3, 2, 3, -1}, 0.99f), 1);
  EXPECT_EQ(pick(s, {-INFINITY, -5, -INFINITY, -7, -6}, 0.0f), 1);
  auto r = s.sample(span(std::vector<float>{0, 0, 9, 0, 0}));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 2);
}

// Over a vocabulary of llama's size: the first of equal maxima, -0 and +0
// equal (the first of them wins), negatives, and -inf around them.
TEST(Sampler, GreedyOverALargeVocabulary) {
  SamplerConfig c;
  c.temperature = 0;
  Sampler s = make(32000, c);
  std::vector<float> logits(32000);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = -static_cast<float>(i % 977) - 1.0f;
  logits[7] = -INFINITY;
  EXPECT_EQ(pick(s, logits, 0.5f), 0);
  logits[31999] = -0.5f;
  EXPECT_EQ(pick(s, logits, 0.5f), 31999);
  logits[20000] = -0.5f;
  EXPECT_EQ(pick(s, logits, 0.5f), 20000);
  logits[25000] = 0.0f;
  logits[24000] = -0.0f;
  EXPECT_EQ(pick(s, logits, 0.5f), 24000);
  logits[30000] = 3e38f;
  EXPECT_EQ(pick(s, logits, 0.5f), 30000);
}

// The lowest id of the largest value, by float comparison (-0 == +0).
int32_t reference_argmax(const std::vector<float>& v) {
  int32_t best = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] > v[static_cast<size_t>(best)]) best = static_cast<int32_t>(i);
  }
  return best;
}

// Greedy reads the logits in lanes of 32 plus a tail: at every length
// around those blocks, with values drawn from a small set (ties, -0 and +0,
// -inf), as the logits are and through the repetition penalty's copy, the
// argmax is the reference's.
TEST(Sampler, GreedyMatchesAReferenceArgmaxAtEveryLength) {
  const float values[] = {-INFINITY, -3.5f, -1.0f, -0.0f, 0.0f, 0.25f, 2.0f, 7.0f};
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  std::vector<int> lengths;
  for (int n = 1; n <= 130; ++n) lengths.push_back(n);
  for (int n : {1023, 1024, 1025, 31999, 32000}) lengths.push_back(n);
  for (const int n : lengths) {
    for (int trial = 0; trial < 4; ++trial) {
      std::vector<float> logits(static_cast<size_t>(n));
      // A narrower range in later trials makes the maximum rarer or tied.
      const uint32_t range = trial < 2 ? 8 : 5;
      for (float& x : logits) x = values[next() % range];
      if (trial == 3) logits[next() % static_cast<uint32_t>(n)] = 1e30f;
      if (std::all_of(logits.begin(), logits.end(), [](float x) { return x == -INFINITY; })) {
        logits[0] = -1.0f;
      }
      SamplerConfig c;
      c.temperature = 0;
      Sampler greedy = make(n, c);
      EXPECT_EQ(pick(greedy, logits, 0.5f), reference_argmax(logits)) << "n " << n << " trial " << trial;

      c.repetition_penalty = 2.0f;
      Sampler penalized = make(n, c);
      const std::vector<int32_t> recent = {static_cast<int32_t>(next() % static_cast<uint32_t>(n))};
      std::vector<float> expected = logits;
      float& x = expected[static_cast<size_t>(recent[0])];
      x = x > 0.0f ? x / 2.0f : x * 2.0f;
      EXPECT_EQ(pick(penalized, logits, 0.5f, recent), reference_argmax(expected))
          << "n " << n << " trial " << trial << " (penalized)";
    }
  }
}

// A NaN or +inf anywhere (in a lane block or the tail) is refused, naming
// the first, also when greedy reads the logits as they are.
TEST(Sampler, GreedyRefusesNaNAndInfinityAnywhere) {
  SamplerConfig c;
  c.temperature = 0;
  const int n = 100;  // three blocks of 32 and a tail of 4
  Sampler s = make(n, c);
  for (const int at : {0, 17, 31, 32, 63, 95, 96, 99}) {
    for (const float bad : {NAN, INFINITY}) {
      std::vector<float> logits(n, 1.0f);
      logits[static_cast<size_t>(at)] = bad;
      auto r = s.sample_with_coin(span(logits), {}, 0.5f);
      ASSERT_FALSE(r.ok()) << at;
      const std::string want = "logit " + std::to_string(at) + " is " + (std::isnan(bad) ? "NaN" : "+inf");
      EXPECT_NE(std::string(r.status().message()).find(want), std::string::npos) << r.status().message();
    }
  }
}

TEST(Sampler, TemperatureOneFollowsTheCdfInIdOrder) {
  Sampler s = make(4, SamplerConfig{});
  const auto logits = logits_for({0.1, 0.2, 0.3, 0.4});
  // CDF 0.1, 0.3, 0.6, 1.0.
  EXPECT_EQ(pick(s, logits, 0.0f), 0);
  EXPECT_EQ(pick(s, logits, 0.05f), 0);
  EXPECT_EQ(pick(s, logits, 0.15f), 1);
  EXPECT_EQ(pick(s, logits, 0.29f), 1);
  EXPECT_EQ(pick(s, logits, 0.31f), 2);
  EXPECT_EQ(pick(s, logits, 0.59f), 2);
  EXPECT_EQ(pick(s, logits, 0.61f), 3);
  EXPECT_EQ(pick(s, logits, 0.9999f), 3);
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
  const auto logits = logits_for({0.2, 0.8});
  SamplerConfig hot;
  hot.temperature = 1e6f;  // ~uniform: CDF 0.5, 1.0
  Sampler s_hot = make(2, hot);
  EXPECT_EQ(pick(s_hot, logits, 0.49f), 0);
  EXPECT_EQ(pick(s_hot, logits, 0.51f), 1);
  SamplerConfig half;
  half.temperature = 0.5f;  // p ~ p^2: 0.04 / 0.68 = 0.0588
  Sampler s_half = make(2, half);
  EXPECT_EQ(pick(s_half, logits, 0.05f), 0);
  EXPECT_EQ(pick(s_half, logits, 0.07f), 1);
}

TEST(Sampler, TopKKeepsTheKMostProbable) {
  SamplerConfig c;
  c.top_k = 2;
  Sampler s = make(4, c);
  const auto logits = logits_for({0.1, 0.2, 0.3, 0.4});
  // Kept, most probable first: 3 (4/7), 2 (3/7).
  EXPECT_EQ(pick(s, logits, 0.0f), 3);
  EXPECT_EQ(pick(s, logits, 0.57f), 3);
  EXPECT_EQ(pick(s, logits, 0.58f), 2);
  EXPECT_EQ(pick(s, logits, 0.99f), 2);
  // Ties: the lower id is more probable.
  c.top_k = 1;
  Sampler one = make(4, c);
  EXPECT_EQ(pick(one, {1, 5, 5, 0}, 0.9f), 1);
}

TEST(Sampler, TopPKeepsTheSmallestNucleus) {
  SamplerConfig c;
  c.top_p = 0.65f;
  Sampler s = make(4, c);
  const auto logits = logits_for({0.1, 0.2, 0.3, 0.4});
  // 0.4 < 0.65 <= 0.4 + 0.3: keep {3, 2}, renormalized 4/7, 3/7.
  EXPECT_EQ(pick(s, logits, 0.5f), 3);
  EXPECT_EQ(pick(s, logits, 0.6f), 2);
  c.top_p = 0.35f;  // the top token alone reaches it
  Sampler top = make(4, c);
  EXPECT_EQ(pick(top, logits, 0.99f), 3);
  c.top_p = 0.71f;  // needs three tokens: {3, 2, 1}, CDF 4/9, 7/9, 1
  Sampler three = make(4, c);
  EXPECT_EQ(pick(three, logits, 0.43f), 3);
  EXPECT_EQ(pick(three, logits, 0.45f), 2);
  EXPECT_EQ(pick(three, logits, 0.8f), 1);
}

TEST(Sampler, TopPOnAUniformDistributionKeepsAtLeastOneToken) {
  SamplerConfig c;
  c.top_p = 0.0001f;  // below 1/n: the nucleus is the first token in order
  Sampler s = make(1000, c);
  const std::vector<float> flat(1000, 0.5f);
  EXPECT_EQ(pick(s, flat, 0.99f), 0);
}

TEST(Sampler, TopKThenTopP) {
  SamplerConfig c;
  c.top_k = 3;
  c.top_p = 0.5f;
  Sampler s = make(4, c);
  const auto logits = logits_for({0.1, 0.2, 0.3, 0.4});
  // Top-3 renormalized: 4/9, 3/9, 2/9; 4/9 < 0.5 so {3, 2} remain.
  EXPECT_EQ(pick(s, logits, 0.5f), 3);
  EXPECT_EQ(pick(s, logits, 0.6f), 2);
}

TEST(Sampler, RepetitionPenalty) {
  SamplerConfig c;
  c.temperature = 0;
  c.repetition_penalty = 2.0f;
  Sampler s = make(4, c);
  // 4 / 2 = 2 < 3: token 1 loses to 2; a negative logit is multiplied.
  EXPECT_EQ(pick(s, {0, 4, 3, 1}, 0, {1}), 2);
  EXPECT_EQ(pick(s, {-1, -1.5f, -5, -5}, 0, {0}), 1);  // -1 * 2 = -2 < -1.5
  // A repeated id is penalized once: 4 / 2 = 2 > 1.9, not 4 / 4 = 1.
  EXPECT_EQ(pick(s, {0, 4, 1.9f, 1}, 0, {1, 1, 1}), 1);
  // The caller's logits are not modified.
  const std::vector<float> logits = {0, 4, 3, 1};
  EXPECT_EQ(pick(s, logits, 0, {1}), 2);
  EXPECT_EQ(logits[1], 4.0f);
  // Penalty 1 is off.
  c.repetition_penalty = 1.0f;
  Sampler off = make(4, c);
  EXPECT_EQ(pick(off, logits, 0, {1}), 1);
}

TEST(Sampler, ErrorsNameTheProblem) {
  auto bad_config = [](SamplerConfig c, int32_t vocab, const char* part) {
    auto r = Sampler::create(vocab, c);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r, ErrorIs(Error::kInvalidArgument));
    EXPECT_NE(std::string(r.status().message()).find(part), std::string::npos)
        << r.status().message();
  };
  SamplerConfig c;
  bad_config(c, 0, "vocab_size is 0");
  c.temperature = -1;
  bad_config(c, 4, "temperature is -1");
  c = {};
  c.temperature = NAN;
  bad_config(c, 4, "temperature");
  c = {};
  c.top_k = 5;
  bad_config(c, 4, "top_k is 5");
  c = {};
  c.top_p = 0;
  bad_config(c, 4, "top_p is 0");
  c.top_p = 1.5f;
  bad_config(c, 4, "top_p is 1.5");
  c = {};
  c.repetition_penalty = 0;
  bad_config(c, 4, "repetition_penalty is 0");

  Sampler s = make(3, SamplerConfig{});
  auto bad_call = [&s](const std::vector<float>& logits, const std::vector<int32_t>& recent,
                       float coin, const char* part) {
    auto r = s.sample_with_coin(span(logits), span(recent), coin);
    ASSERT_FALSE(r.ok()) << part;
    EXPECT_THAT(r, ErrorIs(Error::kInvalidArgument));
    EXPECT_NE(std::string(r.status().message()).find(part), std::string::npos)
        << r.status().message();
  };
  bad_call({1, 2}, {}, 0.5f, "got 2 logits; the vocabulary has 3");
  bad_call({1, NAN, 2}, {}, 0.5f, "logit 1 is NaN");
  bad_call({1, 2, INFINITY}, {}, 0.5f, "logit 2 is +inf");
  bad_call({1, INFINITY, NAN}, {}, 0.5f, "logit 1 is +inf");  // The first one.
  bad_call({-NAN, 0, -INFINITY}, {}, 0.5f, "logit 0 is NaN");
  bad_call({-INFINITY, -INFINITY, -INFINITY}, {}, 0.5f, "every one of the 3 logits is -inf");
  bad_call({1, 2, 3}, {3}, 0.5f, "recent token 0 is id 3");
  bad_call({1, 2, 3}, {}, 1.0f, "coin is 1");
  bad_call({1, 2, 3}, {}, -0.1f, "coin is -0.1");
}

TEST(Sampler, SeededSamplingIsReproducible) {
  SamplerConfig c;
  c.temperature = 0.8f;
  c.top_k = 50;
  c.top_p = 0.9f;
  c.seed = 1234;
  std::vector<float> logits(500);
  for (size_t i = 0; i < logits.size(); ++i) logits[i] = std::sin(float(i) * 0.37f) * 3;
  Sampler a = make(500, c), b = make(500, c);
  std::vector<int32_t> seq_a, seq_b;
  for (int i = 0; i < 200; ++i) {
    seq_a.push_back(*a.sample(span(logits)));
    seq_b.push_back(*b.sample(span(logits)));
  }
  EXPECT_EQ(seq_a, seq_b);
  c.seed = 1235;
  Sampler other = make(500, c);
  std::vector<int32_t> seq_c;
  for (int i = 0; i < 200; ++i) seq_c.push_back(*other.sample(span(logits)));
  EXPECT_NE(seq_a, seq_c);
  a.reseed(1234);
  EXPECT_EQ(*a.sample(span(logits)), seq_a[0]);
}

// Frequencies over many seeded draws match the target distribution: within
// 5 standard deviations per token (deterministic for the fixed seed).
void expect_distribution(SamplerConfig c, const std::vector<double>& probs,
                         const std::vector<double>& expected) {
  c.seed = 2024;
  Sampler s = make(static_cast<int32_t>(probs.size()), c);
  const auto logits = logits_for(probs);
  const int n = 200000;
  std::vector<int> counts(probs.size());
  for (int i = 0; i < n; ++i) {
    auto r = s.sample(span(logits));
    ASSERT_TRUE(r.ok());
    ++counts[static_cast<size_t>(*r)];
  }
  for (size_t i = 0; i < probs.size(); ++i) {
    const double p = expected[i];
    const double sd = std::sqrt(n * p * (1 - p));
    if (p == 0) {
      EXPECT_EQ(counts[i], 0) << i;
    } else {
      EXPECT_NEAR(counts[i], n * p, 5 * sd + 1) << i;
    }
  }
}

TEST(SamplerDistribution, Softmax) {
  expect_distribution({}, {0.05, 0.15, 0.5, 0.3}, {0.05, 0.15, 0.5, 0.3});
}

TEST(SamplerDistribution, Temperature) {
  SamplerConfig c;
  c.temperature = 0.5f;  // p^2 normalized
  const double z = 0.01 + 0.09 + 0.36;
  expect_distribution(c, {0.1, 0.3, 0.6}, {0.01 / z, 0.09 / z, 0.36 / z});
}

TEST(SamplerDistribution, TopK) {
  SamplerConfig c;
  c.top_k = 2;
  expect_distribution(c, {0.05, 0.15, 0.5, 0.3}, {0, 0, 0.5 / 0.8, 0.3 / 0.8});
}

TEST(SamplerDistribution, TopP) {
  SamplerConfig c;
  c.top_p = 0.9f;  // 0.5 + 0.3 < 0.9 <= 0.5 + 0.3 + 0.15
  expect_distribution(c, {0.05, 0.15, 0.5, 0.3}, {0, 0.15 / 0.95, 0.5 / 0.95, 0.3 / 0.95});
}

TEST(Sampler, SampleAllocatesNothing) {
  const int32_t vocab = 32000;
  std::vector<float> logits(vocab);
  for (int32_t i = 0; i < vocab; ++i) logits[i] = std::cos(float(i)) * 4;
  const std::vector<int32_t> recent = {5, 17, 5, 31999};
  for (SamplerConfig c : {SamplerConfig{0.0f, 0, 1.0f, 1.3f, 1}, SamplerConfig{0.7f, 0, 1.0f, 1.0f, 2},
                          SamplerConfig{0.7f, 40, 1.0f, 1.1f, 3}, SamplerConfig{0.9f, 0, 0.9f, 1.0f, 4},
                          SamplerConfig{1.0f, 100, 0.95f, 1.2f, 5}}) {
    Sampler s = make(vocab, c);
    const size_t before = g_allocations.load();
    for (int i = 0; i < 50; ++i) {
      auto r = s.sample(span(logits), span(recent));
      ASSERT_TRUE(r.ok());
      ASSERT_GE(*r, 0);
      ASSERT_LT(*r, vocab);
    }
    EXPECT_EQ(g_allocations.load(), before) << "temperature " << c.temperature;
  }
}

}  // namespace
}  // namespace torchlight
