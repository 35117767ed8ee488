// The broadcast of index tensors that index.Tensor's prepared evals share
// (op_index.cpp, util/index_mixed.h): their shapes broadcast together,
// right-aligned, into B; a position of B as coordinates; each index
// tensor's element at those coordinates. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dim_index.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable::index_broadcast {

/// Why a shape did not broadcast: the two sizes that clash, or a size that
/// does not fit SizesType.
struct BroadcastFailure {
  int64_t have = 0;
  int64_t size = 0;
  bool too_large = false;
};

/// Broadcasts a shape of `n` sizes, size_at(k) for k < n, into `shape`
/// (right-aligned, as ATen does); false, with the reason in `failure` when
/// given, when they do not broadcast.
template <typename SizeAt>
bool broadcast_into(ShapeBuffer* shape, size_t n, const SizeAt& size_at,
                    BroadcastFailure* failure = nullptr) {
  ShapeBuffer& s = *shape;
  if (n > s.dim) {
    const size_t grow = n - s.dim;
    for (size_t d = s.dim; d-- > 0;) s.sizes[d + grow] = s.sizes[d];
    for (size_t d = 0; d < grow; ++d) s.sizes[d] = 1;
    s.dim = n;
  }
  for (size_t k = 0; k < n; ++k) {
    const int64_t size = size_at(k);
    SizesType& have = s.sizes[s.dim - n + k];
    const bool clash = have != size && have != 1 && size != 1;
    const bool too_large = size > INT32_MAX;
    if (clash || too_large) {
      if (failure != nullptr) *failure = BroadcastFailure{have, size, !clash};
      return false;
    }
    if (have == 1) have = static_cast<SizesType>(size);
  }
  return true;
}

/// The row-major coordinates of position `at` of `shape`.
inline void unravel(int64_t at, const ShapeBuffer& shape, int64_t* coord) {
  for (size_t k = shape.dim; k-- > 0;) {
    coord[k] = at % shape.sizes[k];
    at /= shape.sizes[k];
  }
}

/// The value of index tensor `t` at B's coordinates `coord` (B has `b_dim`
/// dims; t is right-aligned in it, its size-1 dims broadcast).
inline int64_t index_at(const Tensor& t, const int64_t* coord, size_t b_dim) {
  int64_t element_at = 0;
  for (size_t k = 0; k < t.dim(); ++k) {
    if (t.size(k) != 1) element_at += coord[b_dim - t.dim() + k] * t.strides()[k];
  }
  return load_index(t, element_at);
}

}  // namespace torchlight::portable::index_broadcast
