// MobileNetV2's 1x1 (pointwise) layers in int8 on AVX2: what bounds them.
// Per layer, one thread, wall time (best of N rounds, each side in turn):
//  - XNNPACK's qs8-qc8w convolution (on AVX2 its 3x8c8 GEMM: products of
//    8 along K per 128 bits, summed horizontally per output at the end);
//  - XNNPACK's fp32 convolution on the same shape;
//  - a prototype in this file (not shipped): 4 rows x 16 outputs a step,
//    each pair of K broadcast against 16 outputs' weight pairs (vpmaddwd +
//    vpaddd, no horizontal sums), the input zero point folded into the
//    bias, XNNPACK's fp32 requantization; it prints how many outputs
//    differ from XNNPACK's int8 ones (it should be none).
// So the table says how far an int8 1x1 of our own could go on this core,
// against the fp32 time the fused fp32 blocks are measured by.
//
//   ./torchlight exec build/release/bench/xnnpack/torchlight_xnnpack_pw_floor [rounds]
#include <immintrin.h>
#include <xnnpack.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bench/xnnpack/wall_time.h"

namespace {

struct Layer {
  size_t in_c, out_c, hw;
};

// MobileNetV2's 1x1 layers whose outputs come in 16s (all its expands).
constexpr Layer kLayers[] = {{32, 16, 112}, {16, 96, 112}, {24, 144, 56}, {32, 192, 28},
                             {64, 384, 14}, {96, 576, 14}, {160, 960, 7}, {320, 1280, 7}};

constexpr int8_t kInZp = -5, kOutZp = -128, kOutMin = -128, kOutMax = 127;
constexpr float kInScale = 0.05f, kOutScale = 0.03f;

// Weights as int16 pairs of K per 16 outputs: group g, pair p at
// (g * pairs + p) * 32, output j's two weights at 2 j and 2 j + 1.
struct Packed {
  size_t pairs;
  std::vector<int16_t> w;
  std::vector<int32_t> bias;  // Less the input zero point's share.
  std::vector<float> scale;
};

Packed pack(const std::vector<int8_t>& w, const std::vector<int32_t>& b,
            const std::vector<float>& scale, size_t k, size_t n) {
  Packed p;
  p.pairs = (k + 1) / 2;
  p.w.assign(n / 16 * p.pairs * 32, 0);
  p.bias.resize(n);
  p.scale = scale;
  for (size_t o = 0; o < n; ++o) {
    int32_t sum = 0;
    for (size_t i = 0; i < k; ++i) {
      p.w[(o / 16 * p.pairs + i / 2) * 32 + o % 16 * 2 + i % 2] = w[o * k + i];
      sum += w[o * k + i];
    }
    p.bias[o] = static_cast<int32_t>(static_cast<uint32_t>(b[o]) -
                                     static_cast<uint32_t>(kInZp) * static_cast<uint32_t>(sum));
  }
  return p;
}

__attribute__((target("avx2"))) void pw_int8(const Packed& p, const int8_t* in, int8_t* out,
                                             size_t m, size_t k, size_t n) {
  const __m256 max_less_zp = _mm256_set1_ps(static_cast<float>(kOutMax - kOutZp));
  const __m256i zp_out = _mm256_set1_epi16(kOutZp);
  const __m128i out_min = _mm_set1_epi8(kOutMin);
  alignas(32) int16_t rows[4][1024];  // K <= 1024 here: the tile's inputs widened.
  for (size_t r0 = 0; r0 < m; r0 += 4) {
    for (size_t r = 0; r < 4; ++r) {
      const size_t row = r0 + r < m ? r0 + r : m - 1;
      for (size_t i = 0; i < 2 * p.pairs; ++i) rows[r][i] = i < k ? in[row * k + i] : 0;
    }
    for (size_t g = 0; g < n / 16; ++g) {
      const int16_t* wg = p.w.data() + g * p.pairs * 32;
      __m256i acc[4][2];
      for (size_t r = 0; r < 4; ++r) {
        acc[r][0] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&p.bias[g * 16]));
        acc[r][1] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&p.bias[g * 16 + 8]));
      }
      for (size_t q = 0; q < p.pairs; ++q) {
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + q * 32));
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wg + q * 32 + 16));
        for (size_t r = 0; r < 4; ++r) {
          int32_t pair;
          std::memcpy(&pair, &rows[r][2 * q], 4);
          const __m256i a = _mm256_set1_epi32(pair);
          acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(a, b0));
          acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(a, b1));
        }
      }
      const __m256 s0 = _mm256_loadu_ps(&p.scale[g * 16]), s1 = _mm256_loadu_ps(&p.scale[g * 16 + 8]);
      for (size_t r = 0; r < 4 && r0 + r < m; ++r) {
        const __m256 f0 = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][0]), s0), max_less_zp);
        const __m256 f1 = _mm256_min_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[r][1]), s1), max_less_zp);
        // packs_epi32 interleaves 128-bit lanes: outputs 0-3, 8-11, 4-7, 12-15.
        const __m256i v16 = _mm256_adds_epi16(
            _mm256_permute4x64_epi64(
                _mm256_packs_epi32(_mm256_cvtps_epi32(f0), _mm256_cvtps_epi32(f1)), 0xD8),
            zp_out);
        const __m128i v8 = _mm_max_epi8(
            _mm_packs_epi16(_mm256_castsi256_si128(v16), _mm256_extracti128_si256(v16, 1)),
            out_min);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + (r0 + r) * n + g * 16), v8);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  if (xnn_initialize(nullptr) != xnn_status_success || !__builtin_cpu_supports("avx2")) {
    std::printf("needs XNNPACK and AVX2\n");
    return 1;
  }
  using torchlight::bench::best_ms;
  double sum[3] = {0, 0, 0};
  std::printf("%-20s | %9s %9s %9s | %7s %7s | %6s\n", "layer", "f32 xnn", "int8 xnn", "proto",
              "i8/f32", "pr/f32", "differ");
  for (const Layer& l : kLayers) {
    const size_t m = l.hw * l.hw, k = l.in_c, n = l.out_c;
    std::vector<int8_t> x(m * k + 64), w(n * k), y0(m * n + 64), y1(m * n + 64);
    std::vector<int32_t> b(n);
    std::vector<float> wscale(n), scale(n);
    for (size_t i = 0; i < x.size(); ++i) x[i] = int8_t(int((i * 2654435761u) >> 13) % 256 - 128);
    for (size_t i = 0; i < w.size(); ++i) w[i] = int8_t(int((i * 40503u) >> 5) % 255 - 127);
    for (size_t i = 0; i < n; ++i) {
      b[i] = int32_t(i * 37 % 2001) - 1000;
      wscale[i] = 0.002f + 0.0001f * float(i % 13);
      scale[i] = kInScale * wscale[i] / kOutScale;
    }
    xnn_operator_t op = nullptr, op32 = nullptr;
    size_t ws = 0, align = 0, ws32 = 0;
    std::vector<float> xf(m * k + 16, 0.5f), wf(n * k, 0.01f), bf(n, 0.1f), yf(m * n);
    if (xnn_create_convolution2d_nhwc_qs8_qc8w(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, k, n, k, n, kInZp,
                                               kInScale, wscale.data(), w.data(), b.data(),
                                               kOutZp, kOutScale, kOutMin, kOutMax, 0, nullptr,
                                               nullptr, &op) != xnn_status_success ||
        xnn_reshape_convolution2d_nhwc_qs8_qc8w(op, 1, l.hw, l.hw, &ws, &align, nullptr, nullptr,
                                                nullptr) != xnn_status_success ||
        xnn_create_convolution2d_nhwc_f32(0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, k, n, k, n, wf.data(),
                                          bf.data(), 0.0f, 6.0f, 0, nullptr, nullptr,
                                          &op32) != xnn_status_success ||
        xnn_reshape_convolution2d_nhwc_f32(op32, 1, l.hw, l.hw, &ws32, &align, nullptr, nullptr,
                                           nullptr) != xnn_status_success) {
      return 1;
    }
    std::vector<char> wsb(ws + 64), wsb32(ws32 + 64);
    if (xnn_setup_convolution2d_nhwc_qs8_qc8w(op, wsb.data(), x.data(), y0.data()) !=
            xnn_status_success ||
        xnn_setup_convolution2d_nhwc_f32(op32, wsb32.data(), xf.data(), yf.data()) !=
            xnn_status_success) {
      return 1;
    }
    const Packed p = pack(w, b, scale, k, n);
    double t[3] = {1e30, 1e30, 1e30};
    for (int r = 0; r < rounds; ++r) {  // Each side in turn, so load spreads evenly.
      t[0] = std::min(t[0], best_ms(1, 10, [&] { xnn_run_operator(op32, nullptr); }));
      t[1] = std::min(t[1], best_ms(1, 10, [&] { xnn_run_operator(op, nullptr); }));
      t[2] = std::min(t[2], best_ms(1, 10, [&] { pw_int8(p, x.data(), y1.data(), m, k, n); }));
    }
    size_t differ = 0;
    for (size_t i = 0; i < m * n; ++i) differ += y0[i] != y1[i];
    xnn_delete_operator(op);
    xnn_delete_operator(op32);
    char name[48];
    std::snprintf(name, sizeof(name), "1x1 %zu->%zu @%zu", k, n, l.hw);
    std::printf("%-20s | %9.3f %9.3f %9.3f | %7.2f %7.2f | %6zu\n", name, t[0], t[1], t[2],
                t[1] / t[0], t[2] / t[0], differ);
    for (int i = 0; i < 3; ++i) sum[i] += t[i];
  }
  std::printf("these layers once each: fp32 XNNPACK %.3f ms, int8 XNNPACK %.3f ms (%.2fx), "
              "prototype %.3f ms (%.2fx)\n",
              sum[0], sum[1], sum[1] / sum[0], sum[2], sum[2] / sum[0]);
  return 0;
}
