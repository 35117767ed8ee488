// MobileNetV2's early inverted-residual blocks (batch 1, NHWC, fp32, ReLU6
// after the expand and the depthwise), two ways, at 1 and 2 threads:
//  - BM_xnnpack: as the delegate runs them on XNNPACK now: 1x1 expand,
//    depthwise 3x3 and 1x1 projection operators (+ an add operator), each
//    over whole tensors;
//  - BM_fused: kernels/optimized/fused/inverted_residual.h, each thread a
//    band of output rows with its expanded rows in its scratch.
// Both run on one pthreadpool of the given size. BM_fused first checks its
// output against XNNPACK's (fails the benchmark past 1e-5 of the output's
// largest magnitude) and reports the largest difference as `rel_diff`.
//
//   ./torchlight exec build/release/bench/xnnpack/torchlight_xnnpack_fused_block
//       --benchmark_repetitions=20 --benchmark_min_time=0.05s
//       --benchmark_report_aggregates_only=true (one command line): on a
//       shared machine the `_min` rows (best repetition) are the ones to compare.
#include <benchmark/benchmark.h>
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/optimized/fused/inverted_residual.h"

namespace {

using torchlight::optimized::InvertedResidualIsa;
using torchlight::optimized::InvertedResidualShape;

struct Block {
  const char* name;
  size_t hw, in_c, expanded, out_c, stride;
  bool expand, residual;
  bool amx = false;  // The delegate runs it on the kAmx variant where allowed.
};

// torchvision mobilenet_v2's blocks, each shape once (in the model
// 32>192@28>32+ and 160>960@7>160+ run twice, 64>384@14>64+ and
// 96>576@14>96+ three and two times).
constexpr Block kBlocks[] = {
    {"dw32@112>16", 112, 32, 32, 16, 1, false, false},
    {"16>96@112s2>24", 112, 16, 96, 24, 2, true, false},
    {"24>144@56>24+", 56, 24, 144, 24, 1, true, true},
    {"24>144@56s2>32", 56, 24, 144, 32, 2, true, false},
    {"32>192@28>32+", 28, 32, 192, 32, 1, true, true},
    {"32>192@28s2>64", 28, 32, 192, 64, 2, true, false},
    // The later ones, whose 1x1 layers run on AMX tiles (kAmx) where allowed.
    {"64>384@14>64+", 14, 64, 384, 64, 1, true, true, true},
    {"64>384@14>96", 14, 64, 384, 96, 1, true, false, true},
    {"96>576@14>96+", 14, 96, 576, 96, 1, true, true, true},
    {"96>576@14s2>160", 14, 96, 576, 160, 2, true, false, true},
    {"160>960@7>160+", 7, 160, 960, 160, 1, true, true, true},
    {"160>960@7>320", 7, 160, 960, 320, 1, true, false, true},
};

InvertedResidualShape shape_of(const Block& b) {
  InvertedResidualShape s;
  s.in_h = s.in_w = b.hw;
  s.in_channels = b.in_c, s.expanded_channels = b.expanded, s.out_channels = b.out_c;
  s.stride = b.stride, s.has_expand = b.expand, s.residual = b.residual;
  s.expand_min = s.depthwise_min = 0.0f;
  s.expand_max = s.depthwise_max = 6.0f;
  return s;
}

std::vector<float> filled(size_t n, float scale, float phase) {
  std::vector<float> v(n + 16);
  for (size_t i = 0; i < v.size(); ++i) v[i] = scale * std::sin(phase * float(i) + 0.3f);
  return v;
}

// One block's tensors and weights (deterministic), the XNNPACK operators
// and the fused kernel's packing, on a pool of `threads`.
struct Setup {
  Block b;
  InvertedResidualShape shape;
  size_t out_hw;
  std::vector<float> x, we, be, wd, bd, wp, bp, expanded, dw, xnn_out, fused_out;
  pthreadpool_t pool = nullptr;
  xnn_operator_t ops[4] = {};
  std::vector<char> ws[3];
  InvertedResidualIsa isa = torchlight::optimized::inverted_residual_default_isa();
  float* packed = nullptr;
  float* scratch = nullptr;
  size_t scratch_floats = 0, bands = 1;
  bool ok = false;

