// The quantized library in the process-wide registry, and its prepare
// steps: a bad dtype or range fails at load (prepare), naming the argument,
// before any run. Numerics are checked against torch by the conformance
// harness (kernels/portable/conformance/cases/quantized.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/all_kernels.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/quantized/dequantized_gemm.h"
#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_8da4w_packed.h"
#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_qs8.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/prefill_8da4w.h"
#include "kernels/quantized/quantize_arranged_8da4w.h"
#include "kernels/quantized/quantized_kernels.h"

namespace torchlight {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;

const Kernel& find(const char* name) {
  for (const Kernel& k : quantized_kernels()) {
    if (std::strcmp(k.name, name) == 0) return k;
  }
  ADD_FAILURE() << "no kernel " << name;
  return quantized_kernels()[0];
}

TEST(QuantizedKernelsTest, AllKernelsHoldsEveryOneWithSchemaAndPrepare) {
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  EXPECT_EQ(quantized_kernels().size(), 25u);
  for (const Kernel& k : quantized_kernels()) {
    EXPECT_TRUE((*registry)->has_kernel(k.name)) << k.name;
    ASSERT_NE(k.schema, nullptr) << k.name;
    EXPECT_STREQ(k.schema->name, k.name);
    EXPECT_NE(k.prepare, nullptr) << k.name;
    EXPECT_EQ(k.priority, KernelPriority::kCustom);
    EXPECT_NE(k.eval, nullptr) << k.name;
  }
}

// quantize_per_tensor.out(input, scale, zero_point, quant_min, quant_max, dtype, *, out) -> out
TEST(QuantizedKernelsTest, PrepareRejectsWhatCannotChangeAtLoad) {
  const Kernel& kernel = find("quantized_decomposed::quantize_per_tensor.out");
  TestTensor input(ScalarType::kFloat, {2, 3}, {0.1, -0.25, 0.5, 1.25, -2.0, 3.0});
  TestTensor out(ScalarType::kChar, {2, 3});
  struct Bad {
    int64_t quant_min, quant_max;
    ScalarType dtype;
    double scale;
    const char* message;
  };
  const Bad bads[] = {
      {5, 4, ScalarType::kChar, 0.1, "'quant_min' (5) is greater than 'quant_max' (4)"},
      {-129, 127, ScalarType::kChar, 0.1, "'quant_min' is -129"},
      {-128, 127, ScalarType::kFloat, 0.1, "argument 'dtype' is float32"},
      {-128, 127, ScalarType::kChar, 0.0, "argument 'scale' is 0"},
      {0, 255, ScalarType::kByte, 0.1, "argument 'out' has dtype int8, expected uint8"},
  };
  for (const Bad& bad : bads) {
    KernelArgs args{input.evalue(),          EValue(bad.scale),
                    EValue(int64_t{0}),      EValue(bad.quant_min),
                    EValue(bad.quant_max),   EValue(static_cast<int64_t>(bad.dtype)),
                    out.evalue(),            EValue()};
    PreparedCall call;
    Status status = prepare_kernel_call(kernel, args.span(), nullptr, &call);
    ASSERT_FALSE(status.ok()) << bad.message;
    EXPECT_NE(std::string(status.message()).find(bad.message), std::string::npos)
        << status.message();
  }
  KernelArgs good{input.evalue(),       EValue(0.5),          EValue(int64_t{1}),
                  EValue(int64_t{-128}), EValue(int64_t{127}), EValue(int64_t{1}),
                  out.evalue(),          EValue()};
  PreparedCall call;
  ASSERT_TRUE(prepare_kernel_call(kernel, good.span(), nullptr, &call).ok());
  ASSERT_NE(call.eval, nullptr);
  KernelContext ctx(nullptr, nullptr, kernel.name);
  call.eval(ctx, good.span());
  ASSERT_TRUE(ctx.status().ok()) << ctx.status().message();
  // round(x / 0.5) + 1, ties to even: -0.5 -> -0 -> 1 and 2.5 -> 2 -> 3.
  EXPECT_EQ(out.values(), (std::vector<double>{1, 1, 2, 3, -3, 7}));
}

// The kernels' own evals (what runs without prepare, e.g. a direct call)
// check everything themselves and compute what the prepared evals compute.
TEST(QuantizedKernelsTest, EvalWithoutPrepareChecksAndComputes) {
  const Kernel& quantize = find("quantized_decomposed::quantize_per_tensor.out");
  TestTensor input(ScalarType::kFloat, {4}, {0.1, -0.25, 1.25, 100.0});
  TestTensor out(ScalarType::kChar, {4});
  KernelArgs good{input.evalue(),        EValue(0.5),          EValue(int64_t{1}),
                  EValue(int64_t{-128}), EValue(int64_t{127}), EValue(int64_t{1}),
                  out.evalue(),          EValue()};
  ASSERT_TRUE(portable::kernel_test::run_kernel(quantize.eval, quantize.name, good).ok());
  EXPECT_EQ(out.values(), (std::vector<double>{1, 1, 3, 127}));
  KernelArgs bad{input.evalue(),        EValue(0.5),          EValue(int64_t{1}),
                 EValue(int64_t{-128}), EValue(int64_t{127}), EValue(int64_t{0}),
                 out.evalue(),          EValue()};
  const Status status = portable::kernel_test::run_kernel(quantize.eval, quantize.name, bad);
  EXPECT_NE(std::string(status.message()).find("argument 'quant_min' is -128, below 0"),
            std::string::npos)
      << status.message();

  const Kernel& embedding = find("quantized_decomposed::embedding_byte.out");
  TestTensor weight(ScalarType::kChar, {3, 4}, {1, 2, 3, 4, -1, -2, -3, -4, 10, 20, 30, 40});
  TestTensor scales(ScalarType::kFloat, {3}, {0.5, 0.25, 2.0});
  TestTensor indices(ScalarType::kLong, {2}, {2, 1});
  TestTensor rows(ScalarType::kFloat, {2, 4});
  KernelArgs lookup{weight.evalue(),       scales.evalue(),      EValue(),
                    EValue(int64_t{-128}), EValue(int64_t{127}), indices.evalue(),
                    rows.evalue(),         EValue()};
  ASSERT_TRUE(portable::kernel_test::run_kernel(embedding.eval, embedding.name, lookup).ok());
  EXPECT_EQ(rows.values(), (std::vector<double>{20, 40, 60, 80, -0.25, -0.5, -0.75, -1}));
}

// An out planned over the indices is refused before anything is written
// (rows written would become unchecked row numbers).
TEST(QuantizedKernelsTest, EmbeddingRefusesOutOverlappingIndices) {
  const Kernel& kernel = find("quantized_decomposed::embedding_byte.out");
  TestTensor weight(ScalarType::kChar, {4, 32});
  TestTensor scales(ScalarType::kFloat, {4}, {0.1, 0.1, 0.1, 0.1});
  alignas(8) int64_t storage[64] = {1, 2};
  SizesType index_sizes[1] = {2};
  DimOrderType index_order[1] = {0};
  StridesType index_strides[1] = {1};
  TensorImpl indices(ScalarType::kLong, 1, index_sizes, storage, index_order, index_strides);
  SizesType out_sizes[2] = {2, 32};
  DimOrderType out_order[2] = {0, 1};
  StridesType out_strides[2] = {32, 1};
  TensorImpl out(ScalarType::kFloat, 2, out_sizes, storage, out_order, out_strides);
  KernelArgs args{weight.evalue(),       scales.evalue(),      EValue(),
                  EValue(int64_t{-128}), EValue(int64_t{127}), EValue(Tensor(&indices)),
                  EValue(Tensor(&out)),  EValue()};
  MemoryAllocator allocator(nullptr, 0);
  const Status status = call_kernel(kernel, args.span(), &allocator);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("overlap"), std::string::npos) << status.message();
  EXPECT_EQ(storage[0], 1);
  EXPECT_EQ(storage[1], 2);
}

