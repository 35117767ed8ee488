// MobileNetV2's inverted-residual block as one pass over its output rows,
// fp32, NHWC: a 1x1 expand convolution (+ its output range), a 3x3
// depthwise convolution (stride 1 or 2, padding 1, + its range), a 1x1
// projection (+ its range) and, optionally, the block's input added back
// (+ the add's range).
//
// Why: run as three operators, the expanded tensor (4.8 MB at 112x112x96)
// is written by the expand GEMM, read by the depthwise, whose output is read
// again by the projection; these layers are bound by moving it. Here each
// call walks a band of output rows with a ring of three expanded input rows
// and one depthwise output row in its scratch (a few hundred KB: L2), so
// the expanded activations never reach memory.
//
// Weights are packed once (pack_inverted_residual) for the instruction set
// the caller picked; calls then only read them. Output rows are independent:
// callers split [0, batch * out_h) into bands, one scratch area per band.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace torchlight {
namespace optimized {

/// kAmx: the AVX-512 kernel's depthwise with both 1x1 layers on gemm's
/// fp32-accurate AMX tiles over whole bands of rows (for blocks of 64+
/// channels at 14x14 / 7x7, where a row is too short for the tiles). Never
/// the default: callers pick it per block (inverted_residual_amx_allowed).
enum class InvertedResidualIsa : uint8_t { kGeneric, kAvx2, kAvx512, kAmx };

const char* to_string(InvertedResidualIsa isa);

/// Whether this build and CPU run `isa`'s kernel (kGeneric always).
bool inverted_residual_isa_supported(InvertedResidualIsa isa);

/// The best supported set but kAmx, capped by TORCHLIGHT_FUSED_ISA (generic,
/// avx2, avx512 or amx; read on every call, so tests can switch paths).
InvertedResidualIsa inverted_residual_default_isa();

/// Whether kAmx is supported (gemm's active set is AMX, so
/// TORCHLIGHT_GEMM_ISA=avx512 turns it off) and TORCHLIGHT_FUSED_ISA allows it.
bool inverted_residual_amx_allowed();

struct InvertedResidualShape {
  size_t batch = 1, in_h = 0, in_w = 0;
  size_t in_channels = 0;
  /// Channels of the depthwise convolution; with has_expand false there is
  /// no expand layer and this equals in_channels (MobileNetV2's first block).
  size_t expanded_channels = 0;
  size_t out_channels = 0;
  size_t stride = 1;  // 1 or 2 (both directions); padding 1 on every side
  bool has_expand = true;
  /// out += input (needs stride 1 and in_channels == out_channels).
  bool residual = false;
  float expand_min = -INFINITY, expand_max = INFINITY;
  float depthwise_min = -INFINITY, depthwise_max = INFINITY;
  float project_min = -INFINITY, project_max = INFINITY;
  float add_min = -INFINITY, add_max = INFINITY;

  size_t out_h() const { return (in_h - 1) / stride + 1; }
  size_t out_w() const { return (in_w - 1) / stride + 1; }
};

/// Empty when `shape` can run, else why not (a static string).
const char* inverted_residual_unsupported(const InvertedResidualShape& shape);

/// Floats of the packed weights for `shape` on `isa`.
size_t inverted_residual_packed_floats(const InvertedResidualShape& shape,
                                       InvertedResidualIsa isa);

/// Packs the three layers' weights (XNNPACK's layouts): expand [expanded,
/// in] (ignored without expand), depthwise [3, 3, expanded] and projection
/// [out, expanded]; each bias may be null (zero). `packed` holds
/// inverted_residual_packed_floats floats, 64-byte aligned. False only for
/// kAmx when a 1x1 filter holds inf or NaN: the packing then serves kAvx512
/// (its prefix is kAvx512's), which keeps IEEE results.
bool pack_inverted_residual(const InvertedResidualShape& shape, InvertedResidualIsa isa,
                            const float* expand_filter, const float* expand_bias,
                            const float* depthwise_filter, const float* depthwise_bias,
                            const float* project_filter, const float* project_bias,
                            float* packed);

/// Floats of scratch one band needs (rings, a zero row, the depthwise row),
/// 64-byte aligned by the caller.
size_t inverted_residual_scratch_floats(const InvertedResidualShape& shape,
                                        InvertedResidualIsa isa);

/// Output rows [row_begin, row_end) of out [batch * out_h rows, out_w,
/// out_channels] from in [batch, in_h, in_w, in_channels]. `in` and `out`
/// must not overlap. `packed` is from pack_inverted_residual with the same
/// shape and isa.
void inverted_residual_rows(const InvertedResidualShape& shape, InvertedResidualIsa isa,
                            const float* packed, const float* in, float* out, size_t row_begin,
                            size_t row_end, float* scratch);

}  // namespace optimized
}  // namespace torchlight
