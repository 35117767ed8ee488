// torchlight::rope_sdpa_with_kv_cache.out against the double-precision
// reference (sdpa_reference_test_util.h) fed the rotary embedding computed here
// in double: [B, T, H, D] tensors, ordinary and grouped-query attention,
// decode and prefill, odd head sizes, batches, strided inputs, a prefill
// then decodes (checking both caches after every call), 1 and 2 threads;
// the call without scratch; and bad inputs, which fail naming the argument
// and write nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/sdpa_reference_test_util.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::llm {
namespace {

using ::torchlight::testing::ErrorIs;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::Layout;
using portable::kernel_test::run_kernel;
using portable::kernel_test::strides;
using portable::kernel_test::TestTensor;
using sdpa_test::idx;
using sdpa_test::positions;
using sdpa_test::random_values;
using sdpa_test::ReferenceCache;
using sdpa_test::Shape;
using sdpa_test::stale_caches;
using sdpa_test::StaleCaches;
using sdpa_test::expect_out_near;
using sdpa_test::to_doubles;

constexpr const char* kOp = "torchlight::rope_sdpa_with_kv_cache.out";
constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kI64 = ScalarType::kLong;

size_t numel(int a, int b, int c, int d) { return static_cast<size_t>(a) * b * c * d; }

// x [B, T, H, D] rotated pair by pair in double, returned as [B, H, T, D]
// (the reference's layout).
std::vector<double> rotate_to_bhtd(const std::vector<double>& x, int b_size, int t_size, int heads,
                                   int dim, const std::vector<double>& cos,
                                   const std::vector<double>& sin) {
  const std::vector<int> bthd{b_size, t_size, heads, dim};
  const std::vector<int> bhtd{b_size, heads, t_size, dim};
  std::vector<double> out(x.size());
  for (int b = 0; b < b_size; ++b) {
    for (int t = 0; t < t_size; ++t) {
      for (int h = 0; h < heads; ++h) {
        for (int p = 0; p < dim / 2; ++p) {
          const double c = cos[t * (dim / 2) + p];
          const double s = sin[t * (dim / 2) + p];
          const double x0 = x[idx(bthd, {b, t, h, 2 * p})];
          const double x1 = x[idx(bthd, {b, t, h, 2 * p + 1})];
          out[idx(bhtd, {b, h, t, 2 * p})] = x0 * c - x1 * s;
          out[idx(bhtd, {b, h, t, 2 * p + 1})] = x0 * s + x1 * c;
        }
      }
    }
  }
  return out;
}

// [B, T, H, D] -> [B, H, T, D] without rotation.
std::vector<double> to_bhtd(const std::vector<double>& x, int b_size, int t_size, int heads,
                            int dim) {
  std::vector<double> ones(static_cast<size_t>(t_size) * (dim / 2), 1.0);
  std::vector<double> zeros(ones.size(), 0.0);
  if (dim % 2 == 0) return rotate_to_bhtd(x, b_size, t_size, heads, dim, ones, zeros);
  std::vector<double> out(x.size());
  for (int b = 0; b < b_size; ++b)
    for (int t = 0; t < t_size; ++t)
      for (int h = 0; h < heads; ++h)
        for (int d = 0; d < dim; ++d)
          out[idx({b_size, heads, t_size, dim}, {b, h, t, d})] =
              x[idx({b_size, t_size, heads, dim}, {b, t, h, d})];
  return out;
}

// Angles' cos and sin [T, D/2], as floats.
void tables(int t_size, int dim, uint64_t seed, std::vector<double>* cos,
            std::vector<double>* sin) {
  const std::vector<double> angles = random_values(static_cast<size_t>(t_size) * (dim / 2), seed,
                                                   3.0);
  cos->clear();
  sin->clear();
  for (double a : angles) {
    cos->push_back(static_cast<float>(std::cos(a)));
    sin->push_back(static_cast<float>(std::sin(a)));
  }
}

// One call's tensors ([B, T, H, D] query, key, value and out), with caches
// that persist across calls.
class RopeAttention {
 public:
  RopeAttention(Shape shape, uint64_t seed, Layout step_layout = {})
      : shape_(shape), seed_(seed), step_layout_(std::move(step_layout)) {
    // Stale cache contents: the kernel must overwrite or ignore them.
    caches_ = stale_caches(shape, seed);
  }

