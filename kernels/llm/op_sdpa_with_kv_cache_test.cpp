// torchlight::sdpa_with_kv_cache.out against a plain double-precision
// reference written here: ordinary and grouped-query attention, decode and
// prefill, positions not starting at 0, odd head sizes, batches, scale given
// or None, a prefill followed by decodes (checking the caches after each
// call), strided layouts, every instruction-set build, 1 and 2 threads; and
// every bad input, which must fail naming the argument and write nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/sdpa_dispatch.h"
#include "kernels/llm/sdpa_reference_test_util.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::llm {
namespace {

using ::torchlight::testing::ErrorIs;

using portable::kernel_test::dim_order;
using portable::kernel_test::dynamic_bound;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::Layout;
using portable::kernel_test::run_kernel;
using portable::kernel_test::TestTensor;
using ::testing::HasSubstr;
using sdpa_test::idx;
using sdpa_test::positions;
using sdpa_test::random_values;
using sdpa_test::ReferenceCache;
using sdpa_test::Shape;
using sdpa_test::stale_caches;
using sdpa_test::StaleCaches;
using sdpa_test::expect_out_near;
using sdpa_test::to_doubles;

constexpr const char* kOp = "torchlight::sdpa_with_kv_cache.out";
constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kI64 = ScalarType::kLong;
constexpr ScalarType kF16 = ScalarType::kHalf;

// One kernel call's tensors, with caches that persist across calls.
class Attention {
 public:
  Attention(Shape shape, uint64_t seed, Layout query_layout = {}, Layout out_layout = {})
      : shape_(shape), seed_(seed), query_layout_(std::move(query_layout)),
        out_layout_(std::move(out_layout)) {
    // Stale cache contents: the kernel must overwrite or ignore them.
    caches_ = stale_caches(shape, seed);
  }

  static size_t numel(int a, int b, int c, int d) { return static_cast<size_t>(a) * b * c * d; }

  /// Runs one call with T = pos.size() new rows and checks out and both
  /// caches against the reference.
  void step_and_check(const std::vector<int64_t>& pos, EValue scale, double tolerance = 2e-5,
                      double query_amplitude = 1.0) {
    Shape& s = shape_;
    s.t = static_cast<int>(pos.size());
    caches_.reference.shape.t = s.t;
    ++calls_;
    const std::vector<double> q =
        random_values(numel(s.b, s.hq, s.t, s.d), seed_ * 31 + calls_ * 3, query_amplitude);
    const size_t step_numel = numel(s.b, s.hkv, s.t, s.d);
    const std::vector<double> k = random_values(step_numel, seed_ * 31 + calls_ * 3 + 1);
    const std::vector<double> v = random_values(step_numel, seed_ * 31 + calls_ * 3 + 2);
    TestTensor query(kF32, {s.b, s.hq, s.t, s.d}, q, query_layout_);
    TestTensor key(kF32, {s.b, s.hkv, s.t, s.d}, k);
    TestTensor value(kF32, {s.b, s.hkv, s.t, s.d}, v);
    TestTensor input_pos(kI64, {s.t}, to_doubles(pos));
    TestTensor out(kF32, {s.b, s.hq, s.t, s.d}, {}, out_layout_);
    KernelArgs args{query.evalue(),      key.evalue(),       value.evalue(),
                    caches_.key->evalue(), caches_.value->evalue(), input_pos.evalue(),
                    scale,               out.evalue(),       EValue()};
    const Status status = run_kernel(&sdpa_with_kv_cache_out, kOp, args);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(args[8].is_tensor());
    EXPECT_EQ(args[8].to_tensor().impl(), out.tensor().impl());

    const double scale_value = scale.is_none() ? 1.0 / std::sqrt(static_cast<double>(s.d))
                                               : static_cast<double>(static_cast<float>(
                                                     scale.scalar_as_double()));
    const std::vector<double> expected = caches_.reference.step(q, k, v, pos, scale_value);
    const std::vector<double> actual = out.values();
    expect_out_near(actual, expected, tolerance, calls_);
    if (::testing::Test::HasFatalFailure()) return;
    // Caches: the new rows exactly, every other row untouched.
    EXPECT_EQ(caches_.key->values(), caches_.reference.keys) << "key_cache after call " << calls_;
    EXPECT_EQ(caches_.value->values(), caches_.reference.values) << "value_cache after call " << calls_;
  }

  TestTensor& key_cache() { return *caches_.key; }
  TestTensor& value_cache() { return *caches_.value; }
  ReferenceCache& reference() { return caches_.reference; }