// The fused 8da4w linear's loops against a float64 reference on the
// natural-order rows: within float rounding, |err| <= 1e-5 * x_scale *
// sum_g w_scale_g * sum |(x - zp)(w - 8)| (+ |bias| * 2^-23). The generic
// and AVX2 loops give identical floats (exact integer sums, same float
// steps), for odd column counts and ranges, 1..4 rows, groups 32..256, K
// with an odd number of groups (group 32: a group left out of the pairs), a
// group of three chunks of 32 (a pair and one alone), and (generic only) a
// group that is not a multiple of 32.
TEST(QuantizedKernelsTest, Linear8da4wLoopsAgreeAndMatchReference) {
  constexpr int64_t kN = 19;
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  struct Shape {
    int64_t k, group;
  };
  for (const Shape shape : {Shape{256, 32}, Shape{256, 64}, Shape{256, 128}, Shape{256, 256},
                            Shape{288, 32}, Shape{96, 48}, Shape{20, 10},
                            Shape{32, 32}, Shape{288, 96}, Shape{320, 64}, Shape{768, 256},
                            Shape{416, 32}, Shape{480, 32}, Shape{2048, 32}, Shape{2048, 128}}) {
    const int64_t k = shape.k, group = shape.group, groups = k / group;
    std::vector<int8_t> xq(k * quantized::kRows8da4w);
    std::vector<uint8_t> weight(kN * k / 2);
    std::vector<float> bias(kN), scales(kN * groups);
    for (auto& v : xq) v = static_cast<int8_t>(next() >> 24);  // Covers -128 and 127.
    for (auto& v : weight) v = static_cast<uint8_t>(next() >> 24);
    for (auto& v : bias) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 4096;
    for (auto& v : scales) v = static_cast<float>((next() >> 20) + 1) / 65536;
    for (int64_t g = 0; g < groups; g += 2) scales[2 * groups + g] = 0.0f;  // Zero scales.
    xq[0] = -128;
    xq[1] = 127;
    weight[0] = 0x0F;  // -8 and 7.
    const int32_t zps[] = {-128, -3, 0, 127};
    std::vector<int8_t> arranged(xq.size());
    std::vector<float> correction(groups * quantized::kRows8da4w);
    for (int r = 0; r < quantized::kRows8da4w; ++r) {
      quantized::arrange_row_8da4w(xq.data() + r * k, k, group, zps[r], arranged.data() + r * k,
                                   correction.data() + r * groups);
    }
    for (int rows = 1; rows <= quantized::kRows8da4w; ++rows) {
      quantized::Row8da4w row{};
      row.xq = arranged.data();
      row.correction = correction.data();
      row.rows = rows;
      for (int r = 0; r < rows; ++r) {
        row.zero_point[r] = zps[r];
        row.scale[r] = 0.0173f * static_cast<float>(r + 1);
      }
      row.weight = weight.data();
      row.w_scales = scales.data();
      row.bias = bias.data();
      row.k = k;
      row.n = kN;
      row.group = group;
      std::vector<float> a(rows * kN, -1.0f), b(rows * kN, -1.0f);
      row.out = a.data();
      quantized::linear_8da4w_columns_generic(row, 0, kN);
      {
        std::vector<float> u_folded(kN, NAN), e(rows * kN, -1.0f);
        quantized::fold_weight_sums_8da4w(weight.data(), scales.data(), k, group, 0, kN,
                                          u_folded.data());
        row.u_folded = u_folded.data();
        row.out = e.data();
        quantized::linear_8da4w_columns_generic(row, 0, kN);
        EXPECT_EQ(a, e) << "generic, precomputed sums, k " << k << " group " << group;
        row.u_folded = nullptr;
        row.out = a.data();
      }
      for (int r = 0; r < rows; ++r) {
        for (int64_t n = 0; n < kN; ++n) {
          double sum = 0, magnitude = 0;
          for (int64_t g = 0; g < groups; ++g) {
            double dot = 0, dot_magnitude = 0;
            for (int64_t i = g * group; i < (g + 1) * group; ++i) {
              const uint8_t byte = weight[n * k / 2 + i / 2];
              const int w = (i % 2 == 0 ? byte >> 4 : byte & 15) - 8;
              const double term = static_cast<double>(xq[r * k + i] - zps[r]) * w;
              dot += term;
              dot_magnitude += std::abs(term);
            }
            sum += dot * scales[n * groups + g];
            magnitude += dot_magnitude * scales[n * groups + g];
          }
          const double expected = sum * row.scale[r] + bias[n];
          const double tolerance = 1e-5 * magnitude * row.scale[r] + std::abs(bias[n]) * 0x1p-23;
          EXPECT_NEAR(a[r * kN + n], expected, tolerance)
              << "k " << k << " group " << group << " row " << r << " column " << n;
        }
      }
#if defined(__x86_64__) || defined(_M_X64)
      if (group % 32 == 0 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        row.out = b.data();
        quantized::linear_8da4w_columns_avx2(row, 0, kN);
        EXPECT_EQ(a, b) << "k " << k << " group " << group << " rows " << rows;
        // An odd range starting at an odd column leaves the rest untouched.
        std::vector<float> c(rows * kN, -1.0f);
        row.out = c.data();
        quantized::linear_8da4w_columns_avx2(row, 3, 18);
        for (int r = 0; r < rows; ++r) {
          for (int64_t n = 0; n < kN; ++n) {
            const float want = n >= 3 && n < 18 ? a[r * kN + n] : -1.0f;
            EXPECT_EQ(c[r * kN + n], want) << "k " << k << " row " << r << " column " << n;
          }
        }
        // With the weight sums precomputed (a constant weight), the loops
        // and the prefill tile (activations in paired order) give the same
        // floats again, over every column and over an odd range.
        std::vector<float> u_folded(kN, NAN);
        quantized::fold_weight_sums_8da4w(weight.data(), scales.data(), k, group, 0, kN,
                                          u_folded.data());
        std::vector<float> u_avx2(kN, NAN);
        quantized::fold_weight_sums_8da4w_avx2(weight.data(), scales.data(), k, group, 0, kN,
                                               u_avx2.data());
        EXPECT_EQ(u_folded, u_avx2) << "weight sums, k " << k << " group " << group;
        row.u_folded = u_folded.data();
        std::vector<float> d(rows * kN, -1.0f);
        row.out = d.data();
        quantized::linear_8da4w_columns_avx2(row, 0, kN);
        EXPECT_EQ(a, d) << "precomputed sums, k " << k << " group " << group << " rows " << rows;
        std::vector<int8_t> paired(arranged);
        quantized::pair_rows_8da4w(paired.data(), rows, k, group);
        row.xq = paired.data();
        std::vector<float> t(rows * kN, -1.0f);
        row.out = t.data();
        quantized::linear_8da4w_tile_avx2(row, 0, kN);
        EXPECT_EQ(a, t) << "tile, k " << k << " group " << group << " rows " << rows;
        std::vector<float> t2(rows * kN, -1.0f);
        row.out = t2.data();
        quantized::linear_8da4w_tile_avx2(row, 3, 18);
        for (int r = 0; r < rows; ++r) {
          for (int64_t n = 0; n < kN; ++n) {
            const float want = n >= 3 && n < 18 ? a[r * kN + n] : -1.0f;
            EXPECT_EQ(t2[r * kN + n], want) << "tile k " << k << " row " << r << " column " << n;
          }
        }
        row.xq = arranged.data();
        row.u_folded = nullptr;
      }
#endif
    }
  }
}

