// MobileNetV2's classifier (1 x 1280 -> 1000, fp32) on XNNPACK's
// fully-connected operator and on Torchlight's gemm (its matrix-vector
// path), wall time per call, best of N rounds of 200 calls, 1 and 2
// threads: what a classifier-sized, weight-bound linear costs on each.
//
//   ./torchlight exec build/release/bench/xnnpack/torchlight_xnnpack_fc_floor [rounds] [k] [n]
#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench/xnnpack/wall_time.h"

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"

int main(int argc, char** argv) {
  using namespace torchlight;
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 5;
  const size_t k = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1280;
  const size_t n = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 1000;
  if (xnn_initialize(nullptr) != xnn_status_success) return 1;
  std::vector<float> x(k + 16), w(n * k), b(n), y0(n), y1(n);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.1f * i);
  for (size_t i = 0; i < k; ++i) x[i] = std::cos(0.3f * i);
  for (size_t i = 0; i < n; ++i) b[i] = 0.01f * i;
  std::printf("fc 1 x %zu -> %zu fp32 (%.1f MB of weights)\n", k, n, n * k * 4 / 1e6);
  for (size_t threads : {1, 2}) {
    threadpool::set_num_threads(threads);
    xnn_operator_t op = nullptr;
    if (xnn_create_fully_connected_nc_f32(k, n, k, n, w.data(), b.data(), -INFINITY, INFINITY, 0,
                                          nullptr, nullptr, &op) != xnn_status_success ||
        xnn_reshape_fully_connected_nc_f32(op, 1, threadpool::native_pool()) !=
            xnn_status_success ||
        xnn_setup_fully_connected_nc_f32(op, x.data(), y0.data()) != xnn_status_success) {
      return 1;
    }
    threadpool::yield_to_native_pool();
    const double xnn = bench::best_ms(rounds, 200,
                                      [&] { xnn_run_operator(op, threadpool::native_pool()); });
    threadpool::park_native_pool();
    optimized::GemmProblem p;
    p.m = 1, p.n = static_cast<int64_t>(n), p.k = static_cast<int64_t>(k);
    p.a = {x.data(), static_cast<int64_t>(k), 1};
    p.b = {w.data(), 1, static_cast<int64_t>(k)};
    p.c = y1.data(), p.ldc = static_cast<int64_t>(n);
    p.beta = 1.0f, p.addend = {b.data(), 0, 1};
    const double ours = bench::best_ms(rounds, 200, [&] { (void)optimized::gemm(p); });
    float diff = 0;
    for (size_t i = 0; i < n; ++i) diff = std::max(diff, std::fabs(y0[i] - y1[i]));
    std::printf("threads %zu: XNNPACK %.3f ms  gemm %.3f ms  (%.2fx)  max diff %.2g\n", threads,
                xnn, ours, ours / xnn, diff);
    xnn_delete_operator(op);
  }
  return 0;
}
