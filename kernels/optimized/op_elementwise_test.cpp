// The optimized float32 add / sub / mul / div and permute_copy kernels
// (op_arith.cpp, op_permute_copy.cpp): at 1 and 2 pool threads, sizes
// around the split threshold (pool_split.h) and odd ones, their bytes equal
// a per-element float reference and the portable kernels' (serial) result.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/pool_split.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::optimized {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::random_float_values;
using portable::kernel_test::run_kernel;
using portable::kernel_test::TestTensor;

constexpr ScalarType kF32 = ScalarType::kFloat;

uint32_t bits_of(double v) {
  const float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// Element counts: small (serial), around 2 x kMinSplitBytes of floats (the
// split starts there while the workers spin), an LLM prefill's (128 x 288,
// 128 x 768), odd ones, and past kAlwaysSplitBytes (split whatever the
// workers do, so a 2-thread run always splits these).
std::vector<int64_t> element_counts() {
  const int64_t split = 2 * kMinSplitBytes / 4;
  const int64_t always = kAlwaysSplitBytes / 4;
  return {1, 15, 17, 1000, split - 1, split, split + 1, split + 17, 128 * 288, 128 * 768 + 3,
          200003, always - 1, always, always + 17, 300007};
}

class ElementwiseTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { threadpool::set_num_threads(GetParam()); }
  void TearDown() override { threadpool::set_num_threads(0); }
};

INSTANTIATE_TEST_SUITE_P(Threads, ElementwiseTest, ::testing::Values(size_t{1}, size_t{2}),
                         [](const auto& info) { return "threads" + std::to_string(info.param); });

struct ArithCase {
  const char* name;
  KernelFunction optimized;
  KernelFunction portable;
  bool alpha;  // add and sub take alpha before out.
  float (*reference)(float a, float b, float alpha);
};

const ArithCase kArith[] = {
    {"aten::add.out", &add_out, &portable::add_out, true,
     [](float a, float b, float alpha) { return a + alpha * b; }},
    {"aten::sub.out", &sub_out, &portable::sub_out, true,
     [](float a, float b, float alpha) { return a - alpha * b; }},
    {"aten::mul.out", &mul_out, &portable::mul_out, false,
     [](float a, float b, float) { return a * b; }},
    {"aten::div.out", &div_out, &portable::div_out, false,
     [](float a, float b, float) { return a / b; }},
};

// Runs `kernel` on self [n] and other ([n], or [1] when broadcast) into a
// fresh out; returns out's values.
std::vector<double> run_arith(const ArithCase& c, KernelFunction kernel, int64_t n,
                              const std::vector<double>& a, const std::vector<double>& b,
                              bool broadcast, double alpha) {
  TestTensor self(kF32, {static_cast<SizesType>(n)}, a);
  TestTensor other(kF32, {broadcast ? SizesType{1} : static_cast<SizesType>(n)},
                   broadcast ? std::vector<double>{b[0]} : b);
  TestTensor out(kF32, {static_cast<SizesType>(n)});
  std::vector<EValue> values{self.evalue(), other.evalue()};
  if (c.alpha) values.push_back(EValue(alpha));
  values.push_back(out.evalue());
  values.push_back(EValue());
  KernelArgs args(std::move(values));
  const Status status = run_kernel(kernel, c.name, args);
  EXPECT_TRUE(status.ok()) << c.name << ": " << status.message();
  return out.values();
}

TEST_P(ElementwiseTest, ArithMatchesPerElementReferenceAndPortableBitForBit) {
  for (const ArithCase& c : kArith) {
    for (const int64_t n : element_counts()) {
      for (const bool broadcast : {false, true}) {
        const std::vector<double> a = random_float_values(n, static_cast<uint32_t>(n));
        const std::vector<double> b = random_float_values(n, static_cast<uint32_t>(n + 7));
        const double alpha = c.alpha ? 1.5 : 1.0;
        const std::vector<double> got = run_arith(c, c.optimized, n, a, b, broadcast, alpha);
        const std::vector<double> serial = run_arith(c, c.portable, n, a, b, broadcast, alpha);
        ASSERT_EQ(got.size(), static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) {
          const float expected = c.reference(static_cast<float>(a[i]),
                                             static_cast<float>(broadcast ? b[0] : b[i]),
                                             static_cast<float>(alpha));
          ASSERT_EQ(bits_of(got[i]), bits_of(expected))
              << c.name << " n " << n << (broadcast ? " broadcast" : "") << " element " << i;
          ASSERT_EQ(bits_of(got[i]), bits_of(serial[i])) << c.name << " n " << n << " element " << i;
        }
      }
    }
  }
}