// quantize_token_int8 (vector steps, then a scalar tail) gives what
// clamp(nearbyint(x * (1 / scale) + zero_point)) gives in double, NaN as 0,
// for halfway points, values past the int8 range, infinities and NaN at
// every position of a vector; and token_qparams propagates a NaN wherever
// it sits.
TEST(QuantizedKernelsTest, QuantizeTokenInt8RoundsAsNearbyint) {
  const double scale = 0.0390625;  // 5 / 128: halfway points are exact.
  for (int64_t zero_point : {-7, 0, 12}) {
    std::vector<float> x;
    for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>((i + 0.5) * scale));
    for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>(i * scale * 0.37));
    for (float v : {INFINITY, -INFINITY, NAN, 1e30f, -1e30f, -0.0f, 0.0f}) x.push_back(v);
    for (size_t at = 0; at < 9; ++at) {
      std::vector<float> y(x.begin() + at, x.end());
      std::vector<int8_t> got(y.size());
      quantized::quantize_token_int8(y.data(), static_cast<int64_t>(y.size()), scale, zero_point,
                                     got.data());
      for (size_t i = 0; i < y.size(); ++i) {
        const double r = std::nearbyint(static_cast<double>(y[i]) * (1.0 / scale) + zero_point);
        const int want = r != r ? 0 : static_cast<int>(std::min(127.0, std::max(-128.0, r)));
        ASSERT_EQ(got[i], want) << "x " << y[i] << " zero point " << zero_point;
      }
    }
  }
  for (int64_t at = 0; at < 11; ++at) {
    std::vector<float> row(11, 0.5f);
    row[at] = NAN;
    double scale_out = 0;
    int64_t zp = 0;
    quantized::token_qparams(row.data(), 11, &scale_out, &zp);
    EXPECT_TRUE(std::isnan(scale_out)) << "NaN at " << at;
  }
}