  void step_and_check(const std::vector<int64_t>& pos, EValue scale, double tolerance = 2e-5) {
    Shape& s = shape_;
    s.t = static_cast<int>(pos.size());
    caches_.reference.shape.t = s.t;
    ++calls_;
    const uint64_t seed = seed_ * 31 + calls_ * 5;
    const std::vector<double> q = random_values(numel(s.b, s.t, s.hq, s.d), seed);
    const std::vector<double> k = random_values(numel(s.b, s.t, s.hkv, s.d), seed + 1);
    const std::vector<double> v = random_values(numel(s.b, s.t, s.hkv, s.d), seed + 2);
    std::vector<double> cos_values, sin_values;
    tables(s.t, s.d, seed + 3, &cos_values, &sin_values);
    TestTensor query(kF32, {s.b, s.t, s.hq, s.d}, q, layout_for(s.hq));
    TestTensor key(kF32, {s.b, s.t, s.hkv, s.d}, k, layout_for(s.hkv));
    TestTensor value(kF32, {s.b, s.t, s.hkv, s.d}, v, layout_for(s.hkv));
    TestTensor input_pos(kI64, {s.t}, to_doubles(pos));
    TestTensor cos(kF32, {s.t, s.d / 2}, cos_values);
    TestTensor sin(kF32, {s.t, s.d / 2}, sin_values);
    TestTensor out(kF32, {s.b, s.t, s.hq, s.d});
    KernelArgs args{query.evalue(),       key.evalue(),   value.evalue(),
                    caches_.key->evalue(), caches_.value->evalue(), input_pos.evalue(),
                    cos.evalue(),         sin.evalue(),   scale,
                    out.evalue(),         EValue()};
    const Status status = run_kernel(&rope_sdpa_with_kv_cache_out, kOp, args);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_TRUE(args[10].is_tensor());
    EXPECT_EQ(args[10].to_tensor().impl(), out.tensor().impl());

    const double scale_value = scale.is_none() ? 1.0 / std::sqrt(static_cast<double>(s.d))
                                               : static_cast<double>(static_cast<float>(
                                                     scale.scalar_as_double()));
    const std::vector<double> expected = caches_.reference.step(
        rotate_to_bhtd(q, s.b, s.t, s.hq, s.d, cos_values, sin_values),
        rotate_to_bhtd(k, s.b, s.t, s.hkv, s.d, cos_values, sin_values),
        to_bhtd(v, s.b, s.t, s.hkv, s.d), pos, scale_value);
    const std::vector<double> actual = to_bhtd(out.values(), s.b, s.t, s.hq, s.d);
    expect_out_near(actual, expected, tolerance, calls_);
    if (::testing::Test::HasFatalFailure()) return;
    // Keys rotated in float32 against double (|x| < 1: within 2^-23 or so);
    // values copied exactly; every other row untouched.
    const std::vector<double> keys = caches_.key->values();
    for (size_t i = 0; i < keys.size(); ++i) {
      ASSERT_NEAR(keys[i], caches_.reference.keys[i], 1e-6) << "key_cache element " << i;
    }
    EXPECT_EQ(caches_.value->values(), caches_.reference.values) << "value_cache after call " << calls_;
  }

 private:
  // Strided steps: each position's heads sit in a row twice as wide (as a
  // slice of a fused q/k/v would).
  Layout layout_for(int heads) const {
    if (step_layout_.strides.empty()) return {};
    const Shape& s = shape_;
    return strides({static_cast<StridesType>(s.t * 2 * heads * s.d),
                    static_cast<StridesType>(2 * heads * s.d), static_cast<StridesType>(s.d), 1});
  }

  Shape shape_;
  uint64_t seed_;
  Layout step_layout_;
  int calls_ = 0;
  StaleCaches caches_;
};

class RopeSdpaTest : public sdpa_test::PoolThreadsTest {};

INSTANTIATE_TEST_SUITE_P(Threads, RopeSdpaTest, ::testing::Values(size_t{1}, size_t{2}),
                         [](const auto& info) { return "threads" + std::to_string(info.param); });

TEST_P(RopeSdpaTest, DecodeOrdinaryAttention) {
  RopeAttention a({1, 4, 4, 1, 80, 64}, 1);
  a.step_and_check({77}, EValue());
}

TEST_P(RopeSdpaTest, PrefillThenDecodesKeepTheCaches) {
  RopeAttention a({1, 6, 6, 1, 200, 48}, 2);  // stories15m's heads
  a.step_and_check(positions(0, 130), EValue());
  for (int64_t p = 130; p < 133; ++p) a.step_and_check({p}, EValue());
}

TEST_P(RopeSdpaTest, GroupedQueryAndMultiQuery) {
  for (int hkv : {2, 1}) {
    SCOPED_TRACE("Hkv = " + std::to_string(hkv));
    RopeAttention a({1, 8, hkv, 1, 64, 32}, 3 + hkv);
    a.step_and_check(positions(0, 40), EValue());
    a.step_and_check({40}, EValue());
  }
}

TEST_P(RopeSdpaTest, OddPairCountsAndSmallHeads) {
  for (int d : {2, 6, 18, 34, 66}) {
    SCOPED_TRACE("D = " + std::to_string(d));
    RopeAttention a({1, 4, 2, 1, 150, d}, 7 + d);
    a.step_and_check(positions(130, 3), EValue());
    a.step_and_check({133}, EValue());
  }
}

TEST_P(RopeSdpaTest, BatchOfTwoAndExplicitScale) {
  RopeAttention a({2, 4, 2, 1, 40, 12}, 8);
  a.step_and_check(positions(0, 24), EValue(0.3));
  a.step_and_check({24}, EValue());
}

TEST_P(RopeSdpaTest, StridedQueryKeyAndValue) {
  RopeAttention a({2, 4, 2, 1, 40, 8}, 9, strides({1}));
  a.step_and_check(positions(0, 20), EValue());
  a.step_and_check({20}, EValue());
}

// The tensors of one small call, for the error tests; a test replaces one.
struct SmallCall {
  using Ptr = std::unique_ptr<TestTensor>;
  static Ptr make(ScalarType dtype, std::vector<SizesType> sizes, std::vector<double> values = {}) {
    return std::make_unique<TestTensor>(dtype, std::move(sizes), std::move(values));
  }
  Ptr query = make(kF32, {1, 2, 2, 4}, random_values(16, 1));
  Ptr key = make(kF32, {1, 2, 1, 4}, random_values(8, 2));
  Ptr value = make(kF32, {1, 2, 1, 4}, random_values(8, 3));
  Ptr key_cache = make(kF32, {1, 1, 6, 4}, random_values(24, 4));
  Ptr value_cache = make(kF32, {1, 1, 6, 4}, random_values(24, 5));
  Ptr input_pos = make(kI64, {2}, {0, 1});
  Ptr cos = make(kF32, {2, 2}, {1, 1, 1, 1});
  Ptr sin = make(kF32, {2, 2}, {0, 0, 0, 0});
  Ptr out = make(kF32, {1, 2, 2, 4});