 private:
  Shape shape_;
  uint64_t seed_;
  Layout query_layout_;
  Layout out_layout_;
  int calls_ = 0;
  StaleCaches caches_;
};

// Every value test runs with 1 and 2 pool threads. (Calls under about 32K
// multiply-adds run on the calling thread; most shapes here are above that.)
class SdpaTest : public sdpa_test::PoolThreadsTest {};

INSTANTIATE_TEST_SUITE_P(Threads, SdpaTest, ::testing::Values(size_t{1}, size_t{2}),
                         [](const auto& info) { return "threads" + std::to_string(info.param); });

TEST_P(SdpaTest, DecodeOrdinaryAttention) {
  Attention a({1, 4, 4, 1, 80, 64}, 1);
  a.step_and_check({77}, EValue());
}

TEST_P(SdpaTest, PrefillOrdinaryAttention) {
  Attention a({1, 3, 3, 1, 32, 16}, 2);
  a.step_and_check(positions(0, 20), EValue());
}

TEST_P(SdpaTest, GroupedQueryTwoHeadsPerGroup) {
  Attention a({1, 4, 2, 1, 48, 16}, 3);
  a.step_and_check(positions(0, 30), EValue());
  a.step_and_check({30}, EValue());
}

TEST_P(SdpaTest, GroupedQueryFourHeadsPerGroup) {
  Attention a({1, 8, 2, 1, 64, 32}, 4);
  a.step_and_check(positions(0, 40), EValue());
  a.step_and_check({40}, EValue());
}

TEST_P(SdpaTest, MultiQueryTwelveHeadsOneGroup) {
  Attention a({1, 12, 1, 1, 40, 32}, 5);
  a.step_and_check(positions(0, 20), EValue());
  a.step_and_check({20}, EValue());
}

TEST_P(SdpaTest, PositionsNotStartingAtZero) {
  // Rows 0..4 of the cache are stale here and must still be attended to.
  Attention a({1, 2, 2, 1, 12, 8}, 6);
  a.step_and_check(positions(5, 3), EValue());
}

TEST_P(SdpaTest, HeadDimsNotAMultipleOfTheVectorWidth) {
  for (int d : {1, 5, 17, 33, 65}) {
    SCOPED_TRACE("D = " + std::to_string(d));
    Attention a({1, 4, 2, 1, 150, d}, 7 + d);
    a.step_and_check(positions(130, 3), EValue());
    a.step_and_check({133}, EValue());
  }
}

TEST_P(SdpaTest, BatchOfTwo) {
  Attention a({2, 4, 2, 1, 40, 12}, 8);
  a.step_and_check(positions(0, 24), EValue());
  a.step_and_check({24}, EValue());
}

TEST_P(SdpaTest, ExplicitScale) {
  Attention a({1, 2, 1, 1, 10, 6}, 9);
  a.step_and_check(positions(0, 3), EValue(0.3));
  a.step_and_check({3}, EValue(2.5));
  a.step_and_check({4}, EValue(1.0));
}

TEST_P(SdpaTest, PrefillThenDecodesKeepTheCaches) {
  Attention a({2, 6, 2, 1, 40, 12}, 10);
  a.step_and_check(positions(0, 20), EValue());
  for (int64_t p = 20; p < 24; ++p) a.step_and_check({p}, EValue());
}

TEST_P(SdpaTest, LongPrefillSpansManyTilesAndBlocks) {
  Attention a({1, 3, 3, 1, 200, 64}, 11);
  a.step_and_check(positions(100, 70), EValue());
  a.step_and_check({170}, EValue());
}

TEST_P(SdpaTest, PositionsInAnyOrder) {
  // Every row is written before any attention, whatever the order.
  Attention a({1, 2, 1, 1, 8, 4}, 12);
  a.step_and_check({4, 0, 2}, EValue());
  a.step_and_check({6, 6}, EValue());  // The same position twice: the later row wins.
}

TEST_P(SdpaTest, LargeScoresAreStable) {
  // Scores near +-1e4: e^score overflows float without the max subtraction.
  Attention a({1, 2, 2, 1, 300, 16}, 13);
  a.step_and_check(positions(0, 290), EValue(), 1e-4, 3000.0);
}

// Prefill blocks (sdpa_prefill_impl.h: 16 rows a block, a vector's width
// of rows at a time): row counts around the block and vector widths, head
// sizes around the vectors and value chunks (and above the loop's 256, which
// falls back), one and two heads per key/value head, positions not at 0.
TEST_P(SdpaTest, PrefillBlocksEveryRowCountAndHeadDim) {
  for (int rows : {32, 33, 40, 47, 63, 64, 65}) {
    for (int d : {1, 5, 16, 17, 33, 48, 65, 300}) {
      if (rows != 33 && rows != 64 && d != 17 && d != 48) continue;  // The cross on a few.
      for (int rep : {1, 2}) {
        SCOPED_TRACE("rows " + std::to_string(rows) + " D " + std::to_string(d) + " heads per group " +
                     std::to_string(rep));
        Attention a({1, 2 * rep, 2, 1, 140, d}, 40 + rows + d + rep);
        const int64_t start = rows % 3 == 0 ? 0 : 70;
        a.step_and_check(positions(start, rows), EValue());
        a.step_and_check({start + rows}, EValue());
      }
    }
  }
}

TEST_P(SdpaTest, StridedQueryAndOut) {
  // query and out laid out [B, T, H, D] in memory; caches contiguous.
  Attention a({1, 4, 2, 1, 16, 8}, 14, dim_order({0, 2, 1, 3}), dim_order({0, 2, 1, 3}));
  a.step_and_check(positions(0, 5), EValue());
  a.step_and_check({5}, EValue());
}

TEST_P(SdpaTest, StaleRowsBeyondThePositionsAreNeverRead) {
  // Cache rows 66..69 hold NaN keys and infinite values; rows 0..65 are
  // written by the call, and no row attends past position 65.
  const Shape s{1, 2, 2, 66, 70, 8};
  TestTensor key_cache(kF32, {1, 2, 70, 8});
  TestTensor value_cache(kF32, {1, 2, 70, 8});
  for (int64_t i = 0; i < key_cache.numel(); ++i) {
    key_cache.set(i, std::numeric_limits<double>::quiet_NaN());
    value_cache.set(i, std::numeric_limits<double>::infinity());
  }
  const std::vector<int64_t> pos = positions(0, 66);
  TestTensor query(kF32, {1, 2, 66, 8}, random_values(2 * 66 * 8, 1));
  TestTensor key(kF32, {1, 2, 66, 8}, random_values(2 * 66 * 8, 2));
  TestTensor value(kF32, {1, 2, 66, 8}, random_values(2 * 66 * 8, 3));
  TestTensor input_pos(kI64, {66}, to_doubles(pos));
  TestTensor out(kF32, {1, 2, 66, 8});
  KernelArgs args{query.evalue(), key.evalue(), value.evalue(), key_cache.evalue(),
                  value_cache.evalue(), input_pos.evalue(), EValue(), out.evalue(),
                  EValue()};
  ASSERT_TRUE(run_kernel(&sdpa_with_kv_cache_out, kOp, args).ok());
  ReferenceCache reference{s, key_cache.values(), value_cache.values()};
  const std::vector<double> expected = reference.step(query.values(), key.values(),
                                                      value.values(), pos, 1 / std::sqrt(8.0));
  const std::vector<double> actual = out.values();
  for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], 2e-5) << i;
}

