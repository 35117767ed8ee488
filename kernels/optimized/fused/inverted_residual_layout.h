// Where each layer's packed weights and each band's scratch buffers sit, for
// a vector width of `lanes` floats (inverted_residual.h). Channel counts are
// padded to whole vectors; padded weights are zero.
//
// Packed (floats): expand blocks [expanded_pad / lanes][in][lanes] and bias
// [expanded_pad] (absent without expand); depthwise blocks
// [expanded_pad / lanes][10][lanes] (nine taps, then the bias); projection
// blocks [out_pad / lanes][expanded][lanes] and bias [out_pad].
//
// Scratch (floats): a zero row, three ring rows (each in_w + 2 pixels of
// expanded_pad: one zero pixel either side is the depthwise padding), the
// depthwise output row [out_w][expanded_pad]. Every part starts on 64 bytes.
#pragma once

#include <cstddef>

#include "kernels/optimized/fused/inverted_residual.h"

namespace torchlight {
namespace optimized {
namespace internal {

struct InvertedResidualLayout {
  size_t lanes = 0, expanded_pad = 0, out_pad = 0;
  size_t expand_filter = 0, expand_bias = 0, depthwise = 0, project_filter = 0,
         project_bias = 0, packed_floats = 0;
  size_t ring_row = 0;  // floats of one ring row
  size_t zero_row = 0, ring = 0, depthwise_row = 0, scratch_floats = 0;

  // Defined in inverted_residual.cpp, which is built without ISA flags:
  // this header is included by the per-ISA kernel files too, and an inline
  // body here could be emitted with AVX-512 instructions there and then
  // picked by the linker for every caller (tools/check_isa_objects).
  InvertedResidualLayout(const InvertedResidualShape& s, size_t vector_lanes);
};

// kAmx: kAvx512's packing, then the expand's and the projection's filters
// split for gemm's AMX tiles (gemm_amx_kernels.h; byte offsets from the
// packing's start, 64-byte aligned). Per band of scratch: kAvx512's zero
// row, the band's
// expanded input rows X [rows][in_w][expanded_pad], the depthwise rows D
// [rows][out_w][expanded_pad] (whole images at most: a band runs image by
// image) and the AMX kernel's own scratch; at least kAvx512's scratch, which
// a band falls back to.
struct InvertedResidualAmxLayout {
  InvertedResidualLayout base;
  size_t expand_split = 0, project_split = 0, packed_floats = 0;  // bytes, bytes, floats
  size_t expanded = 0, depthwise = 0, tiles = 0, tiles_bytes = 0, scratch_floats = 0;

  InvertedResidualAmxLayout(const InvertedResidualShape& s);  // In inverted_residual.cpp.
};

size_t lanes_of(InvertedResidualIsa isa);

// One entry per instruction set (inverted_residual_{generic,avx2,avx512}.cpp).
void inverted_residual_rows_generic(const InvertedResidualShape& shape, const float* packed,
                                    const float* in, float* out, size_t row_begin, size_t row_end,
                                    float* scratch);
void inverted_residual_rows_avx2(const InvertedResidualShape& shape, const float* packed,
                                 const float* in, float* out, size_t row_begin, size_t row_end,
                                 float* scratch);
void inverted_residual_rows_avx512(const InvertedResidualShape& shape, const float* packed,
                                   const float* in, float* out, size_t row_begin, size_t row_end,
                                   float* scratch);
void inverted_residual_rows_amx(const InvertedResidualShape& shape, const float* packed,
                                const float* in, float* out, size_t row_begin, size_t row_end,
                                float* scratch);

}  // namespace internal
}  // namespace optimized
}  // namespace torchlight
