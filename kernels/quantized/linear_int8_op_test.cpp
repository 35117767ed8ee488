// torchlight::linear_int8.out as a program runs it (prepare, then eval with
// method memory for scratch), on whatever path this CPU takes: the loops
// (below 4 rows, or without AMX), the AMX-INT8 tiles (4 rows or more with
// QuantIsa::kAmx), the dequantized GEMM (64 rows or more otherwise), at one
// and two threads, against float64: within 1e-5 of |scale| sum |x w| +
// |bias| on the float paths, within linear_int8_amx.h's bound on the tiles
// (2^-22 of |scale| max|x| sum|w|, roughly); and a row with inf or NaN
// gives the loops' floats for every row (the tiles fall back to them).
// One row on AVX-512 VNNI (the digit loop, linear_int8_vnni.h) within that
// path's bound, with the weight a program constant (column sums from
// prepare) or not; a non-finite row there gives the float loop's floats.
// One row on AVX2 without VNNI (the int16-digit loop,
// linear_int8_int16_digits.h) within that path's bound, and bit for bit its
// portable reference at 1 and 2 threads and model shapes, up to the largest
// K it takes; past that K, and for a non-finite row, the float loop's floats.
// ctest also runs these with TORCHLIGHT_QUANT_ISA=avx2 and =generic (the
// float loops at one row).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/chunk_slots.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_int8_int16_digits.h"
#include "kernels/quantized/linear_int8_vnni.h"
#include "kernels/quantized/quantized_kernels.h"

namespace torchlight {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;

const Kernel& linear_int8_kernel() {
  for (const Kernel& k : quantized_kernels()) {
    if (std::strcmp(k.name, "torchlight::linear_int8.out") == 0) return k;
  }
  ADD_FAILURE() << "no kernel torchlight::linear_int8.out";
  return quantized_kernels()[0];
}

constexpr SizesType kK = 100, kN = 37;

struct OpRun {
  std::vector<float> x, scales, bias, out;
  std::vector<int8_t> weight;
  SizesType k = kK, n = kN;
};

OpRun make_run(SizesType rows, uint32_t seed, SizesType k = kK, SizesType n = kN) {
  OpRun r;
  r.k = k;
  r.n = n;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int64_t i = 0; i < rows * k; ++i) {
    r.x.push_back(std::ldexp(static_cast<float>(static_cast<int32_t>(next() >> 8) - (1 << 23)) / (1 << 23),
                             static_cast<int>(next() >> 28) - 8));
  }
  for (int64_t i = 0; i < n * k; ++i) r.weight.push_back(static_cast<int8_t>(next() >> 24));
  for (int64_t i = 0; i < n; ++i) r.scales.push_back(static_cast<float>((next() >> 20) + 1) / 65536);
  for (int64_t i = 0; i < n; ++i) r.bias.push_back(static_cast<float>(static_cast<int32_t>(next() >> 16) - 32768) / 4096);
  return r;
}

void run_op(SizesType rows, OpRun* r, uint64_t constant_args = 0) {
  const SizesType k = r->k, n = r->n;
  TestTensor input(ScalarType::kFloat, {1, rows, k});
  TestTensor weight(ScalarType::kChar, {n, k});
  TestTensor scales(ScalarType::kFloat, {n});
  TestTensor bias(ScalarType::kFloat, {n});
  for (size_t i = 0; i < r->x.size(); ++i) input.set(static_cast<int64_t>(i), r->x[i]);
  for (size_t i = 0; i < r->weight.size(); ++i) weight.set(static_cast<int64_t>(i), r->weight[i]);
  for (int64_t i = 0; i < n; ++i) {
    scales.set(i, r->scales[i]);
    bias.set(i, r->bias[i]);
  }
  TestTensor out(ScalarType::kFloat, {1, rows, n});
  KernelArgs args{input.evalue(), weight.evalue(), scales.evalue(), bias.evalue(), out.evalue(), EValue()};
  std::vector<uint8_t> method(8 << 20);
  MemoryAllocator allocator(method.data(), static_cast<uint32_t>(method.size()));
  const Status status = call_kernel(linear_int8_kernel(), args.span(), &allocator, nullptr, constant_args);
  ASSERT_TRUE(status.ok()) << status.message();
  r->out.resize(static_cast<size_t>(rows * n));
  for (size_t i = 0; i < r->out.size(); ++i) r->out[i] = static_cast<float>(out.get(static_cast<int64_t>(i)));
}