  Setup(const Block& blk, size_t threads) : b(blk), shape(shape_of(blk)) {
    if (b.amx && torchlight::optimized::inverted_residual_amx_allowed()) {
      isa = InvertedResidualIsa::kAmx;
    }
    out_hw = shape.out_h();
    const size_t hw = b.hw;
    x = filled(hw * hw * b.in_c, 1.0f, 0.01f);
    we = filled(b.expanded * b.in_c, 0.3f, 0.37f), be = filled(b.expanded, 0.1f, 1.1f);
    wd = filled(9 * b.expanded, 0.4f, 0.23f), bd = filled(b.expanded, 0.1f, 0.7f);
    wp = filled(b.out_c * b.expanded, 0.2f, 0.13f), bp = filled(b.out_c, 0.1f, 0.9f);
    expanded.assign(hw * hw * b.expanded + 16, 0.0f);
    dw.assign(out_hw * out_hw * b.expanded + 16, 0.0f);
    xnn_out.assign(out_hw * out_hw * b.out_c + 16, 0.0f);
    fused_out = xnn_out;
    pool = pthreadpool_create(threads);
    bands = threads;
    ok = make_xnnpack() && make_fused();
  }
  ~Setup() {
    for (xnn_operator_t op : ops) {
      if (op != nullptr) xnn_delete_operator(op);
    }
    pthreadpool_destroy(pool);
    std::free(packed);
    std::free(scratch);
  }

  bool conv(size_t i, size_t hw, size_t k, size_t stride, size_t groups, size_t cin, size_t cout,
            const float* w, const float* bias, float lo, float hi, uint32_t flags,
            const float* in, float* out) {
    const size_t pad = k / 2;
    size_t size = 0, align = 0;
    if (xnn_create_convolution2d_nhwc_f32(pad, pad, pad, pad, k, k, stride, stride, 1, 1, groups,
                                          cin, cout, groups * cin, groups * cout, w, bias, lo, hi,
                                          flags, nullptr, nullptr, &ops[i]) != xnn_status_success ||
        xnn_reshape_convolution2d_nhwc_f32(ops[i], 1, hw, hw, &size, &align, nullptr, nullptr,
                                           pool) != xnn_status_success) {
      return false;
    }
    ws[i].assign(size + 64, 0);
    return xnn_setup_convolution2d_nhwc_f32(ops[i], ws[i].data(), in, out) == xnn_status_success;
  }

  bool make_xnnpack() {
    const float* dw_in = x.data();
    if (b.expand) {
      if (!conv(0, b.hw, 1, 1, 1, b.in_c, b.expanded, we.data(), be.data(), 0.0f, 6.0f, 0,
                x.data(), expanded.data())) {
        return false;
      }
      dw_in = expanded.data();
    }
    if (!conv(1, b.hw, 3, b.stride, b.expanded, 1, 1, wd.data(), bd.data(), 0.0f, 6.0f,
              XNN_FLAG_DEPTHWISE_CONVOLUTION, dw_in, dw.data()) ||
        !conv(2, out_hw, 1, 1, 1, b.expanded, b.out_c, wp.data(), bp.data(), -INFINITY, INFINITY,
              0, dw.data(), xnn_out.data())) {
      return false;
    }
    if (!b.residual) return true;
    const size_t dims[4] = {1, b.hw, b.hw, b.out_c};
    return xnn_create_binary_elementwise_nd(xnn_binary_add, xnn_datatype_fp32, nullptr, nullptr,
                                            nullptr, 0, &ops[3]) == xnn_status_success &&
           xnn_reshape_binary_elementwise_nd(ops[3], 4, dims, 4, dims, pool) ==
               xnn_status_success &&
           xnn_setup_binary_elementwise_nd(ops[3], xnn_out.data(), x.data(), xnn_out.data()) ==
               xnn_status_success;
  }

