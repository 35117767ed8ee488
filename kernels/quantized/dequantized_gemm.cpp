#include "kernels/quantized/dequantized_gemm.h"

#include <algorithm>
#include <atomic>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/column_chunks.h"
#include "runtime/core/result.h"

namespace torchlight::quantized {
namespace {

// A panel holds at most this many weight floats (2 MiB): the whole weight
// of a small model's linear, a few panels of a large one.
constexpr int64_t kPanelFloats = int64_t{1} << 19;
// Column parts start on multiples of this (the NT GEMM's weight tiles).
constexpr int64_t kColumnsAlign = 16;

int64_t panel_columns(int64_t k, int64_t n) {
  const int64_t fit = std::max<int64_t>(8, kPanelFloats / std::max<int64_t>(k, 1) / 8 * 8);
  return std::min(n, fit);
}

}  // namespace

size_t dequantized_gemm_scratch_bytes(int64_t k, int64_t n, int64_t activation_floats,
                                      size_t threads) {
  return optimized::gemm_workspace_bytes(threads) +
         round_up64(sizeof(float) * static_cast<size_t>(panel_columns(k, n) * k)) +
         round_up64(sizeof(float) * static_cast<size_t>(activation_floats));
}

bool carve_dequantized_gemm_scratch(void* memory, size_t bytes, int64_t k, int64_t n,
                                    int64_t activation_floats, DequantizedGemmScratch* out) {
  const size_t panel_bytes = round_up64(sizeof(float) * static_cast<size_t>(panel_columns(k, n) * k));
  const size_t activation_bytes = round_up64(sizeof(float) * static_cast<size_t>(activation_floats));
  const size_t one_slot = optimized::gemm_workspace_bytes(1);
  if (memory == nullptr || bytes < one_slot + panel_bytes + activation_bytes) return false;
  // gemm gets every whole slot that fits before the panel.
  const size_t workspace_bytes = (bytes - panel_bytes - activation_bytes) / one_slot * one_slot;
  char* base = static_cast<char*>(memory);
  out->workspace = optimized::make_gemm_workspace(base, workspace_bytes);
  out->panel = reinterpret_cast<float*>(base + workspace_bytes);
  out->panel_columns = panel_columns(k, n);
  out->activations = reinterpret_cast<float*>(base + workspace_bytes + panel_bytes);
  return true;
}

Status run_dequantized_gemm(const DequantizedGemm& q, const DequantizedGemmScratch& scratch) {
  // Each thread dequantizes the columns it then multiplies (one fork-join
  // per panel, and each weight float stays in the cache of the core that
  // wrote it; dequantizing on every thread and then running the threaded
  // GEMM split the columns two different ways, and 2 threads lost to 1).
  const int64_t parts_wanted = std::min<int64_t>(
      static_cast<int64_t>(threadpool::num_threads()),
      std::max<int64_t>(1, static_cast<int64_t>(scratch.workspace.slots)));
  std::atomic<int> failed{static_cast<int>(Error::kOk)};
  for (int64_t n0 = 0; n0 < q.n; n0 += scratch.panel_columns) {
    const int64_t columns = std::min(scratch.panel_columns, q.n - n0);
    const int64_t blocks = (columns + kColumnsAlign - 1) / kColumnsAlign;
    const int64_t parts = std::max<int64_t>(1, std::min(parts_wanted, blocks));
    threadpool::parallel_for(static_cast<size_t>(parts), 1, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const int64_t c0 = std::min(columns, blocks * static_cast<int64_t>(t) / parts * kColumnsAlign);
        const int64_t c1 =
            std::min(columns, blocks * static_cast<int64_t>(t + 1) / parts * kColumnsAlign);
        if (c0 >= c1) continue;
        float* panel = scratch.panel + c0 * q.k;
        q.dequantize(q.weights, n0 + c0, n0 + c1, panel);
        optimized::GemmProblem p;
        p.m = q.rows;
        p.n = c1 - c0;
        p.k = q.k;
        p.a = optimized::ConstMatrix{q.x, q.k, 1};
        // B[p][j] = panel[j][p]: the panel's rows are B's columns.
        p.b = optimized::ConstMatrix{panel, 1, q.k};
        p.c = q.out + n0 + c0;
        p.ldc = q.n;
        if (q.bias != nullptr) {
          p.beta = 1.0f;
          p.addend = optimized::ConstMatrix{q.bias + n0 + c0, 0, 1};
        }
        // Each part packs into its own slot: gemm's slot claims are per
        // call, so two concurrent calls on one workspace would both take
        // slot 0 (and one slot also keeps this gemm on one thread).
        p.workspace = scratch.workspace;
        p.workspace.data = scratch.workspace.data + t * scratch.workspace.slot_floats;
        p.workspace.slots = scratch.workspace.slots > 0 ? 1 : 0;
        const Status status = optimized::gemm(p);
        if (!status.ok()) failed.store(static_cast<int>(status.code()), std::memory_order_relaxed);
      }
    });
    const Error error = static_cast<Error>(failed.load(std::memory_order_relaxed));
    TL_CHECK_OR_RETURN(error == Error::kOk, error,
                       "the dequantized GEMM failed on columns %lld.. of %lld (%s)",
                       static_cast<long long>(n0), static_cast<long long>(q.n),
                       error == Error::kMemoryAllocationFailed ? "no packing slot" : "bad problem");
  }
  return Error::kOk;
}

}  // namespace torchlight::quantized