// The loop quant_isa() picks, in blocks of kRowsInt8 (the op's fallback below 64 rows).
std::vector<float> run_loops(SizesType rows, const OpRun& r) {
  const SizesType k = r.k, n = r.n;
  std::vector<float> out(static_cast<size_t>(rows * n));
  const quantized::ColumnsInt8Fn columns = quantized::select_linear_int8();
  for (int64_t r0 = 0; r0 < rows; r0 += quantized::kRowsInt8) {
    quantized::RowsInt8 block{};
    block.x = r.x.data() + r0 * k;
    block.rows = static_cast<int>(std::min<int64_t>(quantized::kRowsInt8, rows - r0));
    block.weight = r.weight.data();
    block.scales = r.scales.data();
    block.bias = r.bias.data();
    block.k = k;
    block.n = n;
    block.out = out.data() + r0 * n;
    columns(block, 0, n);
  }
  return out;
}

// Every output of a run against float64, within the bound of the path the
// op takes (the AMX tiles' from 4 rows with AMX, else the float loops').
void check_float64(SizesType rows, const OpRun& r, size_t threads) {
  const SizesType k = r.k, width = r.n;
  const bool tiles = rows >= 4 && quantized::quant_isa() == quantized::QuantIsa::kAmx;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t n = 0; n < width; ++n) {
      double sum = 0, magnitude = 0, m = 0, weights = 0;
      for (int64_t i = 0; i < k; ++i) {
        sum += static_cast<double>(r.x[row * k + i]) * r.weight[n * k + i];
        magnitude += std::fabs(static_cast<double>(r.x[row * k + i]) * r.weight[n * k + i]);
        m = std::max(m, std::fabs(static_cast<double>(r.x[row * k + i])));
        weights += std::abs(r.weight[n * k + i]);
      }
      const double want = sum * r.scales[n] + r.bias[n];
      const double bound =
          tiles ? r.scales[n] * (m * weights / (127 * 65536.0) + std::ldexp(1.0, -23) * (magnitude + m * weights / 64)) +
                      std::ldexp(1.0, -24) * std::fabs(want)
                : 1e-5 * (magnitude * r.scales[n] + std::fabs(r.bias[n]));
      ASSERT_NEAR(r.out[row * width + n], want, bound) << "rows " << rows << " k " << k << " n " << width
                                                    << " threads " << threads << " row " << row << " column " << n;
    }
  }
}

TEST(LinearInt8OpTest, EveryPathMatchesFloat64) {
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const SizesType rows : {1, 3, 4, 7, 8, 16, 17, 20, 33, 40, 47, 48, 49, 63, 64, 65, 70, 128, 129, 300}) {
      OpRun r = make_run(rows, 99 + static_cast<uint32_t>(rows));
      run_op(rows, &r);
      check_float64(rows, r, threads);
    }
  }
  threadpool::set_num_threads(threads_before);
}

// Model-sized K (with and without a tail past 64) and N wide enough that
// the AMX tiles cut the columns into several groups of blocks (at K = 288
// up to 25 blocks of 16 a group, at 768 10, at 2048 8), some groups ending
// in a part block; at 2 threads each thread's rows meet every group.
TEST(LinearInt8OpTest, ModelShapesInSeveralColumnGroupsMatchFloat64) {
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const auto& [k, n] : {std::pair<SizesType, SizesType>{288, 805}, {768, 341}, {2048, 200}}) {
      for (const SizesType rows : {1, 47, 128, 129}) {
        OpRun r = make_run(rows, 7 + static_cast<uint32_t>(rows + k), k, n);
        run_op(rows, &r);
        check_float64(rows, r, threads);
      }
    }
  }
  threadpool::set_num_threads(threads_before);
}

