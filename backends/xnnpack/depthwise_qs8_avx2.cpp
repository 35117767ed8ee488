// depthwise_qs8.h's kernel on AVX2: the same arithmetic as the AVX-512
// variants (taps paired in 16-bit lanes through vpmaddwd, XNNPACK's fp32
// requantization), 16 channels a step. It reads the same packed layout:
// a 32-channel block's 512-bit rows are two 256-bit halves, the first for
// channels 0-15 and the second for 16-31, each in the order 256-bit
// unpacklo/hi_epi16 leave them (depthwise_qs8.cpp's lane_channel).
//
// Why a kernel of its own on AVX2 CPUs: XNNPACK runs these layers with
// 32-bit multiplies (qs8-qc8w-dwconv-9p16c-avx2-mul32: a vpmulld per tap
// and 8 channels) where a vpmaddwd does two taps; on Zen 1 this takes
// 0.56-0.58x of its time on MobileNetV2's layers (bench/xnnpack/dw_floor.cpp).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backends/xnnpack/depthwise_qs8.h"
#include "backends/xnnpack/depthwise_qs8_layout.h"

namespace torchlight {
namespace xnnpack {
namespace {

constexpr size_t kBlock = kDepthwiseQs8Block;
constexpr size_t kWeightBytes = kDepthwiseQs8WeightBytes;
constexpr size_t kBlockBytes = kDepthwiseQs8BlockBytes;
constexpr ptrdiff_t kGroup = 16;  // Channels per step.
constexpr ptrdiff_t kTile = 8;    // Output pixels per pass over a group's weights.

// The packed weights, biases and scales of channels [ch, ch + 16).
struct Group {
  const uint8_t* weights;  // Row k (pair * 2 + half) at weights + 64 * k.
  const int32_t* bias;     // Half h at bias + 16 * h.
  const float* scale;      // Half h at scale + 16 * h.
};

Group group_at(const uint8_t* packed, ptrdiff_t ch) {
  const uint8_t* block = packed + static_cast<size_t>(ch) / kBlock * kBlockBytes;
  const size_t sub = static_cast<size_t>(ch) / kGroup % 2;  // Which 256-bit half of each row.
  return {block + 32 * sub, reinterpret_cast<const int32_t*>(block + kWeightBytes) + 8 * sub,
          reinterpret_cast<const float*>(block + kWeightBytes + kBlock * sizeof(int32_t)) +
              8 * sub};
}

// Constants of one call.
struct Requant {
  __m256 max_less_zp;
  __m256i zp_out;
  __m128i out_min;
};

// The int32 sums' start for one group: the bias less the input zero
// point's share, so taps need no subtraction (sum (x - zp) w = sum x w -
// zp sum w, exact in wrapping int32 as XNNPACK's own packing folds it) and
// padding taps read the zero point itself.
void start_sums(const Group& g, const __m256i* w, int8_t zero_point, __m256i* lo, __m256i* hi) {
  const __m256i zp = _mm256_set1_epi16(zero_point);
  *lo = _mm256_load_si256(reinterpret_cast<const __m256i*>(g.bias));
  *hi = _mm256_load_si256(reinterpret_cast<const __m256i*>(g.bias + 16));
  for (int pair = 0; pair < 5; ++pair) {
    *lo = _mm256_sub_epi32(*lo, _mm256_madd_epi16(zp, w[2 * pair]));
    *hi = _mm256_sub_epi32(*hi, _mm256_madd_epi16(zp, w[2 * pair + 1]));
  }
}

// 16 outputs of one pixel from its 9 taps (16 int8 each, raster order).
inline __m128i group_outputs(const int8_t* const* taps, const __m256i* w, __m256i acc_lo,
                             __m256i acc_hi, const Group& g, const Requant& r) {
  __m256i x[10];
  for (int t = 0; t < 9; ++t) {
    x[t] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(taps[t])));
  }
  x[9] = _mm256_setzero_si256();
  for (int pair = 0; pair < 5; ++pair) {
    const __m256i a = x[2 * pair], b = x[2 * pair + 1];
    acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), w[2 * pair]));
    acc_hi =
        _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), w[2 * pair + 1]));
  }
  const __m256 f_lo = _mm256_min_ps(
      _mm256_mul_ps(_mm256_cvtepi32_ps(acc_lo), _mm256_load_ps(g.scale)), r.max_less_zp);
  const __m256 f_hi = _mm256_min_ps(
      _mm256_mul_ps(_mm256_cvtepi32_ps(acc_hi), _mm256_load_ps(g.scale + 16)), r.max_less_zp);
  // packs_epi32 per 128-bit lane puts channels 0-7 in the low lane and 8-15
  // in the high one.
  const __m256i v16 = _mm256_adds_epi16(
      _mm256_packs_epi32(_mm256_cvtps_epi32(f_lo), _mm256_cvtps_epi32(f_hi)), r.zp_out);
  return _mm_max_epi8(
      _mm_packs_epi16(_mm256_castsi256_si128(v16), _mm256_extracti128_si256(v16, 1)), r.out_min);
}

}  // namespace

