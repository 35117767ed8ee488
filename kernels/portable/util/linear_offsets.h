// LinearOffsets: the memory offset of the element at a row-major (logical)
// linear index over some dimensions of a tensor, for kernels that walk a
// tensor "as if contiguous" (normalization rows and groups, embedding
// indices) while accepting any dim order. When the dimensions are laid out
// contiguously relative to each other the offset is one multiply; otherwise
// it is a div/mod per dimension. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/tensor.h"

namespace torchlight::portable {

class LinearOffsets {
 public:
  /// No dimensions: at(0) == 0.
  LinearOffsets() = default;

  /// Dimensions [begin, end) of `t` (begin <= end <= t.dim()). Sizes and
  /// strides are copied, so `t` need not outlive the object.
  LinearOffsets(const Tensor& t, size_t begin, size_t end) {
    for (size_t d = begin; d < end; ++d) {
      if (t.size(d) == 1) continue;  // Contributes nothing to offsets.
      sizes_[dims_] = t.size(d);
      strides_[dims_] = t.strides()[d];
      ++dims_;
    }
    // Collapsible when each stride is the next one times the next size.
    collapsible_ = true;
    for (size_t i = 0; i + 1 < dims_; ++i) {
      collapsible_ = collapsible_ && strides_[i] == strides_[i + 1] * sizes_[i + 1];
    }
    step_ = dims_ == 0 ? 0 : strides_[dims_ - 1];
  }

  /// Whole tensor.
  explicit LinearOffsets(const Tensor& t) : LinearOffsets(t, 0, t.dim()) {}

  /// Offset in elements of the element at `index` (row-major over the
  /// dimensions, < their numel).
  int64_t at(int64_t index) const {
    if (collapsible_) return index * step_;
    int64_t offset = 0;
    for (size_t i = dims_; i-- > 0;) {
      offset += (index % sizes_[i]) * strides_[i];
      index /= sizes_[i];
    }
    return offset;
  }

  /// When the dimensions are one run with a fixed stride (contiguous, or a
  /// single dimension), that stride: at(i) == i * stride(). Otherwise 0 and
  /// collapsible() is false.
  bool collapsible() const { return collapsible_; }
  int64_t stride() const { return collapsible_ ? step_ : 0; }

 private:
  size_t dims_ = 0;
  int64_t sizes_[kMaxTensorDim] = {};
  int64_t strides_[kMaxTensorDim] = {};
  bool collapsible_ = true;
  int64_t step_ = 0;
};

}  // namespace torchlight::portable