// The fused 8da4w operator over a few rows (every row quantized first,
// columns split once, rows in blocks of four) gives each row exactly what
// that row alone gives (decode: four columns at a time), for odd row and
// column counts, the AVX2 group (32) and a generic one (16). Prefill-shaped
// calls (kMinRowsDequantizedGemm rows or more) run the dequantized fp32 GEMM, and
// with AMX 8 rows or more run on tiles, which sum in another order: within
// 1e-5 of the row's magnitude there.
TEST(QuantizedKernelsTest, Linear8da4wManyRowsEqualEachRowAlone) {
  const Kernel& kernel = find("torchlight::linear_8da4w.out");
  constexpr SizesType kK = 96, kN = 37;
  uint32_t seed = 99;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (const SizesType rows : {7, 261}) {
    for (const int64_t group : {32, 16}) {
      TestTensor input(ScalarType::kFloat, {rows, kK});
      TestTensor weight(ScalarType::kByte, {kN, kK / 2});
      TestTensor scales(ScalarType::kFloat, {kN, static_cast<SizesType>(kK / group)});
      TestTensor bias(ScalarType::kFloat, {kN});
      for (int64_t i = 0; i < input.numel(); ++i) {
        // Rows of different ranges and signs, so zero points differ.
        const double shift = static_cast<double>(i / kK % 5) - 2.0;
        input.set(i, (static_cast<int32_t>(next() >> 16) - 32768) / 16384.0 + shift);
      }
      for (int64_t i = 0; i < weight.numel(); ++i) weight.set(i, next() >> 24);
      for (int64_t i = 0; i < scales.numel(); ++i) scales.set(i, ((next() >> 20) + 1) / 65536.0);
      for (int64_t i = 0; i < kN; ++i) bias.set(i, (static_cast<int32_t>(next() >> 16) - 32768) / 4096.0);
      TestTensor out(ScalarType::kFloat, {rows, kN});
      KernelArgs all{input.evalue(), weight.evalue(), scales.evalue(), EValue(group),
                     bias.evalue(),  out.evalue(),    EValue()};
      ASSERT_TRUE(portable::kernel_test::run_kernel(kernel.eval, kernel.name, all).ok());
      for (SizesType r = 0; r < rows; ++r) {
        TestTensor one(ScalarType::kFloat, {1, kK});
        for (SizesType i = 0; i < kK; ++i) one.set(i, input.get(r * kK + i));
        TestTensor one_out(ScalarType::kFloat, {1, kN});
        KernelArgs single{one.evalue(),  weight.evalue(),  scales.evalue(), EValue(group),
                          bias.evalue(), one_out.evalue(), EValue()};
        ASSERT_TRUE(portable::kernel_test::run_kernel(kernel.eval, kernel.name, single).ok());
        for (SizesType n = 0; n < kN; ++n) {
          if (!quantized::linear_8da4w_takes_dequantized_gemm(rows, kK, group) &&
              !quantized::linear_8da4w_takes_amx(rows, group)) {
            ASSERT_EQ(out.get(r * kN + n), one_out.get(n))
                << "rows " << rows << " group " << group << " row " << r << " column " << n;
          } else {
            ASSERT_NEAR(out.get(r * kN + n), one_out.get(n), 1e-5 * (1 + std::fabs(one_out.get(n))))
                << "rows " << rows << " group " << group << " row " << r << " column " << n;
          }
        }
      }
    }
  }
}

// The 8da4w operator as a program runs it: prepared, with the weight and
// its scales marked constant (prepare folds the weight sums once) and not
// (each call folds them, or the loops do). Every row count (decode, the
// loops' row blocks, the prefill tile past its threshold; odd counts),
// group 32-256, and K with an odd number of groups or chunks: the outputs
// are identical floats, and each row equals that row alone. Except where
// prepare packs the constant weight (linear_8da4w_packed.h: every call reads
// the packed copy, another order of float sums): there constant against not
// within 1e-4 (1 + |value|), and each row of a many-row call still equals
// that row alone (decode) bit for bit.
TEST(QuantizedKernelsTest, Linear8da4wConstantWeightSumsGiveIdenticalFloats) {
  const Kernel& kernel = find("torchlight::linear_8da4w.out");
  struct Shape {
    SizesType k;
    int64_t group;
  };
  constexpr SizesType kN = 37;
  uint32_t seed = 7;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  std::vector<uint8_t> method(8 << 20), temp(1 << 20);  // Room for the GEMM's scratch.
  // One thread takes the GEMM for long prefills of short rows, two the tile.
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const Shape shape : {Shape{288, 32}, Shape{320, 64}, Shape{384, 128}, Shape{768, 256},
                              Shape{96, 96}}) {
      const SizesType k = shape.k;
      const int64_t group = shape.group;
      TestTensor weight(ScalarType::kByte, {kN, k / 2});
      TestTensor scales(ScalarType::kFloat, {kN, static_cast<SizesType>(k / group)});
      TestTensor bias(ScalarType::kFloat, {kN});
      for (int64_t i = 0; i < weight.numel(); ++i) weight.set(i, next() >> 24);
      for (int64_t i = 0; i < scales.numel(); ++i) scales.set(i, ((next() >> 20) + 1) / 65536.0);
      for (int64_t i = 0; i < kN; ++i) {
        bias.set(i, (static_cast<int32_t>(next() >> 16) - 32768) / 4096.0);
      }
      for (const SizesType rows : {1, 3, 5, 7, 65, 129}) {
        TestTensor input(ScalarType::kFloat, {rows, k});
        for (int64_t i = 0; i < input.numel(); ++i) {
          input.set(i, (static_cast<int32_t>(next() >> 16) - 32768) / 16384.0 + (i / k % 3) - 1.0);
        }
        std::vector<float> outputs[2];
        for (const uint64_t constants : {uint64_t{0}, uint64_t{0b110}}) {
          TestTensor out(ScalarType::kFloat, {rows, kN});
          KernelArgs args{input.evalue(), weight.evalue(), scales.evalue(), EValue(group),
                          bias.evalue(),  out.evalue(),    EValue()};
          MemoryAllocator method_allocator(method.data(), static_cast<uint32_t>(method.size()));
          MemoryAllocator temp_allocator(temp.data(), static_cast<uint32_t>(temp.size()));
          const Status status =
              call_kernel(kernel, args.span(), &method_allocator, &temp_allocator, constants);
          ASSERT_TRUE(status.ok()) << status.message();
          for (int64_t i = 0; i < out.numel(); ++i) outputs[constants != 0].push_back(out.get(i));
        }
        // Constant weights packed: every call sums in the packed order.
        const bool packed = quantized::select_packed_8da4w(k, group) != nullptr;
        auto expect_same = [&](float got, float want, const char* what, SizesType r, SizesType n, bool exact) {
          if (exact) {
            ASSERT_EQ(got, want) << what << " k " << k << " group " << group << " rows " << rows << " row "
                                 << r << " column " << n;
          } else {
            // The conformance cases' tolerance against torch: the two orders
            // round differently where the products, zp times the weight sums
            // and the corrections, each far larger than the result, cancel
            // (seen: 2.6e-5 at 0.25).
            ASSERT_NEAR(got, want, 1e-4 * (1 + std::fabs(want)))
                << what << " k " << k << " group " << group << " rows " << rows << " row " << r << " column " << n;
          }
        };
        for (size_t i = 0; i < outputs[0].size(); ++i) {
          const auto at = static_cast<SizesType>(i);
          expect_same(outputs[1][i], outputs[0][i], "constant against not", at / kN, at % kN, !packed);
        }
        // Calls on the dequantized GEMM or AMX tiles sum in another order (tested above, and
        // linear_8da4w_amx_test.cpp); packed weights take neither.
        if (!packed && (quantized::linear_8da4w_takes_dequantized_gemm(rows, k, group) ||
                        quantized::linear_8da4w_takes_amx(rows, group))) {
          continue;
        }
        for (const SizesType r : {SizesType{0}, static_cast<SizesType>(rows - 1)}) {
          TestTensor one(ScalarType::kFloat, {1, k});
          for (SizesType i = 0; i < k; ++i) one.set(i, input.get(r * k + i));
          TestTensor one_out(ScalarType::kFloat, {1, kN});
          KernelArgs single{one.evalue(),  weight.evalue(),  scales.evalue(), EValue(group),
                            bias.evalue(), one_out.evalue(), EValue()};
          MemoryAllocator method_allocator(method.data(), static_cast<uint32_t>(method.size()));
          ASSERT_TRUE(call_kernel(kernel, single.span(), &method_allocator, nullptr, 0b110).ok());
          for (SizesType n = 0; n < kN; ++n) {
            expect_same(outputs[1][r * kN + n], one_out.get(n), "row alone", r, n, true);
          }
        }
      }
    }
  }
  threadpool::set_num_threads(threads_before);
}