  KernelArgs args() {
    return KernelArgs{query->evalue(), key->evalue(),       value->evalue(),
                      key_cache->evalue(), value_cache->evalue(), input_pos->evalue(),
                      cos->evalue(),   sin->evalue(),       EValue(),
                      out->evalue(),   EValue()};
  }
};

void expect_failure_writes_nothing(SmallCall& call, const char* message, Error code) {
  const std::vector<double> keys = call.key_cache->values();
  const std::vector<double> values = call.value_cache->values();
  KernelArgs args = call.args();
  EXPECT_THAT(run_kernel(&rope_sdpa_with_kv_cache_out, kOp, args), ErrorIs(code, message));
  EXPECT_EQ(call.key_cache->values(), keys);
  EXPECT_EQ(call.value_cache->values(), values);
}

TEST(RopeSdpaErrors, TheSmallCallRuns) {
  SmallCall call;
  KernelArgs args = call.args();
  const Status status = run_kernel(&rope_sdpa_with_kv_cache_out, kOp, args);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(RopeSdpaErrors, OddHeadSize) {
  SmallCall call;
  call.query = SmallCall::make(kF32, {1, 2, 2, 3});
  expect_failure_writes_nothing(call, "head size D = 3, expected an even size",
                                Error::kInvalidArgument);
}

TEST(RopeSdpaErrors, TablesOfTheWrongShape) {
  SmallCall call;
  call.sin = SmallCall::make(kF32, {2, 3});
  expect_failure_writes_nothing(call, "argument 'sin' has shape [2, 3], expected [T, D / 2] = [2, 2]",
                                Error::kInvalidArgument);
}

TEST(RopeSdpaErrors, KeyOfTheWrongLayout) {
  SmallCall call;  // [B, Hkv, T, D] instead of [B, T, Hkv, D]
  call.key = SmallCall::make(kF32, {1, 1, 2, 4});
  expect_failure_writes_nothing(call, "argument 'key' has shape [1, 1, 2, 4], expected [1, 2, 1, 4]",
                                Error::kInvalidArgument);
}

TEST(RopeSdpaErrors, PositionOutsideTheCache) {
  SmallCall call;
  call.input_pos->set(1, 6);
  expect_failure_writes_nothing(call, "input_pos[1] = 6 is outside [0, S = 6)",
                                Error::kInvalidArgument);
}

TEST(RopeSdpaErrors, IntegerTables) {
  SmallCall call;
  call.cos = SmallCall::make(kI64, {2, 2});
  expect_failure_writes_nothing(call, "argument 'cos' has dtype", Error::kInvalidType);
}

TEST(RopeSdpaErrors, NoScratchIsAnErrorNotACrash) {
  // Called without prepare, without the method's workspace or a temp
  // allocator: nothing to rotate into.
  SmallCall call;
  const std::vector<double> keys = call.key_cache->values();
  KernelArgs args = call.args();
  KernelContext ctx(nullptr, nullptr, kOp);
  rope_sdpa_with_kv_cache_out(ctx, args.span());
  EXPECT_THAT(ctx.status(), ErrorIs(Error::kMemoryAllocationFailed, "no scratch"));
  EXPECT_EQ(call.key_cache->values(), keys);
}

TEST(RopeSdpaErrors, TheTempAllocatorServesACallWithoutPrepare) {
  SmallCall call;
  KernelArgs args = call.args();
  alignas(64) static uint8_t memory[4096];
  MemoryAllocator temp(memory, sizeof(memory));
  KernelContext ctx(&temp, nullptr, kOp);
  rope_sdpa_with_kv_cache_out(ctx, args.span());
  EXPECT_TRUE(ctx.status().ok()) << ctx.status().message();
  // cos 1, sin 0: the rotation is the identity, so the cache holds the key.
  EXPECT_EQ(call.key_cache->values()[0], call.key->values()[0]);
}

}  // namespace
}  // namespace torchlight::llm