// The AMX row chunks' slots (chunk_slots.h): a thread's first claim is
// fresh, its later ones find the same slot, other threads get others, and
// threads past the limit get none.
TEST(ChunkSlotsTest, EachThreadKeepsItsOwnSlot) {
  quantized::ChunkSlots slots(2);
  bool fresh = false;
  ASSERT_EQ(slots.mine(&fresh), 0);
  EXPECT_TRUE(fresh);
  ASSERT_EQ(slots.mine(&fresh), 0);
  EXPECT_FALSE(fresh);
  int64_t other = -2, again = -2, third = -2;
  bool other_fresh = false, again_fresh = true;
  // A third thread while the second is alive (a joined thread's id may be
  // reused; a pool's threads all live through a job).
  std::thread([&] {
    other = slots.mine(&other_fresh);
    std::thread([&] { third = slots.mine(&fresh); }).join();
    again = slots.mine(&again_fresh);
  }).join();
  EXPECT_EQ(other, 1);
  EXPECT_TRUE(other_fresh);
  EXPECT_EQ(again, 1);
  EXPECT_FALSE(again_fresh);
  EXPECT_EQ(third, -1);
  EXPECT_EQ(slots.mine(&fresh), 0);  // Still the first thread's.
  EXPECT_FALSE(fresh);
}

// A non-finite activation in either block of 16 rows (split by different
// threads at 2), or in either thread's rows of a 63-row call (split by
// rows at 2 threads), sends the whole call to the loops.
TEST(LinearInt8OpTest, NonFiniteRowsGiveTheLoopsResult) {
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const SizesType rows : {20, 63}) {
      for (const int64_t bad_row : {int64_t{13}, int64_t{17}, int64_t{rows - 1}}) {
        for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
          OpRun r = make_run(rows, 5);
          r.x[bad_row * kK + 50] = bad;
          run_op(rows, &r);
          const std::vector<float> want = run_loops(rows, r);
          for (size_t i = 0; i < want.size(); ++i) {
            if (std::isnan(want[i])) {
              ASSERT_TRUE(std::isnan(r.out[i])) << "element " << i;
            } else {
              ASSERT_EQ(r.out[i], want[i]) << "element " << i << " (" << bad << " in row " << bad_row
                                           << " of " << rows << ", threads " << threads << ")";
            }
          }
        }
      }
    }
  }
  threadpool::set_num_threads(threads_before);
}

// One row: on AVX-512 VNNI within linear_int8_vnni.h's bound,
// |scale| max|x| sum|w| / (127 * 2^16) + 2^-24 |exact|; on AVX2 within
// linear_int8_int16_digits.h's, |scale| 2^-29 max|x| sum|w| + 2^-24 |exact|
// (2^(e - 30) <= 2^-29 max|x|); else the float loop's 1e-5.
TEST(LinearInt8OpTest, OneRowWithinItsPathsBound) {
  const bool vnni = quantized::linear_int8_takes_vnni(kK);
  const bool int16_digits = quantized::linear_int8_takes_int16_digits(kK);
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const uint64_t constant_args : {uint64_t{0}, uint64_t{1} << 1}) {
      for (const uint32_t seed : {1u, 2u, 3u}) {
        OpRun r = make_run(1, seed);
        if (seed == 3) r.x[10] = 1.0e20f;  // one huge value among small ones
        run_op(1, &r, constant_args);
        for (int64_t n = 0; n < kN; ++n) {
          double sum = 0, magnitude = 0, abs_w = 0, m = 0;
          for (int64_t i = 0; i < kK; ++i) {
            const double x = r.x[i], w = r.weight[n * kK + i];
            sum += x * w;
            magnitude += std::fabs(x * w);
            abs_w += std::fabs(w);
            m = std::fmax(m, std::fabs(x));
          }
          const double want = sum * r.scales[n] + r.bias[n];
          const double bound =
              vnni           ? r.scales[n] * m * abs_w / (127.0 * 65536.0) + std::ldexp(std::fabs(want), -24)
              : int16_digits ? r.scales[n] * std::ldexp(m * abs_w, -29) + std::ldexp(std::fabs(want), -24)
                             : 1e-5 * (magnitude * r.scales[n] + std::fabs(r.bias[n]));
          ASSERT_NEAR(r.out[n], want, bound) << "threads " << threads << " constant " << constant_args
                                             << " seed " << seed << " column " << n;
        }
      }
    }
  }
  threadpool::set_num_threads(threads_before);
}