TEST_P(SdpaTest, DynamicOutIsResized) {
  TestTensor query(kF32, {1, 2, 3, 4}, random_values(24, 1));
  TestTensor key(kF32, {1, 1, 3, 4}, random_values(12, 2));
  TestTensor value(kF32, {1, 1, 3, 4}, random_values(12, 3));
  TestTensor key_cache(kF32, {1, 1, 8, 4});
  TestTensor value_cache(kF32, {1, 1, 8, 4});
  TestTensor input_pos(kI64, {3}, {0, 1, 2});
  TestTensor out(kF32, {1, 2, 8, 4}, {}, dynamic_bound());
  KernelArgs args{query.evalue(),     key.evalue(),       value.evalue(),
                  key_cache.evalue(), value_cache.evalue(), input_pos.evalue(),
                  EValue(),           out.evalue(),       EValue()};
  ASSERT_TRUE(run_kernel(&sdpa_with_kv_cache_out, kOp, args).ok());
  EXPECT_EQ(out.sizes(), (std::vector<SizesType>{1, 2, 3, 4}));
  // Row 0 sees only position 0: out = value row 0 exactly.
  for (int d = 0; d < 4; ++d) EXPECT_FLOAT_EQ(out.get(d), value.get(d));
}

TEST_P(SdpaTest, EmptyBatchDoesNothing) {
  TestTensor query(kF32, {0, 2, 1, 4});
  TestTensor key(kF32, {0, 1, 1, 4});
  TestTensor value(kF32, {0, 1, 1, 4});
  TestTensor key_cache(kF32, {0, 1, 8, 4});
  TestTensor value_cache(kF32, {0, 1, 8, 4});
  TestTensor input_pos(kI64, {1}, {3});
  TestTensor out(kF32, {0, 2, 1, 4});
  KernelArgs args{query.evalue(),     key.evalue(),       value.evalue(),
                  key_cache.evalue(), value_cache.evalue(), input_pos.evalue(),
                  EValue(),           out.evalue(),       EValue()};
  EXPECT_TRUE(run_kernel(&sdpa_with_kv_cache_out, kOp, args).ok());
}

// `values` as float16 would store them, back in double.
std::vector<double> rounded_to_half(const std::vector<double>& values) {
  std::vector<double> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    out[i] = Half::to_float(Half::from_float(static_cast<float>(values[i])));
  }
  return out;
}

