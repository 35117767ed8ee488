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

inline size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct InvertedResidualLayout {
  size_t lanes = 0, expanded_pad = 0, out_pad = 0;
  size_t expand_filter = 0, expand_bias = 0, depthwise = 0, project_filter = 0,
         project_bias = 0, packed_floats = 0;
  size_t ring_row = 0;  // floats of one ring row
  size_t zero_row = 0, ring = 0, depthwise_row = 0, scratch_floats = 0;

  InvertedResidualLayout(const InvertedResidualShape& s, size_t vector_lanes) {
    lanes = vector_lanes;
    expanded_pad = round_up(s.expanded_channels, lanes);
    out_pad = round_up(s.out_channels, lanes);
    size_t at = 0;
    if (s.has_expand) {
      expand_filter = at;
      at += round_up(expanded_pad * s.in_channels, 16);
      expand_bias = at;
      at += round_up(expanded_pad, 16);
    }
    depthwise = at;
    at += round_up(expanded_pad * 10, 16);
    project_filter = at;
    at += round_up(out_pad * s.expanded_channels, 16);
    project_bias = at;
    at += round_up(out_pad, 16);
    packed_floats = at;

    ring_row = round_up((s.in_w + 2) * expanded_pad, 16);
    zero_row = 0;
    ring = ring_row;
    depthwise_row = ring + 3 * ring_row;
    scratch_floats = depthwise_row + round_up(s.out_w() * expanded_pad, 16);
  }
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
