// ResNet-18's (or MobileNetV2's) convolution layers (batch 1, 224x224 input, fp32 NHWC) run
// directly through XNNPACK's operator API on one thread, with no Torchlight
// code involved: the time XNNPACK itself needs for them. Compare it with
// the delegate's 1-thread latency from bench/xnnpack_compare.py; the
// difference is what our integration (and the few non-conv ops) costs.
// Beside it, the same layers on Torchlight's own NHWC convolution (im2col +
// the optimized GEMM, kernels/optimized/conv/conv2d.h, same OHWI weights),
// and for 3x3 stride-1 layers Winograd F(2x2, 3x3) (winograd_f2x3.h; the
// delegate picks it where winograd_f2x3_preferred); the ratio of the path conv2d runs to
// XNNPACK, and the largest difference between their outputs.
//
//   ./torchlight exec build/release/bench/xnnpack/torchlight_xnnpack_conv_floor [runs] [model]
//
// model: resnet18 (default) or mobilenet_v2 (its stem and 1x1 layers).
// Also the same layers on XNNPACK's int8 operator (qs8 activations,
// per-channel qc8w weights, fp32 requantization: what an int8 program
// built by XNNPACKQuantizer runs), and its time against XNNPACK's fp32.
// Our side runs on the GEMM's active set: on AMX CPUs its AMX path with
// the filter split beforehand; TORCHLIGHT_GEMM_ISA=avx512 for AVX-512.
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/conv/conv2d.h"
#include "kernels/optimized/conv/winograd_f2x3.h"
#include "kernels/optimized/gemm/owned_workspace.h"

