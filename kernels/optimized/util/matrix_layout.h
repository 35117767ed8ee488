// Seeing tensors as the strided matrices gemm takes: the last two dims of a
// matrix or batch, leading dims folded into rows, broadcast strides.
// Header-only; used by the op_*.cpp files of this library.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/optimized/gemm/gemm.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight::optimized {

/// The matrix formed by dims `dim() - 2` and `dim() - 1` of a float tensor
/// (its first batch item for 3-D). The tensor's data must outlive the view.
inline ConstMatrix last_two_dims(const Tensor& t) {
  const size_t r = t.dim() - 2;
  return ConstMatrix{t.const_data_ptr<float>(), t.strides()[r], t.strides()[r + 1]};
}

/// Whether C-style output over dims (r, r + 1) of `t` is row-major: unit
/// column stride and a row stride of at least the row length (size-1 dims
/// may have any stride). `*ldc` receives the row stride.
inline bool rows_are_contiguous(const Tensor& t, size_t r, int64_t* ldc) {
  const int64_t rows = t.size(r);
  const int64_t cols = t.size(r + 1);
  const int64_t rs = t.strides()[r];
  const int64_t cs = t.strides()[r + 1];
  if (cols > 1 && cs != 1) return false;
  if (rows > 1 && rs < cols) return false;
  *ldc = rows > 1 ? rs : cols;
  return true;
}

/// Whether dims [0, count) of a shape with `strides` walk memory with one
/// stride, as a single dim of size product(sizes[0, count)) would; then
/// `*stride` is that stride (0 when every such dim has size 1, or when the
/// dims are broadcast). Zero-size shapes count as foldable.
inline bool fold_leading_dims(Span<const SizesType> sizes, Span<const int64_t> strides,
                              size_t count, int64_t* stride) {
  *stride = 0;
  bool seen = false;
  int64_t expected = 0;
  for (size_t d = count; d-- > 0;) {
    if (sizes[d] == 0) return true;
    if (sizes[d] == 1) continue;
    if (!seen) {
      *stride = strides[d];
      seen = true;
    } else if (strides[d] != expected) {
      return false;
    }
    expected = strides[d] * sizes[d];
  }
  return true;
}

/// The strides of a tensor of shape `from` broadcast to `to` (which it
/// broadcasts to, checked by the caller): missing leading dims and size-1
/// dims get stride 0. Writes to.size() entries.
inline void broadcast_strides(const Tensor& from, Span<const SizesType> to, int64_t* strides) {
  const size_t lead = to.size() - from.dim();
  for (size_t d = 0; d < to.size(); ++d) {
    if (d < lead) {
      strides[d] = 0;
    } else {
      const size_t s = d - lead;
      strides[d] = from.size(s) == 1 ? 0 : from.strides()[s];
    }
  }
}

}  // namespace torchlight::optimized
