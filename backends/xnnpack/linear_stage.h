// LinearStage: an XNNPACK fully-connected over a dynamically quantized
// input (an XNNConvert of a float32 value to qdint8) with block-wise 4-bit
// weights (qbint4) and float32 output, the 8da4w linear of LLM exports, run
// on Torchlight's torchlight::linear_8da4w kernel from the convert's float
// input instead.
//
// Why: on CPUs with AVX512-VNNI, the XNNPACK that upstream 0.5 pins (and
// Debian ships) computes the last row of such a linear wrong whenever the
// row count is 2 or 3, or 1-3 past a multiple of 14 (the remainder of its
// 14-row micro-kernel; measured on an Intel Xeon with AVX512-VNNI and GFNI,
// xnnpack_quantized_test.cpp). A prompt of such a length then decides its
// first token from a wrong row. linear_8da4w quantizes each row to int8
// (asymmetric, as the convert does) and sums exactly in int32, on every row
// count; the weights' scales are XNNPACK's own bf16 ones. One-row calls
// (decode), which XNNPACK gets right with its faster one-row kernel, run
// on a runtime of just this convert and fully-connected. The cost: the
// 4-bit weights are held twice (our repack and XNNPACK's packing).
#pragma once

#include <xnnpack.h>

#include <cstddef>
#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "runtime/core/result.h"

namespace torchlight {
namespace xnnpack {

struct LinearStage {
  uint32_t node;    // The fully-connected, for messages and profiling.
  uint32_t input;   // The convert's float32 input (payload id): [..., K].
  uint32_t output;  // [..., N]
  int64_t k = 0;
  int64_t n = 0;
  int64_t group = 0;
  const uint8_t* weight = nullptr;  // [N, K / 2] in linear_8da4w's nibble order.
  const float* scales = nullptr;    // [N, K / group], XNNPACK's bf16 scales widened.
  const float* bias = nullptr;      // [N] or null.
  float output_min = 0;
  float output_max = 0;
  const void* state = nullptr;  // What linear_8da4w's prepare kept (weight sums).
  size_t scratch_bytes = 0;     // What its eval needs at the declared rows.
  // XNNPACK's convert + fully-connected for one-row calls (null: none);
  // owned by the executor. External ids 0 (input) and 1 (output).
  xnn_runtime_t one_row = nullptr;
  const float* one_row_input = nullptr;  // What it was last set up with.
  float* one_row_output = nullptr;
};

/// Whether 8da4w linears leave XNNPACK here: TORCHLIGHT_XNNPACK_QB4W=
/// linear_8da4w or =xnnpack decides; unset, on CPUs with AVX512-VNNI (where
/// XNNPACK's block-wise kernels get those rows wrong), not elsewhere (where
/// they are right, and faster at one row than linear_8da4w's AVX2 loops).
bool linears_leave_xnnpack();

/// The linear of node `node` (runs_on_linear_8da4w in stage_plan.h holds): its weights
/// repacked and scales widened into ctx.allocator's memory, the kernel's
/// prepare run for the declared input shape, and the one-row runtime built
/// on `workspace` and `pool`.
/// Errors: kDelegateMemoryAllocationFailed, kInvalidProgram when XNNPACK
/// refuses the one-row runtime, or the kernel's prepare error.
Result<LinearStage> make_linear_stage(const DefinitionContext& ctx, uint32_t node,
                                      xnn_workspace_t workspace, pthreadpool_t pool);

/// y [rows, N] = the linear of x [rows, K], clamped to the node's range.
/// `scratch` holds at least s.scratch_bytes (64-byte aligned). Sets
/// `*on_xnnpack` to whether the one-row runtime ran it.
Status run_linear_stage(LinearStage& s, const float* x, size_t rows, float* y, void* scratch,
                        size_t scratch_bytes, bool* on_xnnpack);

}  // namespace xnnpack
}  // namespace torchlight