// A linear_8da4w.out call on `rows` rows of K against N columns in groups of
// `group`, its operands from a linear congruential sequence: inputs in about
// [-3.7, 4.3], every weight byte, scales in (0, 0.0625], biases in [-8, 8).
struct Linear8da4wCall {
  TestTensor input, weight, scales, bias, out;
  KernelArgs args;
  Linear8da4wCall(SizesType rows, SizesType k, SizesType n, int64_t group, uint32_t& seed)
      : input(ScalarType::kFloat, {rows, k}),
        weight(ScalarType::kByte, {n, k / 2}),
        scales(ScalarType::kFloat, {n, static_cast<SizesType>(k / group)}),
        bias(ScalarType::kFloat, {n}),
        out(ScalarType::kFloat, {rows, n}),
        args{input.evalue(), weight.evalue(), scales.evalue(), EValue(group),
             bias.evalue(),  out.evalue(),    EValue()} {
    auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
    for (int64_t i = 0; i < input.numel(); ++i) input.set(i, (static_cast<int32_t>(next() >> 16) - 30000) / 8192.0);
    for (int64_t i = 0; i < weight.numel(); ++i) weight.set(i, next() >> 24);
    for (int64_t i = 0; i < scales.numel(); ++i) scales.set(i, ((next() >> 20) + 1) / 65536.0);
    for (int64_t i = 0; i < bias.numel(); ++i) bias.set(i, (static_cast<int32_t>(next() >> 16) - 32768) / 4096.0);
  }
};

// A constant weight prepare packed is never read again by the op (its
// pages were released): once prepared, the weight and scales overwritten
// with other values give the same outputs, bit for bit, at 1 row (decode)
// and many (odd counts, the register block's tails, two passes of 256).
TEST(QuantizedKernelsTest, Linear8da4wPackedCallsNeverReadTheOriginal) {
  constexpr SizesType kK = 384, kN = 37;
  constexpr int64_t kGroup = 64;
  if (quantized::select_packed_8da4w(kK, kGroup) == nullptr) GTEST_SKIP() << "no packed weights on this ISA";
  const Kernel& kernel = find("torchlight::linear_8da4w.out");
  uint32_t seed = 11;
  for (const SizesType rows : {1, 3, 5, 7, 64, 257}) {
    Linear8da4wCall c(rows, kK, kN, kGroup, seed);
    std::vector<uint8_t> method(4 << 20);
    MemoryAllocator method_allocator(method.data(), static_cast<uint32_t>(method.size()));
    PreparedCall call;
    ASSERT_TRUE(prepare_kernel_call(kernel, c.args.span(), &method_allocator, &call, 0b110).ok());
    void* scratch = method_allocator.allocate(call.scratch_bytes, 64);
    ASSERT_NE(scratch, nullptr);
    auto run = [&] {
      KernelContext context(nullptr, nullptr, kernel.name);
      context.set_call(kernel.name, call.state);
      context.set_scratch(scratch, call.scratch_bytes);
      call.eval(context, c.args.span());
      EXPECT_TRUE(context.status().ok()) << context.status().message();
      std::vector<float> values(static_cast<size_t>(c.out.numel()));
      for (int64_t i = 0; i < c.out.numel(); ++i) values[static_cast<size_t>(i)] = static_cast<float>(c.out.get(i));
      return values;
    };
    const std::vector<float> before = run();
    for (int64_t i = 0; i < c.weight.numel(); ++i) c.weight.set(i, 0x5A);
    for (int64_t i = 0; i < c.scales.numel(); ++i) c.scales.set(i, 1e30);
    const std::vector<float> after = run();
    for (size_t i = 0; i < before.size(); ++i) {
      ASSERT_EQ(after[i], before[i]) << "rows " << rows << " row " << i / kN << " column " << i % kN;
    }
  }
}

// Decode with a constant weight where prepare packs it: the operator's
// output is the packed reference's (linear_8da4w_packed.h) on the row
// quantized as the operator quantizes it, bit for bit (N = 37: a tail of 5
// past two blocks).
TEST(QuantizedKernelsTest, Linear8da4wPackedDecodeIsThePackedReference) {
  constexpr SizesType kK = 288, kN = 37;
  constexpr int64_t kGroup = 32;
  if (quantized::select_packed_8da4w(kK, kGroup) == nullptr) GTEST_SKIP() << "no packed decode on this ISA";
  const Kernel& kernel = find("torchlight::linear_8da4w.out");
  uint32_t seed = 5;
  Linear8da4wCall c(1, kK, kN, kGroup, seed);
  std::vector<uint8_t> method(1 << 20);
  MemoryAllocator method_allocator(method.data(), static_cast<uint32_t>(method.size()));
  ASSERT_TRUE(call_kernel(kernel, c.args.span(), &method_allocator, nullptr, 0b110).ok());

  std::vector<float> x(kK), b(kN), w_scales(kN * (kK / kGroup)), want(kN);
  std::vector<uint8_t> w(kN * kK / 2);
  for (SizesType i = 0; i < kK; ++i) x[i] = static_cast<float>(c.input.get(i));
  for (SizesType i = 0; i < kN; ++i) b[i] = static_cast<float>(c.bias.get(i));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>(c.weight.get(static_cast<int64_t>(i)));
  for (size_t i = 0; i < w_scales.size(); ++i) w_scales[i] = static_cast<float>(c.scales.get(static_cast<int64_t>(i)));
  double scale = 0;
  int64_t zero_point = 0;
  quantized::token_qparams(x.data(), kK, &scale, &zero_point);
  std::vector<int8_t> arranged(kK);
  std::vector<float> correction(kK / kGroup);
  quantized::quantize_arranged_8da4w(x.data(), kK, kGroup, scale, static_cast<int32_t>(zero_point),
                                     arranged.data(), correction.data());
  quantized::Packed8da4w shape;
  shape.k = kK;
  shape.n = kN;
  shape.group = kGroup;
  const quantized::PackedRow8da4w row{arranged.data(), correction.data(), static_cast<int32_t>(zero_point),
                                      static_cast<float>(scale), b.data(), want.data()};
  quantized::linear_8da4w_packed_reference(shape, w.data(), w_scales.data(), row, 0, kN);
  for (SizesType n = 0; n < kN; ++n) EXPECT_EQ(c.out.get(n), want[n]) << "column " << n;
}

