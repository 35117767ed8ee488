// torchlight::linear_4w.out (op_linear_4w.cpp, linear_4w.h): its loops
// against a float64 reference of the decomposed 4w graph, every
// instruction-set build this CPU runs identical to the generic loop, the op
// (decode loops and the dequantized GEMM, one and two threads) against the
// same reference, and prepare's load-time errors naming the argument.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/quantized/linear_4w.h"
#include "kernels/quantized/quant_isa.h"
#include "kernels/quantized/quantized_kernels.h"

namespace torchlight {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;
using quantized::QuantIsa;

const Kernel& linear_4w_kernel() {
  for (const Kernel& k : quantized_kernels()) {
    if (std::strcmp(k.name, "torchlight::linear_4w.out") == 0) return k;
  }
  ADD_FAILURE() << "no kernel torchlight::linear_4w.out";
  return quantized_kernels()[0];
}

struct Case4w {
  int64_t k, n, group;
  std::vector<float> x;          // [rows, K]
  std::vector<uint8_t> packed;   // [N, K / 2]
  std::vector<float> scales;     // [N, K / group]
  std::vector<float> bias;       // [N]
};

Case4w make_case(int64_t rows, int64_t k, int64_t n, int64_t group, uint32_t seed) {
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  Case4w c{k, n, group, std::vector<float>(static_cast<size_t>(rows * k)),
           std::vector<uint8_t>(static_cast<size_t>(n * k / 2)),
           std::vector<float>(static_cast<size_t>(n * (k / group))),
           std::vector<float>(static_cast<size_t>(n))};
  for (auto& v : c.x) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 8192;
  for (auto& v : c.packed) v = static_cast<uint8_t>(next() >> 24);
  // Both ends of int4 (-8 and 7, stored 0 and 15) in the first two columns.
  std::fill(c.packed.begin(), c.packed.begin() + k / 2, uint8_t{0x00});
  if (n > 1) std::fill(c.packed.begin() + k / 2, c.packed.begin() + k, uint8_t{0xFF});
  for (auto& v : c.scales) v = static_cast<float>((next() >> 20) + 1) / 65536;
  for (auto& v : c.bias) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 4096;
  return c;
}

// The decomposed graph's weight: float32(q * scale), as dequantize_per_channel_group.
float weight_at(const Case4w& c, int64_t n, int64_t i) {
  const uint8_t byte = c.packed[static_cast<size_t>(n * c.k / 2 + i / 2)];
  const int q = (i % 2 == 0 ? byte >> 4 : byte & 0x0F) - 8;
  return static_cast<float>(q) * c.scales[static_cast<size_t>(n * (c.k / c.group) + i / c.group)];
}

// out[r, n] against sum x w + bias in float64: float rounding of a K-term
// sum, |err| <= 1e-5 * sum |x w| + |bias| * 2^-23.
void expect_near_reference(const Case4w& c, int64_t rows, const float* out, bool with_bias,
                           const std::string& what) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t n = 0; n < c.n; ++n) {
      double sum = 0, magnitude = 0;
      for (int64_t i = 0; i < c.k; ++i) {
        const double p = static_cast<double>(c.x[static_cast<size_t>(r * c.k + i)]) * weight_at(c, n, i);
        sum += p;
        magnitude += std::abs(p);
      }
      const double b = with_bias ? c.bias[static_cast<size_t>(n)] : 0.0;
      ASSERT_NEAR(out[r * c.n + n], sum + b, 1e-5 * magnitude + std::abs(b) * 0x1p-23)
          << what << " row " << r << " column " << n;
    }
  }
}

quantized::Rows4w block_of(const Case4w& c, int rows, bool with_bias, float* out) {
  quantized::Rows4w block{};
  block.x = c.x.data();
  block.rows = rows;
  block.weight = c.packed.data();
  block.w_scales = c.scales.data();
  block.bias = with_bias ? c.bias.data() : nullptr;
  block.k = c.k;
  block.group = c.group;
  block.n = c.n;
  block.out = out;
  return block;
}

template <typename T>
void fill(TestTensor* tensor, const std::vector<T>& values) {
  for (size_t i = 0; i < values.size(); ++i) tensor->set(static_cast<int64_t>(i), values[i]);
}