// One call of every instruction-set build this CPU supports, through
// SdpaProblem, on caches of `cache_dtype` (float32, or float16 holding
// rounded values) against the double reference: T rows at positions
// first.., scale 0.2, each output within 2e-5. The cache rows past the last
// position hold NaN, so a loop reading past a row's prefix shows.
void check_every_variant(const Shape& s, ScalarType cache_dtype, int first = 120) {
  const bool half = cache_dtype == ScalarType::kHalf;
  const std::vector<int64_t> pos = positions(first, s.t);
  const std::vector<double> q = random_values(Attention::numel(s.b, s.hq, s.t, s.d), 21);
  std::vector<double> keys = random_values(Attention::numel(s.b, s.hkv, s.s, s.d), 22);
  std::vector<double> values = random_values(Attention::numel(s.b, s.hkv, s.s, s.d), 23);
  ReferenceCache reference{s, half ? rounded_to_half(keys) : keys,
                           half ? rounded_to_half(values) : values};
  TestTensor query(kF32, {s.b, s.hq, s.t, s.d}, q);
  TestTensor key_cache(cache_dtype, {s.b, s.hkv, s.s, s.d}, reference.keys);
  TestTensor value_cache(cache_dtype, {s.b, s.hkv, s.s, s.d}, reference.values);
  for (int b = 0; b < s.b; ++b) {
    for (int g = 0; g < s.hkv; ++g) {
      for (int row = first + s.t; row < s.s; ++row) {
        for (int d = 0; d < s.d; ++d) {
          const auto at = static_cast<int64_t>(idx({s.b, s.hkv, s.s, s.d}, {b, g, row, d}));
          key_cache.set(at, NAN);
          value_cache.set(at, NAN);
        }
      }
    }
  }
  TestTensor input_pos(kI64, {s.t}, to_doubles(pos));
  // The reference writes rows first; give it the rows already in the cache.
  std::vector<double> k(Attention::numel(s.b, s.hkv, s.t, s.d));
  std::vector<double> v(k.size());
  for (int b = 0; b < s.b; ++b) {
    for (int g = 0; g < s.hkv; ++g) {
      for (int i = 0; i < s.t; ++i) {
        for (int d = 0; d < s.d; ++d) {
          k[idx({s.b, s.hkv, s.t, s.d}, {b, g, i, d})] =
              reference.keys[idx({s.b, s.hkv, s.s, s.d}, {b, g, first + i, d})];
          v[idx({s.b, s.hkv, s.t, s.d}, {b, g, i, d})] =
              reference.values[idx({s.b, s.hkv, s.s, s.d}, {b, g, first + i, d})];
        }
      }
    }
  }
  const std::vector<double> expected = reference.step(q, k, v, pos, 0.2);
  for (const SdpaVariant& variant : sdpa_variants()) {
    SCOPED_TRACE(variant.name);
    TestTensor out(kF32, {s.b, s.hq, s.t, s.d});
    SdpaProblem p = sdpa_problem_bhsd(query.tensor(), key_cache.tensor(), value_cache.tensor(),
                                      input_pos.tensor(), out.tensor(), 0.2f);
    ASSERT_EQ(p.key_cache_half != nullptr, half);
    ASSERT_EQ(p.key_cache == nullptr, half);
    sdpa_run(p, &variant);
    const std::vector<double> actual = out.values();
    for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], 2e-5) << i;
  }
}

// Head sizes that exercise each build's full-vector, partial and scalar paths.
TEST_P(SdpaTest, EveryVariantMatchesTheReference) {
  const Span<const SdpaVariant> variants = sdpa_variants();
  ASSERT_GE(variants.size(), 1u);
  EXPECT_STREQ(variants[variants.size() - 1].name, "generic");
  // D = 44, 48, 56, 64 and 72: 2 to 18 whole vectors at 16, 8 and 4 lanes, so
  // the weighted value sum's walks of up to 8 vectors (accumulate_walk) take
  // every count from 1 to 8, alone and after a walk of 8; T = 1 is decode.
  for (int rows : {19, 1}) {
    for (int dim : {3, 17, 40, 44, 48, 56, 64, 72}) {
      SCOPED_TRACE("D = " + std::to_string(dim) + ", T = " + std::to_string(rows));
      check_every_variant(Shape{2, 6, 3, rows, 150, dim}, kF32);
    }
  }
}

// Decode (T = 1) at positions on both sides of the 128-key tile edges, where
// each work item prefetches the next item's rows tile by tile
// (sdpa_prefetch_of): stories110M's heads (12 of D = 64), grouped (12 over
// 4, batch 2: the next item crosses into the next batch) and multi-query
// (8 over 1: one item, nothing to prefetch), float32 and float16 caches,
// every build, 1 and 2 threads (a thread's last item prefetches the other
// thread's first). Rows past the position hold NaN (check_every_variant).
TEST_P(SdpaTest, DecodeAcrossTileEdgesWhilePrefetchingTheNextHead) {
  for (const Shape& shape : {Shape{1, 12, 12, 1, 300, 64}, Shape{2, 12, 4, 1, 300, 64},
                             Shape{1, 8, 1, 1, 300, 64}}) {
    for (int position : {0, 127, 128, 255, 256, 299}) {
      for (ScalarType cache : {kF32, kF16}) {
        SCOPED_TRACE("Hq " + std::to_string(shape.hq) + ", Hkv " + std::to_string(shape.hkv) +
                     ", position " + std::to_string(position) +
                     (cache == kF16 ? ", float16" : ", float32"));
        check_every_variant(shape, cache, position);
      }
    }
  }
}