// linear_8da4w's prefill conversions: the weight rows give (nibble - 8) *
// group scale with the high nibble first, the activation rows (q - zp) *
// scale with q from quantize_token_int8, computed here directly, and the
// AVX2 and AVX-512 forms give the same floats, for groups 32..256, K with a
// tail of fewer than 4 (8) activations, NaN, infinities and values past the int8 range.
TEST(QuantizedKernelsTest, Prefill8da4wConversionsAgreeWithReference) {
  uint32_t seed = 5;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (const int64_t group : {32, 64, 128, 256, 16}) {
    const int64_t k = group * 3, n = 7;
    std::vector<uint8_t> packed(static_cast<size_t>(n * k / 2));
    std::vector<float> scales(static_cast<size_t>(n * k / group));
    for (uint8_t& b : packed) b = static_cast<uint8_t>(next() >> 24);
    for (float& f : scales) f = static_cast<float>(((next() >> 20) + 1) / 65536.0);
    const quantized::Int4Weights w{packed.data(), scales.data(), k, group};
    std::vector<float> want(static_cast<size_t>(n * k));
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < k; ++c) {
        const uint8_t b = packed[static_cast<size_t>(r * k / 2 + c / 2)];
        const int nibble = c % 2 == 0 ? b >> 4 : b & 15;
        want[static_cast<size_t>(r * k + c)] =
            static_cast<float>(nibble - 8) * scales[static_cast<size_t>(r * (k / group) + c / group)];
      }
    }
    // Rows [2, n) only: the output starts at the first row asked for.
    std::vector<float> got(static_cast<size_t>(n * k), -1.0f);
    quantized::dequantize_int4_rows_generic(&w, 2, n, got.data());
    for (int64_t i = 0; i < (n - 2) * k; ++i) ASSERT_EQ(got[i], want[2 * k + i]) << "generic " << i;
#if defined(__x86_64__)
    if (group % 32 == 0 && __builtin_cpu_supports("avx2")) {
      std::fill(got.begin(), got.end(), -1.0f);
      quantized::dequantize_int4_rows_avx2(&w, 2, n, got.data());
      for (int64_t i = 0; i < (n - 2) * k; ++i) ASSERT_EQ(got[i], want[2 * k + i]) << "avx2 " << i;
    }
    if (group % 32 == 0 && __builtin_cpu_supports("avx512f")) {
      std::fill(got.begin(), got.end(), -1.0f);
      quantized::dequantize_int4_rows_avx512(&w, 2, n, got.data());
      for (int64_t i = 0; i < (n - 2) * k; ++i) ASSERT_EQ(got[i], want[2 * k + i]) << "avx512 " << i;
    }
#endif
  }
  for (const int64_t k : {1, 3, 7, 32, 129, 288}) {
    std::vector<float> x(static_cast<size_t>(k));
    for (float& v : x) v = static_cast<float>((static_cast<int32_t>(next() >> 16) - 32768) / 8192.0);
    if (k > 5) {
      x[1] = NAN;
      x[2] = INFINITY;
      x[4] = 1e6f;
      x[5] = -1e6f;
    }
    for (const int64_t zero_point : {-128, -3, 0, 17, 127}) {
      const double scale = 0.0234375;
      std::vector<int8_t> q(static_cast<size_t>(k));
      quantized::quantize_token_int8(x.data(), k, scale, zero_point, q.data());
      std::vector<float> want(static_cast<size_t>(k));
      for (int64_t i = 0; i < k; ++i) {
        want[i] = static_cast<float>(q[i] - zero_point) * static_cast<float>(scale);
      }
      std::vector<float> got(static_cast<size_t>(k));
      quantized::quantize_dequantize_token_generic(x.data(), k, scale, zero_point, got.data());
      for (int64_t i = 0; i < k; ++i) ASSERT_EQ(got[i], want[i]) << "generic k " << k << " at " << i;
#if defined(__x86_64__)
      if (__builtin_cpu_supports("avx2")) {
        quantized::quantize_dequantize_token_avx2(x.data(), k, scale, zero_point, got.data());
        for (int64_t i = 0; i < k; ++i) ASSERT_EQ(got[i], want[i]) << "avx2 k " << k << " at " << i;
      }
      if (__builtin_cpu_supports("avx512f")) {
        std::fill(got.begin(), got.end(), -1.0f);
        quantized::quantize_dequantize_token_avx512(x.data(), k, scale, zero_point, got.data());
        for (int64_t i = 0; i < k; ++i) ASSERT_EQ(got[i], want[i]) << "avx512 k " << k << " at " << i;
      }
#endif
    }
  }
}

