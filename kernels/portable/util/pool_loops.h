// The pooling loops shared by the 1-D, 2-D and 3-D pooling kernels, over
// SpatialView geometry (any dim order, batch optional). The caller has
// validated everything (pooling.h), resized the outs and checked that they
// have data and elements. Header-only.
//
// Semantics are ATen's CPU kernels':
//  - max: NaN wins over any number (the last NaN of a window is kept), ties
//    keep the first maximum, a window of -inf (or of the type's lowest
//    value) reports its first element; indices are flat within the input's
//    spatial plane ((id * H + ih) * W + iw);
//  - average: the window is clipped to the padded input; the divisor is
//    divisor_override, else the clipped window's volume counting padding
//    (count_include_pad) or not; a window entirely in padding gives 0;
//  - adaptive: output cell o covers input [floor(o * in / out),
//    ceil((o + 1) * in / out)) per dimension; averages divide by each window
//    length in turn (as ATen does).
// Sums are in opmath (float for float16/bfloat16); int64 averages truncate
// toward zero.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/pooling.h"
#include "kernels/portable/util/spatial.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

namespace internal {

template <typename A>
bool is_nan_value(A v) {
  if constexpr (std::is_floating_point_v<A>) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// First input index of adaptive window `o` of `out_size` over `in_size`.
inline int64_t adaptive_start(int64_t o, int64_t out_size, int64_t in_size) {
  return (o / out_size) * in_size + ((o % out_size) * in_size) / out_size;
}

// One past its last input index.
inline int64_t adaptive_end(int64_t o, int64_t out_size, int64_t in_size) {
  return 1 + ((o + 1) * in_size - 1) / out_size;
}

// Calls fn(n, c, o) for every output cell, o = {od, oh, ow}.
template <typename Fn>
void for_each_output(const SpatialView& ov, Fn&& fn) {
  for (int64_t n = 0; n < ov.batch; ++n) {
    for (int64_t c = 0; c < ov.channels; ++c) {
      for (int64_t od = 0; od < ov.size[0]; ++od) {
        for (int64_t oh = 0; oh < ov.size[1]; ++oh) {
          for (int64_t ow = 0; ow < ov.size[2]; ++ow) {
            const int64_t o[kMaxSpatialDims] = {od, oh, ow};
            fn(n, c, o);
          }
        }
      }
    }
  }
}

inline int64_t cell_offset(const SpatialView& v, int64_t n, int64_t c, const int64_t* o) {
  return v.plane_offset(n, c) + o[0] * v.stride[0] + o[1] * v.stride[1] + o[2] * v.stride[2];
}

}  // namespace internal

/// Max pooling with indices.
template <typename T>
void max_pool(const Tensor& self, const PoolParams& p, const Tensor& out, const Tensor& indices) {
  using Acc = opmath_t<T>;
  const SpatialView iv = make_spatial_view(self, p.spatial);
  const SpatialView ov = make_spatial_view(out, p.spatial);
  const SpatialView xv = make_spatial_view(indices, p.spatial);
  const T* in = self.const_data_ptr<T>();
  T* out_data = out.mutable_data_ptr<T>();
  int64_t* index_data = indices.mutable_data_ptr<int64_t>();
  const Acc lowest = std::numeric_limits<Acc>::has_infinity ? -std::numeric_limits<Acc>::infinity()
                                                            : std::numeric_limits<Acc>::lowest();
  internal::for_each_output(ov, [&](int64_t n, int64_t c, const int64_t* o) {
    int64_t start[kMaxSpatialDims];
    int64_t end[kMaxSpatialDims];
    for (size_t d = 0; d < kMaxSpatialDims; ++d) {
      start[d] = o[d] * p.stride[d] - p.padding[d];
      end[d] = std::min(start[d] + (p.kernel[d] - 1) * p.dilation[d] + 1, iv.size[d]);
      while (start[d] < 0) start[d] += p.dilation[d];
    }
    const T* plane = in + iv.plane_offset(n, c);
    Acc best = lowest;
    int64_t best_index = (start[0] * iv.size[1] + start[1]) * iv.size[2] + start[2];
    for (int64_t id = start[0]; id < end[0]; id += p.dilation[0]) {
      for (int64_t ih = start[1]; ih < end[1]; ih += p.dilation[1]) {
        const T* row = plane + id * iv.stride[0] + ih * iv.stride[1];
        for (int64_t iw = start[2]; iw < end[2]; iw += p.dilation[2]) {
          const Acc v = convert<Acc>(row[iw * iv.stride[2]]);
          if (v > best || internal::is_nan_value(v)) {
            best = v;
            best_index = (id * iv.size[1] + ih) * iv.size[2] + iw;
          }
        }
      }
    }
    out_data[internal::cell_offset(ov, n, c, o)] = convert<T>(best);
    index_data[internal::cell_offset(xv, n, c, o)] = best_index;
  });
}

/// Average pooling; `divisor` 0 means no divisor_override.
template <typename T>
void avg_pool(const Tensor& self, const PoolParams& p, bool count_include_pad, int64_t divisor,
              const Tensor& out) {
  using Acc = opmath_t<T>;
  const SpatialView iv = make_spatial_view(self, p.spatial);
  const SpatialView ov = make_spatial_view(out, p.spatial);
  const T* in = self.const_data_ptr<T>();
  T* out_data = out.mutable_data_ptr<T>();
  internal::for_each_output(ov, [&](int64_t n, int64_t c, const int64_t* o) {
    int64_t start[kMaxSpatialDims];
    int64_t end[kMaxSpatialDims];
    int64_t padded_volume = 1;
    int64_t volume = 1;
    for (size_t d = 0; d < kMaxSpatialDims; ++d) {
      start[d] = o[d] * p.stride[d] - p.padding[d];
      end[d] = std::min(start[d] + p.kernel[d], iv.size[d] + p.padding[d]);
      padded_volume *= end[d] - start[d];
      start[d] = std::max<int64_t>(start[d], 0);
      end[d] = std::min(end[d], iv.size[d]);
      volume *= std::max<int64_t>(end[d] - start[d], 0);
    }
    T& result = out_data[internal::cell_offset(ov, n, c, o)];
    if (volume == 0) {
      result = convert<T>(0);
      return;
    }
    const T* plane = in + iv.plane_offset(n, c);
    Acc sum = Acc(0);
    for (int64_t id = start[0]; id < end[0]; ++id) {
      for (int64_t ih = start[1]; ih < end[1]; ++ih) {
        const T* row = plane + id * iv.stride[0] + ih * iv.stride[1];
        for (int64_t iw = start[2]; iw < end[2]; ++iw) {
          sum = opmath_add(sum, convert<Acc>(row[iw * iv.stride[2]]));
        }
      }
    }
    const int64_t factor = divisor != 0 ? divisor : (count_include_pad ? padded_volume : volume);
    if constexpr (std::is_integral_v<Acc>) {
      // INT64_MIN / -1 overflows; ATen's result wraps to INT64_MIN.
      result = factor == -1 ? convert<T>(opmath_sub(Acc(0), sum))
                            : convert<T>(sum / static_cast<Acc>(factor));
    } else {
      result = convert<T>(sum / static_cast<Acc>(factor));
    }
  });
}

/// Adaptive average pooling (floating types).
template <typename T>
void adaptive_avg_pool(const Tensor& self, size_t spatial, const Tensor& out) {
  using Acc = opmath_t<T>;
  const SpatialView iv = make_spatial_view(self, spatial);
  const SpatialView ov = make_spatial_view(out, spatial);
  const T* in = self.const_data_ptr<T>();
  T* out_data = out.mutable_data_ptr<T>();
  internal::for_each_output(ov, [&](int64_t n, int64_t c, const int64_t* o) {
    int64_t start[kMaxSpatialDims];
    int64_t end[kMaxSpatialDims];
    for (size_t d = 0; d < kMaxSpatialDims; ++d) {
      start[d] = internal::adaptive_start(o[d], ov.size[d], iv.size[d]);
      end[d] = internal::adaptive_end(o[d], ov.size[d], iv.size[d]);
    }
    const T* plane = in + iv.plane_offset(n, c);
    Acc sum = Acc(0);
    for (int64_t id = start[0]; id < end[0]; ++id) {
      for (int64_t ih = start[1]; ih < end[1]; ++ih) {
        const T* row = plane + id * iv.stride[0] + ih * iv.stride[1];
        for (int64_t iw = start[2]; iw < end[2]; ++iw) sum += convert<Acc>(row[iw * iv.stride[2]]);
      }
    }
    for (size_t d = kMaxSpatialDims - spatial; d < kMaxSpatialDims; ++d) {
      sum /= static_cast<Acc>(end[d] - start[d]);
    }
    out_data[internal::cell_offset(ov, n, c, o)] = convert<T>(sum);
  });
}

/// Adaptive max pooling with indices (floating types).
template <typename T>
void adaptive_max_pool(const Tensor& self, size_t spatial, const Tensor& out,
                       const Tensor& indices) {
  using Acc = opmath_t<T>;
  const SpatialView iv = make_spatial_view(self, spatial);
  const SpatialView ov = make_spatial_view(out, spatial);
  const SpatialView xv = make_spatial_view(indices, spatial);
  const T* in = self.const_data_ptr<T>();
  T* out_data = out.mutable_data_ptr<T>();
  int64_t* index_data = indices.mutable_data_ptr<int64_t>();
  internal::for_each_output(ov, [&](int64_t n, int64_t c, const int64_t* o) {
    int64_t start[kMaxSpatialDims];
    int64_t end[kMaxSpatialDims];
    for (size_t d = 0; d < kMaxSpatialDims; ++d) {
      start[d] = internal::adaptive_start(o[d], ov.size[d], iv.size[d]);
      end[d] = internal::adaptive_end(o[d], ov.size[d], iv.size[d]);
    }
    const T* plane = in + iv.plane_offset(n, c);
    Acc best = -std::numeric_limits<Acc>::infinity();
    int64_t best_index = (start[0] * iv.size[1] + start[1]) * iv.size[2] + start[2];
    for (int64_t id = start[0]; id < end[0]; ++id) {
      for (int64_t ih = start[1]; ih < end[1]; ++ih) {
        const T* row = plane + id * iv.stride[0] + ih * iv.stride[1];
        for (int64_t iw = start[2]; iw < end[2]; ++iw) {
          const Acc v = convert<Acc>(row[iw * iv.stride[2]]);
          if (v > best || internal::is_nan_value(v)) {
            best = v;
            best_index = (id * iv.size[1] + ih) * iv.size[2] + iw;
          }
        }
      }
    }
    out_data[internal::cell_offset(ov, n, c, o)] = convert<T>(best);
    index_data[internal::cell_offset(xv, n, c, o)] = best_index;
  });
}

}  // namespace torchlight::portable