// ---- Float16 caches: rows written rounded to nearest even, read widened. ----

// Every build's narrowing gives the bits Half::from_float gives (round to
// nearest even, overflow to inf, subnormals, signed zeros; NaN stays NaN),
// over special values and many float bit patterns, at lengths that reach
// each build's vector and scalar tails.
TEST(SdpaHalfCacheTest, EveryBuildNarrowsLikeHalf) {
  std::vector<float> src = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65520.0f, -65520.0f, 1e9f,
                            INFINITY, -INFINITY, NAN, 6.1e-5f, 5.96e-8f, 2.98e-8f, 2.99e-8f,
                            1e-10f, 1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 0.333333f};
  uint32_t x = 12345;
  for (int i = 0; i < 4000; ++i) {
    x = x * 1664525u + 1013904223u;
    float f;
    // Exponents around float16's range (2^-30 .. 2^20), random mantissas and signs.
    const uint32_t bits = (x & 0x807fffffu) | ((97u + (x >> 8) % 50u) << 23);
    std::memcpy(&f, &bits, sizeof(f));
    src.push_back(f);
  }
  for (const SdpaVariant& variant : sdpa_variants()) {
    SCOPED_TRACE(variant.name);
    for (size_t n : {src.size(), size_t{3}, size_t{17}}) {
      std::vector<uint16_t> dst(n, 0xabcd);
      variant.narrow(src.data(), dst.data(), static_cast<int64_t>(n));
      for (size_t i = 0; i < n; ++i) {
        const uint16_t expected = Half::from_float(src[i]);
        if (std::isnan(src[i])) {
          EXPECT_TRUE(std::isnan(Half::to_float(dst[i]))) << i;
        } else {
          ASSERT_EQ(dst[i], expected) << "element " << i << " = " << src[i];
        }
      }
    }
  }
}

// Float16 caches, every build: every path, decode (T = 1), decode blocks
// (T = 19), prefill (T = 40, its tiles widened into a scratch: D = 200 gets
// 40 keys a tile), and heads past the prefill loop's (D = 300: attend_block).
TEST(SdpaHalfCacheTest, EveryVariantMatchesTheReferenceOnTheRoundedCache) {
  for (int rows : {1, 19, 40}) {
    for (int dim : {3, 17, 48, 72, 200, 300}) {
      SCOPED_TRACE("D = " + std::to_string(dim) + ", T = " + std::to_string(rows));
      check_every_variant(Shape{1, 6, 3, rows, 170, dim}, kF16);
    }
  }
}

// Through the kernel: a prefill then two decode steps on float16 caches,
// grouped-query, 1 and 2 threads (the fixture's). The new rows land in the
// caches rounded (bit for bit what Half gives), earlier rows stay, and
// every output matches the reference on the rounded caches.
TEST_P(SdpaTest, HalfCachesPrefillThenDecode) {
  for (int dim : {48, 200}) {
    SCOPED_TRACE("D = " + std::to_string(dim));
    const int cache_len = 60;
    TestTensor key_cache(kF16, {1, 2, cache_len, dim});
    TestTensor value_cache(kF16, {1, 2, cache_len, dim});
    ReferenceCache reference{{1, 4, 2, 0, cache_len, dim},
                             std::vector<double>(2 * cache_len * dim, 0.0),
                             std::vector<double>(2 * cache_len * dim, 0.0)};
    int start = 0;
    for (int rows : {40, 1, 1}) {
      SCOPED_TRACE("rows at " + std::to_string(start));
      reference.shape.t = rows;
      const std::vector<int64_t> pos = positions(start, rows);
      const uint64_t seed = 50 + static_cast<uint64_t>(start);
      TestTensor query(kF32, {1, 4, rows, dim}, random_values(4 * rows * dim, seed));
      TestTensor key(kF32, {1, 2, rows, dim}, random_values(2 * rows * dim, seed + 1));
      TestTensor value(kF32, {1, 2, rows, dim}, random_values(2 * rows * dim, seed + 2));
      TestTensor input_pos(kI64, {rows}, to_doubles(pos));
      TestTensor out(kF32, {1, 4, rows, dim});
      KernelArgs args{query.evalue(),     key.evalue(),       value.evalue(),
                      key_cache.evalue(), value_cache.evalue(), input_pos.evalue(),
                      EValue(0.125),      out.evalue(),       EValue()};
      ASSERT_TRUE(run_kernel(&sdpa_with_kv_cache_out, kOp, args).ok());
      const std::vector<double> expected =
          reference.step(query.values(), rounded_to_half(key.values()),
                         rounded_to_half(value.values()), pos, 0.125);
      EXPECT_EQ(key_cache.values(), reference.keys);
      EXPECT_EQ(value_cache.values(), reference.values);
      const std::vector<double> actual = out.values();
      for (size_t i = 0; i < actual.size(); ++i) ASSERT_NEAR(actual[i], expected[i], 2e-5) << i;
      start += rows;
    }
  }
}