// The int8 weight-only loops: the generic loop and every x86 build this CPU
// runs (AVX2, AVX-512) give identical floats (same lane order, fused
// multiply-adds in all), and the generic loop is within float rounding of a
// float64 reference: |err| <= 1e-5 * scale * sum |x w| (+ |bias| * 2^-23),
// for K with and without a tail of fewer than 32, 1-4 rows (one row: the
// several-column decode steps and their leftover columns), and column
// ranges that start and end off those steps.
TEST(QuantizedKernelsTest, LinearInt8LoopsAgreeAndMatchReference) {
  constexpr int64_t kN = 21;
  uint32_t seed = 777;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int64_t k : {7, 32, 64, 288, 301}) {
    std::vector<float> x(k * quantized::kRowsInt8);
    std::vector<int8_t> weight(kN * k);
    std::vector<float> scales(kN), bias(kN);
    for (auto& v : x) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 8192;
    for (auto& v : weight) v = static_cast<int8_t>(next() >> 24);
    weight[0] = -128;
    weight[1] = 127;
    for (auto& v : scales) v = static_cast<float>((next() >> 20) + 1) / 65536;
    for (auto& v : bias) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 4096;
    for (bool with_bias : {false, true}) {
      for (int rows = 1; rows <= quantized::kRowsInt8; ++rows) {
        std::vector<float> a(rows * kN);
        quantized::RowsInt8 block{};
        block.x = x.data();
        block.rows = rows;
        block.weight = weight.data();
        block.scales = scales.data();
        block.bias = with_bias ? bias.data() : nullptr;
        block.k = k;
        block.n = kN;
        block.out = a.data();
        quantized::linear_int8_columns_generic(block, 0, kN);
        for (int r = 0; r < rows; ++r) {
          for (int64_t n = 0; n < kN; ++n) {
            double sum = 0, magnitude = 0;
            for (int64_t i = 0; i < k; ++i) {
              sum += static_cast<double>(x[r * k + i]) * weight[n * k + i];
              magnitude += std::abs(static_cast<double>(x[r * k + i]) * weight[n * k + i]);
            }
            const double b0 = with_bias ? bias[n] : 0.0;
            const double expected = sum * scales[n] + b0;
            const double tolerance = 1e-5 * magnitude * scales[n] + std::abs(b0) * 0x1p-23;
            EXPECT_NEAR(a[r * kN + n], expected, tolerance) << "k " << k << " row " << r;
          }
        }
        for (const quantized::QuantIsa isa :
             {quantized::QuantIsa::kAvx2, quantized::QuantIsa::kAvx512Vnni}) {
          if (!quantized::cpu_has_quant_isa(isa)) continue;
          const quantized::ColumnsInt8Fn columns = quantized::select_linear_int8(isa);
          for (const auto& [n_begin, n_end] : {std::pair<int64_t, int64_t>{0, kN}, {3, 18}, {5, 6}}) {
            std::vector<float> b(a.size(), -1.0f);
            block.out = b.data();
            columns(block, n_begin, n_end);
            for (int r = 0; r < rows; ++r) {
              for (int64_t n = 0; n < kN; ++n) {
                const float want = n >= n_begin && n < n_end ? a[r * kN + n] : -1.0f;
                ASSERT_EQ(b[r * kN + n], want)
                    << quantized::quant_isa_name(isa) << " k " << k << " rows " << rows << " bias "
                    << with_bias << " columns " << n_begin << ".." << n_end << " at " << r << ", " << n;
              }
            }
          }
        }
      }
    }
  }
}

// The pt2e int8 x int8 loops: the products are summed exactly in int32, so
// the generic and AVX2 loops give identical floats, equal to the exact sum
// scaled once (float rounding of the scale product only), for K with and
// without a tail of fewer than 16, extreme values (-128 x -128, zero point
// -128 and 127) and every row count of a block.
TEST(QuantizedKernelsTest, LinearQs8LoopsAgreeAndSumExactly) {
  constexpr int64_t kN = 19;
  uint32_t seed = 4242;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int64_t k : {5, 16, 288, 301}) {
    for (int32_t zero_point : {-128, -3, 0, 127}) {
      std::vector<int8_t> x(k * quantized::kRowsQs8), weight(kN * k);
      std::vector<float> scales(kN), bias(kN);
      for (auto& v : x) v = static_cast<int8_t>(next() >> 24);
      for (auto& v : weight) v = static_cast<int8_t>(next() >> 24);
      x[0] = weight[0] = -128;
      x[1] = weight[1] = 127;
      for (auto& v : scales) v = static_cast<float>((next() >> 20) + 1) / 65536;
      for (auto& v : bias) v = static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 4096;
      for (int rows = 1; rows <= quantized::kRowsQs8; ++rows) {
        std::vector<float> a(rows * kN), b(rows * kN);
        quantized::RowsQs8 block{};
        block.x = x.data();
        block.rows = rows;
        block.zero_point = zero_point;
        block.x_scale = 0.0137f;
        block.weight = weight.data();
        block.scales = scales.data();
        block.bias = bias.data();
        block.k = k;
        block.n = kN;
        block.out = a.data();
        quantized::linear_qs8_columns_generic(block, 0, kN);
        for (int r = 0; r < rows; ++r) {
          for (int64_t n = 0; n < kN; ++n) {
            int64_t sum = 0;
            for (int64_t i = 0; i < k; ++i) {
              sum += (int64_t{x[r * k + i]} - zero_point) * weight[n * k + i];
            }
            const float expected =
                static_cast<float>(sum) * (block.x_scale * scales[n]) + bias[n];
            ASSERT_EQ(a[r * kN + n], expected) << "k " << k << " zp " << zero_point << " row " << r;
          }
        }
#if defined(__x86_64__) || defined(_M_X64)
        if (__builtin_cpu_supports("avx2")) {
          block.out = b.data();
          quantized::linear_qs8_columns_avx2(block, 0, kN);
          EXPECT_EQ(a, b) << "k " << k << " zp " << zero_point << " rows " << rows;
        }
#endif
      }
    }
  }
}