namespace {

struct Conv {
  const char* name;
  size_t in_c, out_c, kernel, stride, pad, in_hw, count;  // count: layers of this shape
};

// torchvision resnet18: stem, then per stage its 3x3 convs and 1x1 downsample.
constexpr Conv kResnet18[] = {
    {"conv1 7x7/2 3->64", 3, 64, 7, 2, 3, 224, 1},
    {"layer1 3x3 64->64", 64, 64, 3, 1, 1, 56, 4},
    {"layer2 3x3/2 64->128", 64, 128, 3, 2, 1, 56, 1},
    {"layer2 3x3 128->128", 128, 128, 3, 1, 1, 28, 3},
    {"layer2 1x1/2 64->128", 64, 128, 1, 2, 0, 56, 1},
    {"layer3 3x3/2 128->256", 128, 256, 3, 2, 1, 28, 1},
    {"layer3 3x3 256->256", 256, 256, 3, 1, 1, 14, 3},
    {"layer3 1x1/2 128->256", 128, 256, 1, 2, 0, 28, 1},
    {"layer4 3x3/2 256->512", 256, 512, 3, 2, 1, 14, 1},
    {"layer4 3x3 512->512", 512, 512, 3, 1, 1, 7, 3},
    {"layer4 1x1/2 256->512", 256, 512, 1, 2, 0, 14, 1},
};

// torchvision mobilenet_v2: the stem and every 1x1 (pointwise) convolution,
// by shape (the depthwise ones have groups and stay on XNNPACK).
constexpr Conv kMobilenetV2[] = {
    {"stem 3x3/2 3->32", 3, 32, 3, 2, 1, 224, 1},
    {"1x1 32->16 @112", 32, 16, 1, 1, 0, 112, 1},
    {"1x1 16->96 @112", 16, 96, 1, 1, 0, 112, 1},
    {"1x1 96->24 @56", 96, 24, 1, 1, 0, 56, 1},
    {"1x1 24->144 @56", 24, 144, 1, 1, 0, 56, 2},
    {"1x1 144->24 @56", 144, 24, 1, 1, 0, 56, 1},
    {"1x1 144->32 @28", 144, 32, 1, 1, 0, 28, 1},
    {"1x1 32->192 @28", 32, 192, 1, 1, 0, 28, 3},
    {"1x1 192->32 @28", 192, 32, 1, 1, 0, 28, 2},
    {"1x1 192->64 @14", 192, 64, 1, 1, 0, 14, 1},
    {"1x1 64->384 @14", 64, 384, 1, 1, 0, 14, 4},
    {"1x1 384->64 @14", 384, 64, 1, 1, 0, 14, 3},
    {"1x1 384->96 @14", 384, 96, 1, 1, 0, 14, 1},
    {"1x1 96->576 @14", 96, 576, 1, 1, 0, 14, 3},
    {"1x1 576->96 @14", 576, 96, 1, 1, 0, 14, 2},
    {"1x1 576->160 @7", 576, 160, 1, 1, 0, 7, 1},
    {"1x1 160->960 @7", 160, 960, 1, 1, 0, 7, 3},
    {"1x1 960->160 @7", 960, 160, 1, 1, 0, 7, 2},
    {"1x1 960->320 @7", 960, 320, 1, 1, 0, 7, 1},
    {"1x1 320->1280 @7", 320, 1280, 1, 1, 0, 7, 1},
};

size_t out_hw(const Conv& c) { return (c.in_hw + 2 * c.pad - c.kernel) / c.stride + 1; }

// This thread's CPU time: on a shared machine, time spent descheduled does
// not count (everything runs on this one thread).
double now_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// The best CPU time of `runs` runs of `op` (after 3 unmeasured ones).
double best_run_ms(xnn_operator_t op, int runs) {
  double best = 1e30;
  for (int r = 0; r < runs + 3; ++r) {
    const double start = now_ms();
    xnn_run_operator(op, /*threadpool=*/nullptr);
    if (r >= 3) best = std::min(best, now_ms() - start);
  }
  return best;
}

// Best thread CPU time of layer `c` on XNNPACK's qs8-qc8w convolution
// (ReLU6-like output range, as MobileNetV2's are), or -1 on failure.
double xnnpack_int8_ms(const Conv& c, int runs) {
  const size_t oh = out_hw(c);
  std::vector<int8_t> weights(c.out_c * c.kernel * c.kernel * c.in_c);
  std::vector<int32_t> bias(c.out_c);
  std::vector<float> scales(c.out_c);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = int8_t(int(i * 40503u >> 5) % 255 - 127);
  for (size_t i = 0; i < c.out_c; ++i) bias[i] = int32_t(i * 37 % 2001) - 1000;
  for (size_t i = 0; i < c.out_c; ++i) scales[i] = 0.002f + 0.0001f * float(i % 13);
  std::vector<int8_t> input(c.in_hw * c.in_hw * c.in_c + XNN_EXTRA_BYTES, 3);
  std::vector<int8_t> output(oh * oh * c.out_c);
  xnn_operator_t op = nullptr;
  xnn_status s = xnn_create_convolution2d_nhwc_qs8_qc8w(
      c.pad, c.pad, c.pad, c.pad, c.kernel, c.kernel, c.stride, c.stride, 1, 1, 1, c.in_c,
      c.out_c, c.in_c, c.out_c, /*input_zero_point=*/-5, 0.05f, scales.data(), weights.data(),
      bias.data(), /*output_zero_point=*/-128, 0.03f, -128, 127, 0, nullptr, nullptr, &op);
  size_t workspace_size = 0, workspace_alignment = 0;
  if (s == xnn_status_success) {
    s = xnn_reshape_convolution2d_nhwc_qs8_qc8w(op, 1, c.in_hw, c.in_hw, &workspace_size,
                                                &workspace_alignment, nullptr, nullptr, nullptr);
  }
  std::vector<char> workspace(workspace_size + 64);
  void* aligned = workspace.data() + (64 - reinterpret_cast<uintptr_t>(workspace.data()) % 64) % 64;
  if (s == xnn_status_success) {
    s = xnn_setup_convolution2d_nhwc_qs8_qc8w(op, aligned, input.data(), output.data());
  }
  if (s != xnn_status_success) {
    std::fprintf(stderr, "%s: XNNPACK int8 status %d\n", c.name, static_cast<int>(s));
    return -1;
  }
  const double best = best_run_ms(op, runs);
  xnn_delete_operator(op);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  const bool mobilenet = argc > 2 && std::strcmp(argv[2], "mobilenet_v2") == 0;
  if (argc > 2 && !mobilenet && std::strcmp(argv[2], "resnet18") != 0) {
    std::fprintf(stderr, "unknown model '%s' (resnet18 or mobilenet_v2)\n", argv[2]);
    return 1;
  }
  const Conv* const convs = mobilenet ? kMobilenetV2 : kResnet18;
  const size_t num_convs = mobilenet ? std::size(kMobilenetV2) : std::size(kResnet18);
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::fprintf(stderr, "xnn_initialize failed\n");
    return 1;
  }
  // One thread: parallel_for runs inline, so this thread's CPU time is all of it.
  torchlight::threadpool::set_num_threads(1);
  torchlight::optimized::OwnedGemmWorkspace gemm_workspace(1);
  double total_ms = 0, total_gflop = 0, ours_total_ms = 0, int8_total_ms = 0;
  std::printf("%-24s %6s %10s %9s %8s %10s %9s %7s %9s %9s %7s\n", "layer", "count", "GFLOP",
              "xnn ms", "GFLOP/s", "im2col ms", "wino ms", "ours/x", "max diff", "int8 ms",
              "i8/x");
  for (size_t layer = 0; layer < num_convs; ++layer) {
    const Conv& c = convs[layer];
    const size_t oh = out_hw(c);
    std::vector<float> weights(c.out_c * c.kernel * c.kernel * c.in_c);
    std::vector<float> bias(c.out_c);
    for (size_t i = 0; i < weights.size(); ++i) weights[i] = std::sin(0.37f * i) * 0.05f;
    for (size_t i = 0; i < bias.size(); ++i) bias[i] = 0.01f * i;
    // XNN_EXTRA_BYTES of slack: XNNPACK may read (never write) past the end.
    std::vector<float> input(c.in_hw * c.in_hw * c.in_c + XNN_EXTRA_BYTES / sizeof(float), 0.5f);
    std::vector<float> output(oh * oh * c.out_c);
    xnn_operator_t op = nullptr;
    xnn_status s = xnn_create_convolution2d_nhwc_f32(
        c.pad, c.pad, c.pad, c.pad, c.kernel, c.kernel, c.stride, c.stride, 1, 1, /*groups=*/1,
        c.in_c, c.out_c, c.in_c, c.out_c, weights.data(), bias.data(), 0.0f, INFINITY,
        /*flags=*/0, /*weights_cache=*/nullptr, /*weights_cache=*/nullptr, &op);
    size_t workspace_size = 0, workspace_alignment = 0;
    if (s == xnn_status_success) {
      s = xnn_reshape_convolution2d_nhwc_f32(op, 1, c.in_hw, c.in_hw, &workspace_size,
                                             &workspace_alignment, nullptr, nullptr, nullptr);
    }
    std::vector<char> workspace(workspace_size + 64);
    void* aligned = workspace.data() + (64 - reinterpret_cast<uintptr_t>(workspace.data()) % 64) % 64;
    if (s == xnn_status_success) {
      s = xnn_setup_convolution2d_nhwc_f32(op, aligned, input.data(), output.data());
    }
    if (s != xnn_status_success) {
      std::fprintf(stderr, "%s: XNNPACK status %d\n", c.name, static_cast<int>(s));
      return 1;
    }
    const double best = best_run_ms(op, runs);
    xnn_delete_operator(op);

    torchlight::optimized::Conv2dProblem p;
    p.geometry.in_channels = static_cast<int64_t>(c.in_c);
    p.geometry.in_h = p.geometry.in_w = static_cast<int64_t>(c.in_hw);
    p.geometry.out_channels = static_cast<int64_t>(c.out_c);
    p.geometry.kernel_h = p.geometry.kernel_w = static_cast<int64_t>(c.kernel);
    p.geometry.stride_h = p.geometry.stride_w = static_cast<int64_t>(c.stride);
    p.geometry.pad_h = p.geometry.pad_w = static_cast<int64_t>(c.pad);
    p.geometry.out_h = p.geometry.out_w = static_cast<int64_t>(oh);
    p.layout = torchlight::optimized::ConvLayout::kNhwc;
    std::vector<float> columns(torchlight::optimized::conv2d_columns_floats(p.geometry));
    std::vector<float> ours_output(output.size());
    p.input = input.data();
    p.weight = weights.data();
    p.bias = bias.data();
    p.output = ours_output.data();
    p.columns = columns.data();
    p.workspace = gemm_workspace.get();
    // On AMX CPUs the delegate splits each filter once at init: so here.
    const size_t split_bytes = torchlight::optimized::gemm_amx_split_bytes(
        p.geometry.out_channels, p.geometry.patch());
    std::vector<char> split(split_bytes + 64);
    char* split_aligned = split.data() + (64 - reinterpret_cast<uintptr_t>(split.data()) % 64) % 64;
    if (split_bytes > 0 &&
        torchlight::optimized::gemm_amx_split_weight(weights.data(), p.geometry.patch(),
                                                     p.geometry.out_channels, p.geometry.patch(),
                                                     split_aligned)) {
      p.weight_amx_split = split_aligned;
    }
    double ours_best = 1e30;
    for (int r = 0; r < runs + 3; ++r) {
      const double start = now_ms();
      if (!torchlight::optimized::conv2d(p).ok()) {
        std::fprintf(stderr, "%s: Torchlight conv2d failed\n", c.name);
        return 1;
      }
      if (r >= 3) ours_best = std::min(ours_best, now_ms() - start);
    }
    double wino_best = 0;
    // Timed wherever it applies; "ours/x" uses it only where preferred.
    if (torchlight::optimized::winograd_f2x3_applies(p.geometry)) {
      std::vector<float> transformed(
          torchlight::optimized::winograd_f2x3_filter_floats(p.geometry.in_channels, p.geometry.out_channels));
      torchlight::optimized::winograd_f2x3_transform_filter(weights.data(), p.geometry.in_channels,
                                                            p.geometry.out_channels, transformed.data());
      std::vector<float> scratch(torchlight::optimized::winograd_f2x3_scratch_floats(p.geometry) + 16);
      float* aligned_scratch = scratch.data() + (16 - reinterpret_cast<uintptr_t>(scratch.data()) / 4 % 16) % 16;
      wino_best = 1e30;
      for (int r = 0; r < runs + 3; ++r) {
        const double start = now_ms();
        if (!torchlight::optimized::winograd_f2x3_conv2d(p, transformed.data(), aligned_scratch).ok()) {
          std::fprintf(stderr, "%s: Winograd conv2d failed\n", c.name);
          return 1;
        }
        if (r >= 3) wino_best = std::min(wino_best, now_ms() - start);
      }
    }
    const double chosen =
        torchlight::optimized::winograd_f2x3_preferred(p.geometry) ? wino_best : ours_best;
    double max_diff = 0;
    for (size_t i = 0; i < output.size(); ++i) {
      // The XNNPACK operator clamps to [0, inf) (a fused ReLU, as ResNet's are).
      const float ours_relu = std::max(ours_output[i], 0.0f);
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(output[i] - ours_relu)));
    }
    const double gflop = 2.0 * oh * oh * c.out_c * c.in_c * c.kernel * c.kernel * 1e-9;
    const double int8_best = xnnpack_int8_ms(c, runs);
    if (int8_best < 0) return 1;
    char wino_text[16] = "-";
    if (wino_best > 0) std::snprintf(wino_text, sizeof(wino_text), "%.3f", wino_best * c.count);
    std::printf("%-24s %6zu %10.3f %9.3f %8.1f %10.3f %9s %7.2f %9.2g %9.3f %7.2f\n", c.name,
                c.count, gflop * c.count, best * c.count, gflop / best * 1e3, ours_best * c.count,
                wino_text, chosen / best, max_diff, int8_best * c.count, int8_best / best);
    total_ms += best * c.count;
    int8_total_ms += int8_best * c.count;
    ours_total_ms += chosen * c.count;
    total_gflop += gflop * c.count;
  }
  std::printf("\nall convolutions: %.3f GFLOP (best of %d per layer, 1 thread, thread CPU time):\n"
              "  XNNPACK    %8.2f ms = %5.1f GFLOP/s\n  Torchlight %8.2f ms = %5.1f GFLOP/s"
              "  (%.2fx XNNPACK's time)\n",
              total_gflop, runs, total_ms, total_gflop / total_ms * 1e3, ours_total_ms,
              total_gflop / ours_total_ms * 1e3, ours_total_ms / total_ms);
  std::printf("  XNNPACK int8 %6.2f ms = %5.1f GOP/s  (%.2fx XNNPACK fp32's time)\n",
              int8_total_ms, total_gflop / int8_total_ms * 1e3, int8_total_ms / total_ms);
  return 0;
}