// The first `minus_inf` cache positions hold -inf keys, so their scores are
// -inf; `rows` new rows follow them, each seeing all of those and finite
// keys after. Softmax gives the -inf keys weight 0 (the results are finite).
void check_minus_infinity_keys_get_zero_weight(int minus_inf, int rows) {
  const int cache = minus_inf + rows;
  const std::vector<int64_t> pos = positions(minus_inf, rows);
  TestTensor query(kF32, {1, 1, rows, 4});
  for (int64_t i = 0; i < query.numel(); ++i) query.set(i, 0.25 + 0.01 * static_cast<double>(i));
  TestTensor key(kF32, {1, 1, rows, 4}, random_values(rows * 4, 31));
  TestTensor value(kF32, {1, 1, rows, 4}, random_values(rows * 4, 32));
  TestTensor key_cache(kF32, {1, 1, cache, 4});
  TestTensor value_cache(kF32, {1, 1, cache, 4}, random_values(cache * 4, 33));
  for (int64_t i = 0; i < minus_inf * 4; ++i) key_cache.set(i, -INFINITY);
  TestTensor input_pos(kI64, {rows}, to_doubles(pos));
  TestTensor out(kF32, {1, 1, rows, 4});
  KernelArgs args{query.evalue(), key.evalue(), value.evalue(), key_cache.evalue(),
                  value_cache.evalue(), input_pos.evalue(), EValue(), out.evalue(),
                  EValue()};
  ASSERT_TRUE(run_kernel(&sdpa_with_kv_cache_out, kOp, args).ok());
  ReferenceCache reference{{1, 1, 1, rows, cache, 4}, key_cache.values(), value_cache.values()};
  const std::vector<double> expected =
      reference.step(query.values(), key.values(), value.values(), pos, 0.5);
  const std::vector<double> actual = out.values();
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_TRUE(std::isfinite(expected[i])) << i;
    ASSERT_NEAR(actual[i], expected[i], 2e-5) << i;
  }
}

TEST_P(SdpaTest, KeysScoringMinusInfinityGetZeroWeight) {
  // A whole first tile (128 keys) and more of -inf keys, 10 rows (blocks of 8).
  check_minus_infinity_keys_get_zero_weight(130, 10);
  // The prefill blocks (40 rows): a whole tile of 64 and more.
  check_minus_infinity_keys_get_zero_weight(90, 40);
}

TEST(SdpaPlanTest, BlocksShareKeyValueHeadsAndFillThePool) {
  SdpaProblem p{};
  p.batch = 1;
  // GPT-2 prefill: 12 groups of 128 rows, prefill blocks of 16 rows.
  p.q_heads = 12;
  p.kv_heads = 12;
  p.rows = 128;
  sdpa_plan_work(p, 2);
  EXPECT_EQ(p.rows_per_block, kSdpaPrefillRows);
  EXPECT_EQ(p.blocks_per_group, 8);
  EXPECT_EQ(sdpa_work_items(p), 96u);
  // Below kSdpaMinPrefillRows rows a group: decode's blocks of 8 at most.
  p.rows = kSdpaMinPrefillRows - 1;
  sdpa_plan_work(p, 2);
  EXPECT_EQ(p.rows_per_block, 8);
  EXPECT_EQ(p.blocks_per_group, 4);
  // Multi-query decode: 12 rows in one group, cut evenly for 2 threads.
  p.kv_heads = 1;
  p.rows = 1;
  sdpa_plan_work(p, 2);
  EXPECT_EQ(p.rows_per_block, 6);
  EXPECT_EQ(p.blocks_per_group, 2);
  // One row in all: one item whatever the threads.
  p.q_heads = 1;
  sdpa_plan_work(p, 4);
  EXPECT_EQ(sdpa_work_items(p), 1u);
  // Fewer groups than threads: rows split further.
  p.q_heads = 4;
  p.kv_heads = 2;
  p.rows = 3;  // 2 groups of 6 rows
  sdpa_plan_work(p, 8);
  EXPECT_EQ(p.blocks_per_group, 3);
  EXPECT_EQ(p.rows_per_block, 2);
}

// ---- Bad inputs: an error naming the argument; caches unchanged. ----