TEST(LinearInt8OpTest, NonFiniteOneRowGivesTheFloatLoop) {
  for (const float bad : {std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    OpRun r = make_run(1, 8);
    r.x[50] = bad;
    run_op(1, &r, uint64_t{1} << 1);
    const std::vector<float> want = run_loops(1, r);
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        ASSERT_TRUE(std::isnan(r.out[i])) << "element " << i;
      } else {
        ASSERT_EQ(r.out[i], want[i]) << "element " << i << " (" << bad << ")";
      }
    }
  }
}

// The int16-digit loop's reference (linear_int8_int16_digits.h) over every column.
std::vector<float> int16_digits_reference(const OpRun& r) {
  std::vector<int16_t> digits(quantized::int16_digit_bytes(r.k) / sizeof(int16_t));
  quantized::RowInt8Int16Digits row{};
  EXPECT_TRUE(quantized::split_row_int16_digits_generic(r.x.data(), r.k, digits.data(), &row.exponent));
  std::vector<float> out(static_cast<size_t>(r.n));
  row.digits = digits.data();
  row.plane = quantized::int16_digit_plane(r.k);
  row.weight = r.weight.data();
  row.scales = r.scales.data();
  row.bias = r.bias.data();
  row.k = r.k;
  row.out = out.data();
  quantized::linear_int8_int16_digits_generic(row, 0, r.n);
  return out;
}

void expect_same_floats(const std::vector<float>& got, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
        << what << " column " << i << ": " << got[i] << " against " << want[i];
  }
}

// One row on the AVX2 int16-digit loop: its reference's floats through the
// op at 1 and 2 threads (2048 x 200 and 65536 x 21 are past 2^18
// multiply-adds, so their columns split over the pool in chunks of 16, the
// last one part), up to the largest K it takes; one K more, the float
// loop's floats.
TEST(LinearInt8OpTest, OneRowInt16DigitsGiveTheirReference) {
  if (!quantized::linear_int8_takes_int16_digits(kK)) GTEST_SKIP() << "the one-row loop here is not the int16 digits'";
  const size_t threads_before = threadpool::num_threads();
  for (const size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const auto& [k, n] : {std::pair<SizesType, SizesType>{kK, kN}, {288, 805}, {768, 341}, {2048, 200},
                               {static_cast<SizesType>(quantized::kMaxKInt16Digits), 21}}) {
      OpRun r = make_run(1, 31 + static_cast<uint32_t>(k), k, n);
      run_op(1, &r);
      expect_same_floats(r.out, int16_digits_reference(r),
                         "k " + std::to_string(k) + " threads " + std::to_string(threads));
    }
  }
  threadpool::set_num_threads(threads_before);
  OpRun past = make_run(1, 77, static_cast<SizesType>(quantized::kMaxKInt16Digits + 1), 21);
  run_op(1, &past);
  expect_same_floats(past.out, run_loops(1, past), "past the largest K");
}

}  // namespace
}  // namespace torchlight