// linear_qs8 as a program runs it (prepared, scratch, weight constant or
// not, one and two threads): calls of many rows (on AMX tiles where the CPU
// has them, K % 4 == 0) give each row exactly what that row gives alone.
TEST(QuantizedKernelsTest, LinearQs8ManyRowsEqualEachRowAlone) {
  const Kernel& kernel = find("torchlight::linear_qs8.out");
  constexpr SizesType kN = 37;
  uint32_t seed = 4711;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  std::vector<uint8_t> method(1 << 20), temp(1 << 20);
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const SizesType k : {100, 99, 288}) {
      TestTensor weight(ScalarType::kChar, {kN, k});
      TestTensor scales(ScalarType::kFloat, {kN});
      TestTensor bias(ScalarType::kFloat, {kN});
      for (int64_t i = 0; i < weight.numel(); ++i) weight.set(i, static_cast<int8_t>(next() >> 24));
      for (int64_t i = 0; i < kN; ++i) {
        scales.set(i, ((next() >> 20) + 1) / 65536.0);
        bias.set(i, (static_cast<int32_t>(next() >> 16) - 32768) / 4096.0);
      }
      for (const SizesType rows : {33, 70}) {
        TestTensor input(ScalarType::kChar, {rows, k});
        for (int64_t i = 0; i < input.numel(); ++i) input.set(i, static_cast<int8_t>(next() >> 24));
        for (const uint64_t constants : {uint64_t{0}, uint64_t{1} << 3}) {  // The weight.
          TestTensor out(ScalarType::kFloat, {rows, kN});
          KernelArgs args{input.evalue(),  EValue(0.03), EValue(int64_t{-5}), weight.evalue(),
                          scales.evalue(), bias.evalue(), out.evalue(),       EValue()};
          MemoryAllocator method_allocator(method.data(), static_cast<uint32_t>(method.size()));
          MemoryAllocator temp_allocator(temp.data(), static_cast<uint32_t>(temp.size()));
          const Status status =
              call_kernel(kernel, args.span(), &method_allocator, &temp_allocator, constants);
          ASSERT_TRUE(status.ok()) << status.message();
          for (SizesType r = 0; r < rows; ++r) {
            TestTensor one(ScalarType::kChar, {1, k});
            for (SizesType i = 0; i < k; ++i) one.set(i, input.get(r * k + i));
            TestTensor one_out(ScalarType::kFloat, {1, kN});
            KernelArgs single{one.evalue(),    EValue(0.03),  EValue(int64_t{-5}), weight.evalue(),
                              scales.evalue(), bias.evalue(), one_out.evalue(),    EValue()};
            ASSERT_TRUE(call_kernel(kernel, single.span(), nullptr).ok());
            for (SizesType n = 0; n < kN; ++n) {
              ASSERT_EQ(out.get(r * kN + n), one_out.get(n))
                  << "k " << k << " rows " << rows << " row " << r << " column " << n
                  << " threads " << threads << " constants " << constants;
            }
          }
        }
      }
    }
  }
  threadpool::set_num_threads(threads_before);
}

// linear_qs8.out(input, input_scale, input_zero_point, weight, weight_scales, bias, *, out):
// what a program fixes (dtypes, K, the static scale and zero point) fails at load;
// the .Tensor_out overload reads its scale and zero point at run time.
TEST(QuantizedKernelsTest, LinearQs8ChecksAtLoadAndRunsBothOverloads) {
  const Kernel& kernel = find("torchlight::linear_qs8.out");
  struct Bad {
    ScalarType input_dtype;
    SizesType weight_k;
    double scale;
    int64_t zero_point;
    const char* message;
  };
  const Bad bads[] = {
      {ScalarType::kFloat, 8, 0.1, 0, "argument 'input' has dtype float32, expected int8"},
      {ScalarType::kChar, 6, 0.1, 0, "argument 'weight' has 6 columns, expected K = 8"},
      {ScalarType::kChar, 8, 0.0, 0, "argument 'input_scale' is 0"},
      {ScalarType::kChar, 8, 0.1, 128, "argument 'input_zero_point' is 128, expected -128..127"},
  };
  TestTensor scales(ScalarType::kFloat, {3}, {0.5, 0.25, 0.125});
  for (const Bad& bad : bads) {
    TestTensor input(bad.input_dtype, {2, 8});
    TestTensor weight(ScalarType::kChar, {3, bad.weight_k});
    TestTensor out(ScalarType::kFloat, {2, 3});
    KernelArgs args{input.evalue(),  EValue(bad.scale), EValue(bad.zero_point), weight.evalue(),
                    scales.evalue(), EValue(),          out.evalue(),           EValue()};
    PreparedCall call;
    const Status status = prepare_kernel_call(kernel, args.span(), nullptr, &call);
    ASSERT_FALSE(status.ok()) << bad.message;
    EXPECT_NE(std::string(status.message()).find(bad.message), std::string::npos)
        << status.message();
  }
  // x = [[1, 2], [-3, 4]] - zp 1, w = [[1, -1], [2, 0], [0, 3]] (K = 2, N = 3).
  TestTensor input(ScalarType::kChar, {2, 2}, {2, 3, -2, 5});
  TestTensor weight(ScalarType::kChar, {3, 2}, {1, -1, 2, 0, 0, 3});
  TestTensor bias(ScalarType::kFloat, {3}, {1, 0, -1});
  const std::vector<double> expected{1 + 0.5 * 0.5 * -1, 0.5 * 0.25 * 2, -1 + 0.5 * 0.125 * 6,
                                     1 + 0.5 * 0.5 * -7, 0.5 * 0.25 * -6, -1 + 0.5 * 0.125 * 12};
  TestTensor out(ScalarType::kFloat, {2, 3});
  KernelArgs good{input.evalue(),  EValue(0.5), EValue(int64_t{1}), weight.evalue(),
                  scales.evalue(), bias.evalue(), out.evalue(),     EValue()};
  ASSERT_TRUE(call_kernel(kernel, good.span(), nullptr).ok());
  EXPECT_EQ(out.values(), expected);

  const Kernel& tensor_kernel = find("torchlight::linear_qs8.Tensor_out");
  TestTensor scale(ScalarType::kDouble, {1}, {0.5});
  TestTensor zero_point(ScalarType::kLong, {1}, {1});
  TestTensor out2(ScalarType::kFloat, {2, 3});
  KernelArgs tensor_args{input.evalue(),  scale.evalue(), zero_point.evalue(), weight.evalue(),
                         scales.evalue(), bias.evalue(),  out2.evalue(),       EValue()};
  ASSERT_TRUE(call_kernel(tensor_kernel, tensor_args.span(), nullptr).ok());
  EXPECT_EQ(out2.values(), expected);
  TestTensor two_scales(ScalarType::kFloat, {2}, {0.5, 0.5});
  KernelArgs bad_scale{input.evalue(),  two_scales.evalue(), zero_point.evalue(), weight.evalue(),
                       scales.evalue(), bias.evalue(),       out2.evalue(),       EValue()};
  const Status status = call_kernel(tensor_kernel, bad_scale.span(), nullptr);
  EXPECT_NE(std::string(status.message()).find("argument 'input_scale' must have one element"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace torchlight