struct BadCall {
  std::vector<SizesType> query{1, 4, 3, 8};
  std::vector<SizesType> key{1, 2, 3, 8};
  std::vector<SizesType> value{1, 2, 3, 8};
  std::vector<SizesType> key_cache{1, 2, 8, 8};
  std::vector<SizesType> value_cache{1, 2, 8, 8};
  std::vector<SizesType> input_pos_sizes{3};
  std::vector<double> input_pos{2, 3, 4};
  std::vector<SizesType> out{1, 4, 3, 8};
  ScalarType query_dtype = kF32;
  ScalarType key_cache_dtype = kF32;
  ScalarType value_cache_dtype = kF32;
  ScalarType input_pos_dtype = kI64;
  ScalarType out_dtype = kF32;
  Layout key_layout;
  Layout out_layout;
  EValue scale;
  bool caches_unchanged = false;  // Set by run().

  Status run() {
    TestTensor q(query_dtype, query, random_values(count(query), 1));
    TestTensor k(kF32, key, random_values(count(key), 2), key_layout);
    TestTensor v(kF32, value, random_values(count(value), 3));
    TestTensor kc(key_cache_dtype, key_cache, random_values(count(key_cache), 4));
    TestTensor vc(value_cache_dtype, value_cache, random_values(count(value_cache), 5));
    TestTensor pos(input_pos_dtype, input_pos_sizes, input_pos);
    TestTensor o(out_dtype, out, {}, out_layout);
    const std::vector<double> kc_before = kc.values();
    const std::vector<double> vc_before = vc.values();
    KernelArgs args{q.evalue(),  k.evalue(),   v.evalue(), kc.evalue(), vc.evalue(),
                    pos.evalue(), scale,        o.evalue(), EValue()};
    const Status status = run_kernel(&sdpa_with_kv_cache_out, kOp, args);
    caches_unchanged = kc.values() == kc_before && vc.values() == vc_before;
    return status;
  }

  static size_t count(const std::vector<SizesType>& sizes) {
    size_t n = 1;
    for (SizesType s : sizes) n *= static_cast<size_t>(s);
    return n;
  }
};

void expect_error(BadCall call, Error code, const std::string& message) {
  const Status status = call.run();
  EXPECT_TRUE(call.caches_unchanged) << "a cache was written before the error";
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), code) << status.message();
  EXPECT_THAT(status.message(), HasSubstr(kOp));
  EXPECT_THAT(status.message(), HasSubstr(message));
}

TEST(SdpaErrorTest, TheUnmodifiedCallSucceedsAndWrites) {
  // The baseline every error case below changes one thing of.
  BadCall call;
  const Status status = call.run();
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_FALSE(call.caches_unchanged);
}

TEST(SdpaErrorTest, WrongArgumentCount) {
  TestTensor t(kF32, {1, 1, 1, 1});
  KernelArgs args{t.evalue(), t.evalue(), t.evalue()};
  const Status status = run_kernel(&sdpa_with_kv_cache_out, kOp, args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "expected 9 arguments"));
}

TEST(SdpaErrorTest, Dtypes) {
  BadCall half_query;
  half_query.query_dtype = ScalarType::kHalf;
  expect_error(half_query, Error::kInvalidType, "'query' has dtype float16, expected float32");
  BadCall double_cache;
  double_cache.key_cache_dtype = ScalarType::kDouble;
  expect_error(double_cache, Error::kInvalidType,
               "'key_cache' has dtype float64, expected float32");
  BadCall half_key_cache_only;  // float16 caches come in pairs
  half_key_cache_only.key_cache_dtype = ScalarType::kHalf;
  expect_error(half_key_cache_only, Error::kInvalidType,
               "'value_cache' has dtype float32, expected float16 like 'key_cache'");
  BadCall int32_pos;
  int32_pos.input_pos_dtype = ScalarType::kInt;
  expect_error(int32_pos, Error::kInvalidType, "'input_pos' has dtype int32, expected int64");
  BadCall bf16_out;
  bf16_out.out_dtype = ScalarType::kBFloat16;
  expect_error(bf16_out, Error::kInvalidType, "'out' has dtype bfloat16, expected float32");
}

TEST(SdpaErrorTest, Ranks) {
  BadCall query3d;
  query3d.query = {4, 3, 8};
  expect_error(query3d, Error::kInvalidArgument,
               "'query' must be [B, Hq, T, D] (4-D), got shape [4, 3, 8] (3-D)");
  BadCall pos2d;
  pos2d.input_pos_sizes = {1, 3};
  expect_error(pos2d, Error::kInvalidArgument, "'input_pos' must be [T] (1-D)");
}

