// Depthwise 3x3 convolution on int8 (qs8 input and output quantized per
// tensor, qc8w weights quantized per channel, int32 bias), NHWC, depth
// multiplier 1, computing exactly what XNNPACK's qs8-qc8w depthwise
// operator computes: the int32 sum of (x - input zero point) * w plus the
// bias, then XNNPACK's fp32 requantization (scale = input_scale *
// kernel_scale[c] / output_scale, float multiply, min with output_max -
// output zero point, round to nearest even, saturate to int16, add the
// output zero point saturating, saturate to int8, max with output_min).
//
// Why: Debian's XNNPACK runs these layers with 32-bit multiplies
// (qs8-qc8w-dwconv-9p32c-avx512skx-mul32, or 9p16c-avx2-mul32 on AVX2
// CPUs); pairing taps in 16-bit lanes (vpmaddwd, or VNNI's vpdpwssd) gives
// the same int32 sums in about 0.45x of its time on AVX-512
// (bench/xnnpack/dw_floor.cpp; AVX2 figures in bench/README.md). The
// delegate runs such layers on this kernel where stage_plan.h says so.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight {
namespace xnnpack {

struct DepthwiseQs8Shape {
  size_t batch = 1, in_h = 0, in_w = 0, channels = 0;
  size_t out_h = 0, out_w = 0;
  size_t stride_h = 1, stride_w = 1;
  size_t pad_top = 0, pad_left = 0;
};

struct DepthwiseQs8Quant {
  int8_t input_zero_point = 0;
  int8_t output_zero_point = 0;
  int8_t output_min = -128;
  int8_t output_max = 127;
};

/// The kernel's variants, in order: each runs where the CPU has its set.
enum class DepthwiseQs8Isa : uint8_t {
  kNone,    // No variant runs here (not x86-64, or no AVX2).
  kAvx2,    // 256-bit vpmaddwd, 16 channels a step.
  kAvx512,  // AVX-512F/BW/VL vpmaddwd, 32 channels a step.
  kVnni,    // AVX512-VNNI vpdpwssd.
};

/// The variant depthwise_qs8_rows runs: the best this CPU has, at most the
/// cap. All variants read the same packed weights and give the same bytes.
DepthwiseQs8Isa depthwise_qs8_isa();

/// Whether this CPU runs the kernel (AVX2 at least).
bool depthwise_qs8_supported();

/// Caps the variant (kVnni, the default, caps nothing), so tests and
/// benches cover every variant the CPU has on one machine. Not safe while
/// a kernel runs.
void depthwise_qs8_cap_isa(DepthwiseQs8Isa cap);

/// Bytes of the packed weights for `channels` (64-byte aligned blocks).
size_t depthwise_qs8_packed_bytes(size_t channels);

/// Packs XNNPACK's depthwise filter [1, 3, 3, channels] (int8), the bias
/// ([channels] int32, or null) and the requantization scales ([channels])
/// into `packed` (64-byte aligned, depthwise_qs8_packed_bytes long), the
/// same layout for every variant.
void pack_depthwise_qs8(const int8_t* filter, const int32_t* bias, const float* scales,
                        size_t channels, void* packed);

/// Output rows [row_begin, row_end) of out [batch * out_h rows, out_w,
/// channels] from in [batch, in_h, in_w, channels]. Taps in the padding
/// contribute nothing (XNNPACK pads with the input zero point). Only where
/// depthwise_qs8_supported().
void depthwise_qs8_rows(const DepthwiseQs8Shape& shape, const DepthwiseQs8Quant& quant,
                        const void* packed, const int8_t* in, int8_t* out, size_t row_begin,
                        size_t row_end);

}  // namespace xnnpack
}  // namespace torchlight
