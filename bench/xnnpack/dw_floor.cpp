// MobileNetV2's depthwise 3x3 layers (batch 1, NHWC, depth multiplier 1),
// fp32 and int8 (qs8 activations, per-channel qc8w weights, XNNPACK's fp32
// requantization), on XNNPACK's convolution operator and on ours, one
// thread, wall time, best of N rounds per layer:
//  - fp32 (AVX-512 CPUs only): a prototype in this file that keeps the 9
//    taps in registers (one load per product against XNNPACK's input,
//    weight and pointer loads); it prints the largest difference from
//    XNNPACK's output. Not shipped: it is no faster (these layers are bound
//    by moving their activations);
//  - int8: the delegate's depthwise_qs8 kernel (backends/xnnpack), each
//    variant the CPU has (AVX2's 256-bit vpmaddwd, AVX-512's, VNNI); it
//    prints how many outputs differ from XNNPACK's (the kernel promises
//    none).
//
//   ./torchlight exec build/release/bench/xnnpack/torchlight_xnnpack_dw_floor [rounds]
#include <immintrin.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/xnnpack/wall_time.h"

#include "backends/xnnpack/depthwise_qs8.h"

namespace {

struct Layer {
  size_t channels, in_hw, stride, count;
};

// torchvision mobilenet_v2's depthwise layers by shape (count: how many).
constexpr Layer kLayers[] = {
    {32, 112, 1, 1}, {96, 112, 2, 1}, {144, 56, 1, 1}, {144, 56, 2, 1}, {192, 28, 1, 2},
    {192, 28, 2, 1}, {384, 14, 1, 4}, {576, 14, 1, 2}, {576, 14, 2, 1}, {960, 7, 1, 3},
};

struct Shape {
  ptrdiff_t in_hw, channels, out_hw, stride;  // Padding 1 on every side.
};


// --- fp32: packed per 16 channels as 9 taps then the bias. ---------------
std::vector<float> pack_f32(const std::vector<float>& w, const std::vector<float>& b, size_t c) {
  std::vector<float> p((c + 15) / 16 * 160, 0.0f);
  for (size_t ch = 0; ch < c; ++ch) {
    float* blk = p.data() + ch / 16 * 160 + ch % 16;
    for (size_t t = 0; t < 9; ++t) blk[t * 16] = w[t * c + ch];
    blk[144] = b[ch];
  }
  return p;
}

__attribute__((target("avx512f"))) void dw_f32(const Shape& s, const float* packed,
                                               const float* in, float* out, float lo_v,
                                               float hi_v) {
  const __m512 lo = _mm512_set1_ps(lo_v), hi = _mm512_set1_ps(hi_v);
  const ptrdiff_t c = s.channels;
  for (ptrdiff_t oy = 0; oy < s.out_hw; ++oy) {
    const float* rows[3];
    for (ptrdiff_t ky = 0; ky < 3; ++ky) {
      const ptrdiff_t iy = oy * s.stride - 1 + ky;
      rows[ky] = iy >= 0 && iy < s.in_hw ? in + iy * s.in_hw * c : nullptr;
    }
    for (ptrdiff_t ox0 = 0; ox0 < s.out_hw; ox0 += 8) {
      const ptrdiff_t tile = std::min<ptrdiff_t>(8, s.out_hw - ox0);
      for (ptrdiff_t ch = 0; ch < c; ch += 16) {
        const float* wp = packed + ch / 16 * 160;
        __m512 w[9];
        for (int t = 0; t < 9; ++t) w[t] = _mm512_loadu_ps(wp + 16 * t);
        const __m512 bias = _mm512_loadu_ps(wp + 144);
        for (ptrdiff_t i = 0; i < tile; ++i) {
          const ptrdiff_t ix0 = (ox0 + i) * s.stride - 1;
          __m512 acc = bias;
          for (int ky = 0; ky < 3; ++ky) {
            if (rows[ky] == nullptr) continue;
            for (int kx = 0; kx < 3; ++kx) {
              const ptrdiff_t ix = ix0 + kx;
              if (ix < 0 || ix >= s.in_hw) continue;
              acc = _mm512_fmadd_ps(_mm512_loadu_ps(rows[ky] + ix * c + ch), w[3 * ky + kx], acc);
            }
          }
          _mm512_storeu_ps(out + (oy * s.out_hw + ox0 + i) * c + ch,
                           _mm512_min_ps(_mm512_max_ps(acc, lo), hi));
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 10;
  using torchlight::xnnpack::DepthwiseQs8Isa;
  if (xnn_initialize(nullptr) != xnn_status_success ||
      !torchlight::xnnpack::depthwise_qs8_supported()) {
    std::printf("needs XNNPACK and AVX2\n");
    return 1;
  }
  const bool f32_prototype = __builtin_cpu_supports("avx512f");
  const DepthwiseQs8Isa best = torchlight::xnnpack::depthwise_qs8_isa();
  const DepthwiseQs8Isa variants[] = {DepthwiseQs8Isa::kAvx2, DepthwiseQs8Isa::kAvx512,
                                      DepthwiseQs8Isa::kVnni};
  const char* variant_names[] = {"avx2", "avx512", "vnni"};
  double tx[2] = {0, 0}, to = 0, tv[3] = {0, 0, 0};
  std::printf("%-18s %5s | %8s %8s %6s %8s | %8s", "layer", "count", "f32 xnn", "ours", "o/x",
              "max diff", "int8 xnn");
  for (int v = 0; v < 3; ++v) {
    if (variants[v] <= best) std::printf(" %8s %6s", variant_names[v], "v/x");
  }
  std::printf(" %6s\n", "differ");
  for (const Layer& l : kLayers) {
    const size_t c = l.channels, in_hw = l.in_hw;
    const size_t out_hw = (in_hw + 2 - 3) / l.stride + 1;
    const Shape shape{ptrdiff_t(in_hw), ptrdiff_t(c), ptrdiff_t(out_hw), ptrdiff_t(l.stride)};
    const size_t in_n = in_hw * in_hw * c, out_n = out_hw * out_hw * c;
    // fp32
    std::vector<float> x(in_n + 16), w(9 * c + 16), b(c + 16), y0(out_n + 16), y1(out_n + 16);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.01f * i);
    for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.37f * i);
    for (size_t i = 0; i < c; ++i) b[i] = 0.1f * std::sin(1.0f * i);
    xnn_operator_t op = nullptr;
    size_t ws_size = 0, ws_align = 0;
    if (xnn_create_convolution2d_nhwc_f32(1, 1, 1, 1, 3, 3, l.stride, l.stride, 1, 1, c, 1, 1, c,
                                          c, w.data(), b.data(), 0.0f, 6.0f,
                                          XNN_FLAG_DEPTHWISE_CONVOLUTION, nullptr, nullptr,
                                          &op) != xnn_status_success ||
        xnn_reshape_convolution2d_nhwc_f32(op, 1, in_hw, in_hw, &ws_size, &ws_align, nullptr,
                                           nullptr, nullptr) != xnn_status_success) {
      return 1;
    }
    std::vector<char> ws(ws_size + 64);
    if (xnn_setup_convolution2d_nhwc_f32(op, ws.data(), x.data(), y0.data()) !=
        xnn_status_success) {
      return 1;
    }
    const std::vector<float> packed = pack_f32(w, b, c);
    using torchlight::bench::best_ms;
    const double fx = best_ms(rounds, 20, [&] { xnn_run_operator(op, nullptr); });
    double fo = 0;
    float diff = 0;
    if (f32_prototype) {
      fo = best_ms(rounds, 20, [&] { dw_f32(shape, packed.data(), x.data(), y1.data(), 0, 6); });
      for (size_t i = 0; i < out_n; ++i) diff = std::max(diff, std::fabs(y0[i] - y1[i]));
    }
    xnn_delete_operator(op);
    // int8
    // XNNPACK may read a few entries past its arrays: each gets slack.
    std::vector<int8_t> qx(in_n + 64), qw(9 * c + 64), q0(out_n + 64), q1(out_n + 64);
    std::vector<int32_t> qb(c + 64);
    std::vector<float> wscale(c + 64), rscale(c);
    for (size_t i = 0; i < qx.size(); ++i) qx[i] = int8_t(int((i * 2654435761u) >> 13) % 256 - 128);
    for (size_t i = 0; i < qw.size(); ++i) qw[i] = int8_t(int((i * 40503u) >> 5) % 255 - 127);
    const float in_scale = 0.05f, out_scale = 0.2f;
    const int8_t in_zp = -3, out_zp = 5, out_min = -128 + 40, out_max = 127;
    for (size_t i = 0; i < c; ++i) {
      qb[i] = int32_t(i * 37 % 2001) - 1000;
      wscale[i] = 0.002f + 0.0001f * float(i % 13);
      rscale[i] = in_scale * wscale[i] / out_scale;
    }
    if (xnn_create_convolution2d_nhwc_qs8_qc8w(1, 1, 1, 1, 3, 3, l.stride, l.stride, 1, 1, c, 1,
                                               1, c, c, in_zp, in_scale, wscale.data(),
                                               qw.data(), qb.data(), out_zp, out_scale, out_min,
                                               out_max, XNN_FLAG_DEPTHWISE_CONVOLUTION, nullptr,
                                               nullptr, &op) != xnn_status_success ||
        xnn_reshape_convolution2d_nhwc_qs8_qc8w(op, 1, in_hw, in_hw, &ws_size, &ws_align,
                                                nullptr, nullptr, nullptr) != xnn_status_success) {
      return 1;
    }
    ws.assign(ws_size + 64, 0);
    if (xnn_setup_convolution2d_nhwc_qs8_qc8w(op, ws.data(), qx.data(), q0.data()) !=
        xnn_status_success) {
      return 1;
    }
    using torchlight::xnnpack::DepthwiseQs8Quant;
    using torchlight::xnnpack::DepthwiseQs8Shape;
    std::vector<uint8_t> qp_memory(torchlight::xnnpack::depthwise_qs8_packed_bytes(c) + 64);
    void* qp = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(qp_memory.data()) + 63) &
                                       ~uintptr_t{63});
    torchlight::xnnpack::pack_depthwise_qs8(qw.data(), qb.data(), rscale.data(), c, qp);
    DepthwiseQs8Shape qs;
    qs.in_h = qs.in_w = in_hw, qs.channels = c, qs.out_h = qs.out_w = out_hw;
    qs.stride_h = qs.stride_w = l.stride, qs.pad_top = qs.pad_left = 1;
    const DepthwiseQs8Quant qq{in_zp, out_zp, out_min, out_max};
    const double ix = best_ms(rounds, 20, [&] { xnn_run_operator(op, nullptr); });
    double iv[3] = {0, 0, 0};
    size_t differ = 0;
    for (int v = 0; v < 3; ++v) {
      if (variants[v] > best) continue;
      torchlight::xnnpack::depthwise_qs8_cap_isa(variants[v]);
      std::fill(q1.begin(), q1.end(), int8_t{0});
      iv[v] = best_ms(rounds, 20, [&] {
        torchlight::xnnpack::depthwise_qs8_rows(qs, qq, qp, qx.data(), q1.data(), 0, out_hw);
      });
      for (size_t i = 0; i < out_n; ++i) differ += q0[i] != q1[i];
      tv[v] += iv[v] * l.count;
    }
    torchlight::xnnpack::depthwise_qs8_cap_isa(DepthwiseQs8Isa::kVnni);
    xnn_delete_operator(op);
    char name[64];
    std::snprintf(name, sizeof(name), "dw %zu @%zu /%zu", c, in_hw, l.stride);
    char f32_ours[48] = "       -      -        -";  // No prototype without AVX-512.
    if (f32_prototype) std::snprintf(f32_ours, sizeof(f32_ours), "%8.3f %6.2f %8.2g", fo, fo / fx, diff);
    std::printf("%-18s %5zu | %8.3f %s | %8.3f", name, l.count, fx, f32_ours, ix);
    for (int v = 0; v < 3; ++v) {
      if (variants[v] <= best) std::printf(" %8.3f %6.2f", iv[v], iv[v] / ix);
    }
    std::printf(" %6zu\n", differ);
    tx[0] += fx * l.count, to += fo * l.count, tx[1] += ix * l.count;
  }
  std::printf("all depthwise layers: fp32 XNNPACK %.3f ms", tx[0]);
  if (f32_prototype) std::printf(", ours %.3f ms (%.2fx)", to, to / tx[0]);
  std::printf("; int8 XNNPACK %.3f ms", tx[1]);
  for (int v = 0; v < 3; ++v) {
    if (variants[v] <= best) {
      std::printf(", %s %.3f ms (%.2fx)", variant_names[v], tv[v], tv[v] / tx[1]);
    }
  }
  std::printf("\n");
  return 0;
}