TEST(SdpaErrorTest, Shapes) {
  BadCall key_rows;
  key_rows.key = {1, 2, 4, 8};
  expect_error(key_rows, Error::kInvalidArgument,
               "'key' has shape [1, 2, 4, 8], expected [1, 2, 3, 8]");
  BadCall value_dim;
  value_dim.value = {1, 2, 3, 7};
  expect_error(value_dim, Error::kInvalidArgument,
               "'value' has shape [1, 2, 3, 7], expected [1, 2, 3, 8]");
  BadCall cache_dim;
  cache_dim.value_cache = {1, 2, 8, 9};
  expect_error(cache_dim, Error::kInvalidArgument,
               "'value_cache' has shape [1, 2, 8, 9], expected [1, 2, 8, 8]");
  BadCall cache_batch;
  cache_batch.key_cache = {2, 2, 8, 8};
  expect_error(cache_batch, Error::kInvalidArgument,
               "'key_cache' has shape [2, 2, 8, 8], expected [1, 2, 8, 8]");
  BadCall short_pos;
  short_pos.input_pos_sizes = {2};
  short_pos.input_pos = {0, 1};
  expect_error(short_pos, Error::kInvalidArgument,
               "'input_pos' has 2 positions, expected T = 3");
}

TEST(SdpaErrorTest, HeadsNotAMultiple) {
  BadCall call;
  call.query = {1, 3, 3, 8};
  call.out = {1, 3, 3, 8};
  expect_error(call, Error::kInvalidArgument,
               "query has 3 heads, which is not a multiple of the 2 key/value heads");
  BadCall no_heads;
  no_heads.key = {1, 0, 3, 8};
  no_heads.value = {1, 0, 3, 8};
  no_heads.key_cache = {1, 0, 8, 8};
  no_heads.value_cache = {1, 0, 8, 8};
  expect_error(no_heads, Error::kInvalidArgument, "'key_cache' has 0 key/value heads");
}

TEST(SdpaErrorTest, MoreRowsThanCachePositions) {
  BadCall call;
  call.key_cache = {1, 2, 2, 8};
  call.value_cache = {1, 2, 2, 8};
  call.input_pos = {0, 1, 1};
  expect_error(call, Error::kInvalidArgument,
               "query has T = 3 rows, more than the S = 2 positions of key_cache");
}

TEST(SdpaErrorTest, PositionsOutsideTheCache) {
  BadCall at_end;
  at_end.input_pos = {6, 7, 8};
  expect_error(at_end, Error::kInvalidArgument, "input_pos[2] = 8 is outside [0, S = 8)");
  BadCall negative;
  negative.input_pos = {0, -1, 1};
  expect_error(negative, Error::kInvalidArgument, "input_pos[1] = -1 is outside [0, S = 8)");
  BadCall huge;
  huge.input_pos = {1e18, 0, 1};
  expect_error(huge, Error::kInvalidArgument, "input_pos[0] = 1000000000000000000 is outside");
}

TEST(SdpaErrorTest, Scale) {
  BadCall boolean;
  boolean.scale = EValue(true);
  // The schema (float? scale) refuses these before the kernel runs.
  expect_error(boolean, Error::kInvalidType, "argument 'scale' must be a float?, got Bool");
  BadCall integer;
  integer.scale = EValue(int64_t{1});
  expect_error(integer, Error::kInvalidType, "argument 'scale' must be a float?, got Int");
  BadCall text;
  text.scale = EValue(std::string_view("x"));
  expect_error(text, Error::kInvalidType, "argument 'scale'");
}

TEST(SdpaErrorTest, Layouts) {
  BadCall key_transposed;
  key_transposed.key_layout = dim_order({0, 1, 3, 2});
  expect_error(key_transposed, Error::kInvalidArgument,
               "'key' has stride 3 in its last dimension (D), expected 1");
  BadCall out_transposed;
  out_transposed.out_layout = dim_order({0, 1, 3, 2});
  expect_error(out_transposed, Error::kInvalidArgument,
               "'out' has dim order ending in 2, expected 3");
}

TEST(SdpaErrorTest, OutThatCannotBeResized) {
  BadCall call;
  call.out = {1, 4, 2, 8};  // Static: its sizes may not change.
  expect_error(call, Error::kInvalidArgument, "'out'");
}

TEST(SdpaErrorTest, TensorWithoutData) {
  TestTensor q(kF32, {1, 1, 1, 4});
  TestTensor kc(kF32, {1, 1, 4, 4});
  TestTensor vc(kF32, {1, 1, 4, 4});
  TestTensor pos(kI64, {1}, {0});
  TestTensor o(kF32, {1, 1, 1, 4});
  SizesType sizes[4] = {1, 1, 1, 4};
  DimOrderType order[4] = {0, 1, 2, 3};
  StridesType strides[4] = {4, 4, 4, 1};
  TensorImpl empty(kF32, 4, sizes, nullptr, order, strides);
  KernelArgs args{q.evalue(),  EValue(Tensor(&empty)), EValue(Tensor(&empty)), kc.evalue(),
                  vc.evalue(), pos.evalue(),           EValue(),                o.evalue(),
                  EValue()};
  const Status status = run_kernel(&sdpa_with_kv_cache_out, kOp, args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "'key' has 4 elements but no data"));
}

}  // namespace
}  // namespace torchlight::llm
