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

}  // namespace internal
}  // namespace optimized
}  // namespace torchlight