// permute_copy of `sizes` by `dims` with the given kernel; out's values.
std::vector<double> run_permute(KernelFunction kernel, const std::vector<SizesType>& sizes,
                                const std::vector<int64_t>& dims, const std::vector<double>& x) {
  std::vector<SizesType> out_sizes;
  for (int64_t d : dims) out_sizes.push_back(sizes[static_cast<size_t>(d)]);
  TestTensor self(kF32, sizes, x);
  TestTensor out(kF32, out_sizes);
  std::vector<EValue> items;
  for (int64_t d : dims) items.push_back(EValue(d));
  std::vector<EValue*> pointers;
  for (EValue& item : items) pointers.push_back(&item);
  std::vector<int64_t> unboxed(dims.size());
  KernelArgs args{self.evalue(),
                  EValue(BoxedList<int64_t>(pointers.data(), unboxed.data(), dims.size())),
                  out.evalue(), EValue()};
  const Status status = run_kernel(kernel, "aten::permute_copy.out", args);
  EXPECT_TRUE(status.ok()) << status.message();
  return out.values();
}

TEST_P(ElementwiseTest, PermuteCopyMatchesIndexReferenceAndPortableBitForBit) {
  struct Case {
    std::vector<SizesType> sizes;
    std::vector<int64_t> dims;
  };
  const Case cases[] = {
      {{1, 128, 6, 48}, {0, 2, 1, 3}},  // stories15m's attention: [B, T, H, D] -> [B, H, T, D].
      {{1, 6, 128, 48}, {0, 2, 1, 3}},  // and back.
      {{1, 65, 6, 48}, {0, 2, 1, 3}},
      {{1, 63, 12, 64}, {0, 2, 1, 3}},
      {{3, 37, 5, 7}, {3, 1, 0, 2}},
      {{2, 301, 97}, {2, 0, 1}},        // runs of one element, past the threshold.
      {{2, 9, 5, 37}, {0, 2, 1, 3}},    // runs of 148 bytes: two lines and a tail.
      {{2, 9, 3, 13}, {0, 2, 1, 3}},    // runs of 52 bytes: a tail alone.
      {{2, 9, 3, 150}, {0, 2, 1, 3}},   // runs of 600 bytes: one memcpy each.
      {{7, 5}, {1, 0}},
      {{5000, 9}, {1, 0}},
      {{1, 1024, 8, 37}, {0, 2, 1, 3}},  // 1.2 MB: split whatever the workers do.
      {{70001, 5}, {1, 0}},
  };
  for (const Case& c : cases) {
    int64_t n = 1;
    for (SizesType s : c.sizes) n *= s;
    const std::vector<double> x = random_float_values(n, static_cast<uint32_t>(n));
    const std::vector<double> got = run_permute(&permute_copy_out, c.sizes, c.dims, x);
    const std::vector<double> serial = run_permute(&portable::permute_copy_out, c.sizes, c.dims, x);
    ASSERT_EQ(got.size(), static_cast<size_t>(n));
    // out index -> self index through the permutation.
    const size_t rank = c.sizes.size();
    std::vector<int64_t> self_strides(rank, 1);
    for (size_t d = rank - 1; d-- > 0;) self_strides[d] = self_strides[d + 1] * c.sizes[d + 1];
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i;
      int64_t source = 0;
      for (size_t d = rank; d-- > 0;) {
        const int64_t size = c.sizes[static_cast<size_t>(c.dims[d])];
        source += (rest % size) * self_strides[static_cast<size_t>(c.dims[d])];
        rest /= size;
      }
      ASSERT_EQ(bits_of(got[i]), bits_of(x[static_cast<size_t>(source)])) << "element " << i;
      ASSERT_EQ(bits_of(got[i]), bits_of(serial[i])) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace torchlight::optimized