void depthwise_qs8_rows_avx2(const DepthwiseQs8Shape&, const DepthwiseQs8Quant&, const void*,
                             const int8_t*, int8_t*, size_t, size_t);

void depthwise_qs8_rows_avx2(const DepthwiseQs8Shape& s, const DepthwiseQs8Quant& q,
                             const void* packed, const int8_t* in, int8_t* out, size_t row_begin,
                             size_t row_end) {
  const ptrdiff_t c = static_cast<ptrdiff_t>(s.channels);
  const ptrdiff_t in_h = static_cast<ptrdiff_t>(s.in_h), in_w = static_cast<ptrdiff_t>(s.in_w);
  const ptrdiff_t out_w = static_cast<ptrdiff_t>(s.out_w);
  const ptrdiff_t stride_h = static_cast<ptrdiff_t>(s.stride_h);
  const ptrdiff_t stride_w = static_cast<ptrdiff_t>(s.stride_w);
  const Requant r{_mm256_set1_ps(static_cast<float>(q.output_max - q.output_zero_point)),
                  _mm256_set1_epi16(q.output_zero_point), _mm_set1_epi8(q.output_min)};
  alignas(16) int8_t zero_point[kGroup];  // What a tap in the padding reads.
  std::memset(zero_point, q.input_zero_point, sizeof(zero_point));
  alignas(16) int8_t tail_in[9][kGroup];  // A channel tail's taps, copied.
  const auto* blocks = static_cast<const uint8_t*>(packed);
  for (size_t row = row_begin; row < row_end; ++row) {
    const size_t n = row / s.out_h;
    const ptrdiff_t oy = static_cast<ptrdiff_t>(row % s.out_h);
    const int8_t* image = in + n * s.in_h * s.in_w * s.channels;
    const int8_t* rows[3];  // Null: a row of padding.
    for (ptrdiff_t ky = 0; ky < 3; ++ky) {
      const ptrdiff_t iy = oy * stride_h - static_cast<ptrdiff_t>(s.pad_top) + ky;
      rows[ky] = iy >= 0 && iy < in_h ? image + iy * in_w * c : nullptr;
    }
    int8_t* out_row = out + row * s.out_w * s.channels;
    for (ptrdiff_t ox0 = 0; ox0 < out_w; ox0 += kTile) {
      const ptrdiff_t tile = out_w - ox0 < kTile ? out_w - ox0 : kTile;
      for (ptrdiff_t ch = 0; ch < c; ch += kGroup) {
        const ptrdiff_t count = c - ch < kGroup ? c - ch : kGroup;
        const Group g = group_at(blocks, ch);
        __m256i w[10];
        for (int k = 0; k < 10; ++k) {
          w[k] = _mm256_load_si256(reinterpret_cast<const __m256i*>(g.weights + 64 * k));
        }
        __m256i acc_lo, acc_hi;
        start_sums(g, w, q.input_zero_point, &acc_lo, &acc_hi);
        for (ptrdiff_t i = 0; i < tile; ++i) {
          const ptrdiff_t ix0 = (ox0 + i) * stride_w - static_cast<ptrdiff_t>(s.pad_left);
          const int8_t* taps[9];
          for (int ky = 0; ky < 3; ++ky) {
            for (int kx = 0; kx < 3; ++kx) {
              const ptrdiff_t ix = ix0 + kx;
              taps[3 * ky + kx] = rows[ky] != nullptr && ix >= 0 && ix < in_w
                                      ? rows[ky] + ix * c + ch
                                      : zero_point;
            }
          }
          int8_t* dst = out_row + (ox0 + i) * c + ch;
          if (count == kGroup) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                             group_outputs(taps, w, acc_lo, acc_hi, g, r));
            continue;
          }
          // A tail: copy its taps in, its outputs out.
          for (int t = 0; t < 9; ++t) {
            std::memcpy(tail_in[t], taps[t], static_cast<size_t>(count));
            taps[t] = tail_in[t];
          }
          alignas(16) int8_t tail_out[kGroup];
          _mm_store_si128(reinterpret_cast<__m128i*>(tail_out),
                          group_outputs(taps, w, acc_lo, acc_hi, g, r));
          std::memcpy(dst, tail_out, static_cast<size_t>(count));
        }
      }
    }
  }
}

}  // namespace xnnpack
}  // namespace torchlight
