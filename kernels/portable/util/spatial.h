// Tensors with spatial dimensions ([N, C, L], [N, C, H, W], [N, C, D, H, W],
// or the same without N) seen through one 5-D geometry, so convolution,
// pooling and upsampling kernels are written once for 1, 2 and 3 spatial
// dimensions and any dim order (channels-last included): a missing batch
// or leading spatial dimension becomes size 1 with stride 0.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Most spatial dimensions a SpatialView holds (D, H, W).
constexpr size_t kMaxSpatialDims = 3;

/// Sizes and element strides of a tensor as [N, C, D, H, W].
struct SpatialView {
  int64_t batch = 1;
  int64_t channels = 1;
  int64_t size[kMaxSpatialDims] = {1, 1, 1};  // D, H, W.
  int64_t batch_stride = 0;
  int64_t channel_stride = 0;
  int64_t stride[kMaxSpatialDims] = {0, 0, 0};

  /// Offset in elements of [n, c, 0, 0, 0].
  int64_t plane_offset(int64_t n, int64_t c) const { return n * batch_stride + c * channel_stride; }
  /// Elements in one [D, H, W] plane.
  int64_t plane_numel() const { return size[0] * size[1] * size[2]; }
};

/// The view of `t`, whose last `spatial_dims` dimensions are spatial, after
/// a channel dimension and, when t.dim() == spatial_dims + 2, a batch
/// dimension. The caller has checked that t.dim() is spatial_dims + 1 or +2
/// and spatial_dims <= kMaxSpatialDims.
inline SpatialView make_spatial_view(const Tensor& t, size_t spatial_dims) {
  SpatialView v;
  const size_t first_spatial = t.dim() - spatial_dims;
  if (first_spatial == 2) {
    v.batch = t.size(0);
    v.batch_stride = t.strides()[0];
  }
  v.channels = t.size(first_spatial - 1);
  v.channel_stride = t.strides()[first_spatial - 1];
  const size_t lead = kMaxSpatialDims - spatial_dims;
  for (size_t d = 0; d < spatial_dims; ++d) {
    v.size[lead + d] = t.size(first_spatial + d);
    v.stride[lead + d] = t.strides()[first_spatial + d];
  }
  return v;
}

/// Floor division for a possibly negative numerator and positive divisor.
inline int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

/// Ceiling division for a possibly negative numerator and positive divisor.
inline int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

}  // namespace torchlight::portable