// The generic loop (any even group) against float64; every ISA build
// (group % 32 == 0) gives the generic loop's floats bit for bit, also on
// column ranges that start and end off the 16-column chunks.
TEST(Linear4wTest, LoopsMatchReferenceAndEveryIsaIsIdentical) {
  struct Shape {
    int64_t k, group;
  };
  const Shape shapes[] = {{64, 32}, {288, 32}, {256, 64}, {384, 128}, {512, 256}, {12, 6}, {10, 2}};
  constexpr int64_t kN = 21;
  uint32_t seed = 99;
  for (const Shape& s : shapes) {
    const Case4w c = make_case(quantized::kRows4w, s.k, kN, s.group, seed++);
    for (bool with_bias : {false, true}) {
      for (int rows = 1; rows <= quantized::kRows4w; ++rows) {
        const std::string what = "k " + std::to_string(s.k) + " group " + std::to_string(s.group) +
                                 " rows " + std::to_string(rows);
        std::vector<float> want(static_cast<size_t>(rows * kN));
        quantized::linear_4w_columns_generic(block_of(c, rows, with_bias, want.data()), 0, kN);
        expect_near_reference(c, rows, want.data(), with_bias, what);
        for (const QuantIsa isa : {QuantIsa::kAvx2, QuantIsa::kAvxVnni, QuantIsa::kAvx512Vnni}) {
          if (!quantized::cpu_has_quant_isa(isa)) continue;
          std::vector<float> got(want.size(), NAN);
          const quantized::Columns4wFn columns = quantized::select_linear_4w(s.group, isa);
          columns(block_of(c, rows, with_bias, got.data()), 0, 5);
          columns(block_of(c, rows, with_bias, got.data()), 5, kN);
          EXPECT_EQ(got, want) << what << " on " << quantized::quant_isa_name(isa);
        }
      }
    }
  }
}

// The op as a program runs it (prepared, method memory for scratch): rows
// of one block (the loops) and of many (the dequantized GEMM from 64
// rows), one and two threads, batched input, against float64.
TEST(Linear4wTest, OpMatchesReferenceOnLoopsAndGemm) {
  const Kernel& kernel = linear_4w_kernel();
  constexpr SizesType kN = 37, kK = 256, kGroup = 32;
  std::vector<uint8_t> method(8 << 20), temp(1 << 20);
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const SizesType rows : {1, 3, 5, 70}) {
      const Case4w c = make_case(rows, kK, kN, kGroup, 1234 + static_cast<uint32_t>(rows));
      TestTensor input(ScalarType::kFloat, {1, rows, kK});
      TestTensor weight(ScalarType::kByte, {kN, kK / 2});
      TestTensor scales(ScalarType::kFloat, {kN, kK / kGroup});
      TestTensor bias(ScalarType::kFloat, {kN});
      fill(&input, c.x);
      fill(&weight, c.packed);
      fill(&scales, c.scales);
      fill(&bias, c.bias);
      TestTensor out(ScalarType::kFloat, {1, rows, kN});
      KernelArgs args{input.evalue(), weight.evalue(), scales.evalue(), EValue(int64_t{kGroup}),
                      bias.evalue(),  out.evalue(),    EValue()};
      MemoryAllocator method_allocator(method.data(), static_cast<uint32_t>(method.size()));
      MemoryAllocator temp_allocator(temp.data(), static_cast<uint32_t>(temp.size()));
      const Status status = call_kernel(kernel, args.span(), &method_allocator, &temp_allocator);
      ASSERT_TRUE(status.ok()) << status.message();
      std::vector<float> got(static_cast<size_t>(rows * kN));
      for (size_t i = 0; i < got.size(); ++i) got[i] = static_cast<float>(out.get(static_cast<int64_t>(i)));
      expect_near_reference(c, rows, got.data(), true,
                            "rows " + std::to_string(rows) + " threads " + std::to_string(threads));
    }
  }
  threadpool::set_num_threads(threads_before);
}

// What a program fixes (dtypes, packed width, group size, scales) fails at
// load, naming the argument.
TEST(Linear4wTest, PrepareRejectsBadArgumentsNamingThem) {
  const Kernel& kernel = linear_4w_kernel();
  struct Bad {
    ScalarType weight_dtype;
    SizesType packed_columns;
    int64_t group;
    SizesType scale_columns;
    const char* message;
  };
  const Bad bads[] = {
      {ScalarType::kChar, 32, 32, 2, "argument 'weight' has dtype int8, expected uint8"},
      {ScalarType::kByte, 31, 32, 2, "argument 'weight' has 31 packed columns, expected 32"},
      {ScalarType::kByte, 32, 48, 2, "argument 'group_size' is 48, expected an even divisor"},
      {ScalarType::kByte, 32, 0, 2, "argument 'group_size' is 0"},
      {ScalarType::kByte, 32, 32, 4, "argument 'weight_scales' has 12 elements, expected 6"},
  };
  for (const Bad& bad : bads) {
    TestTensor input(ScalarType::kFloat, {2, 64});
    TestTensor weight(bad.weight_dtype, {3, bad.packed_columns});
    TestTensor scales(ScalarType::kFloat, {3, bad.scale_columns});
    TestTensor out(ScalarType::kFloat, {2, 3});
    KernelArgs args{input.evalue(), weight.evalue(), scales.evalue(), EValue(bad.group),
                    EValue(),       out.evalue(),    EValue()};
    PreparedCall call;
    const Status status = prepare_kernel_call(kernel, args.span(), nullptr, &call);
    ASSERT_FALSE(status.ok()) << bad.message;
    EXPECT_NE(std::string(status.message()).find(bad.message), std::string::npos)
        << status.message();
  }
}

}  // namespace
}  // namespace torchlight