  bool make_fused() {
    using namespace torchlight::optimized;
    if (*inverted_residual_unsupported(shape) != '\0') return false;
    const size_t packed_floats = inverted_residual_packed_floats(shape, isa);
    scratch_floats = inverted_residual_scratch_floats(shape, isa);
    packed = static_cast<float*>(std::aligned_alloc(64, (packed_floats * 4 + 63) / 64 * 64));
    scratch = static_cast<float*>(
        std::aligned_alloc(64, (scratch_floats * bands * 4 + 63) / 64 * 64));
    pack_inverted_residual(shape, isa, we.data(), be.data(), wd.data(), bd.data(), wp.data(),
                           bp.data(), packed);
    return true;
  }

  void run_xnnpack() {
    for (xnn_operator_t op : ops) {
      if (op != nullptr) xnn_run_operator(op, pool);
    }
  }

  static void band(void* context, size_t i) {
    Setup* s = static_cast<Setup*>(context);
    const size_t rows = s->out_hw;
    torchlight::optimized::inverted_residual_rows(
        s->shape, s->isa, s->packed, s->x.data(), s->fused_out.data(), rows * i / s->bands,
        rows * (i + 1) / s->bands, s->scratch + i * s->scratch_floats);
  }
  void run_fused() { pthreadpool_parallelize_1d(pool, band, this, bands, 0); }

  // Largest |fused - xnnpack| over the largest |xnnpack|.
  double relative_difference() {
    run_xnnpack();
    run_fused();
    double diff = 0, mag = 0;
    for (size_t i = 0; i < out_hw * out_hw * b.out_c; ++i) {
      diff = std::max(diff, double(std::fabs(fused_out[i] - xnn_out[i])));
      mag = std::max(mag, double(std::fabs(xnn_out[i])));
    }
    return diff / std::max(mag, 1e-30);
  }
};

void BM_xnnpack(benchmark::State& state) {
  Setup s(kBlocks[state.range(0)], size_t(state.range(1)));
  if (!s.ok) {
    state.SkipWithError("XNNPACK setup failed");
    return;
  }
  state.SetLabel(s.b.name);
  for (auto _ : state) s.run_xnnpack();
}

void BM_fused(benchmark::State& state) {
  Setup s(kBlocks[state.range(0)], size_t(state.range(1)));
  if (!s.ok) {
    state.SkipWithError("setup failed");
    return;
  }
  const double rel = s.relative_difference();
  if (!(rel <= 1e-5)) {
    state.SkipWithError("fused output differs from XNNPACK's");
    return;
  }
  state.SetLabel(std::string(s.b.name) + " " + torchlight::optimized::to_string(s.isa));
  state.counters["rel_diff"] = rel;
  for (auto _ : state) s.run_fused();
}

// Each block's two ways side by side, so load changes hit both alike.
void register_all() {
  for (int64_t threads : {1, 2}) {
    for (int64_t i = 0; i < int64_t(sizeof(kBlocks) / sizeof(kBlocks[0])); ++i) {
      for (auto [name, fn] : {std::pair{"BM_xnnpack", BM_xnnpack}, std::pair{"BM_fused", BM_fused}}) {
        benchmark::RegisterBenchmark(name, fn)
            ->Args({i, threads})
            ->ArgNames({"block", "threads"})
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime()
            ->ComputeStatistics("min", [](const std::vector<double>& v) {
              return *std::min_element(v.begin(), v.end());
            });
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (xnn_initialize(nullptr) != xnn_status_success) {
    std::fprintf(stderr, "xnn_initialize failed\n");
    return 1;
  }
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
