// CoordWalk: the coordinates of every element of a shape, in row-major
// order, for kernels whose source element depends on the coordinates
// (gather, scatter, advanced indexing, padding):
//
//   for (CoordWalk w(index.sizes()); !w.done(); w.next()) {
//     const int64_t at = w.offset(index.strides());
//     ... w[d] ...
//   }
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

class CoordWalk {
 public:
  /// `shape` (at most kMaxTensorDim dimensions) is copied. A 0-d shape has
  /// one element; a shape with a 0 size has none (done() at once).
  explicit CoordWalk(Span<const SizesType> shape) : dim_(shape.size()) {
    for (size_t d = 0; d < dim_; ++d) {
      sizes_[d] = shape[d];
      if (shape[d] == 0) done_ = true;
    }
  }

  bool done() const { return done_; }
  size_t dim() const { return dim_; }
  int64_t operator[](size_t d) const { return index_[d]; }

  /// Moves to the next element in row-major order.
  void next() {
    for (size_t d = dim_; d-- > 0;) {
      if (++index_[d] < sizes_[d]) return;
      index_[d] = 0;
    }
    done_ = true;
  }

  /// Sum over dimensions of coordinate * stride; `strides` has dim() entries.
  int64_t offset(Span<const StridesType> strides) const {
    int64_t at = 0;
    for (size_t d = 0; d < dim_; ++d) at += index_[d] * strides[d];
    return at;
  }

 private:
  size_t dim_;
  bool done_ = false;
  int64_t sizes_[kMaxTensorDim] = {};
  int64_t index_[kMaxTensorDim] = {};
};

}  // namespace torchlight::portable
