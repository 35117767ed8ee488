// The shared walk of gather and scatter: for each element of `index`, an
// element of a "target" tensor (gather's self, scatter's out) at the same
// coordinates except along `dim`, where the index value decides, and the
// element of an "other" tensor (gather's out, scatter's src) at the index
// element's own coordinates. 0-d tensors count as shape [1], as ATen's
// ensure_nonempty_dim does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Sizes and strides with a 0-d tensor seen as [1].
struct NonEmptyGeometry {
  size_t dim = 1;
  int64_t sizes[kMaxTensorDim] = {1};
  int64_t strides[kMaxTensorDim] = {1};

  explicit NonEmptyGeometry(const Tensor& t) {
    if (t.dim() == 0) return;
    dim = t.dim();
    for (size_t d = 0; d < dim; ++d) {
      sizes[d] = t.size(d);
      strides[d] = t.strides()[d];
    }
  }
};

/// ATen's checks: `index` is int64 and has the rank of `target`; outside
/// `dim` its sizes are at most target's, and (when `other` is given, for
/// scatter's src) at most other's everywhere. Errors: kInvalidType /
/// kInvalidArgument naming the arguments.
inline Status check_scatter_gather_shapes(const NamedTensor& target, size_t dim,
                                          const NamedTensor& index, const NamedTensor* other) {
  TL_RETURN_IF_ERROR(check_index_dtype(index, /*allow_int32=*/false));
  const NonEmptyGeometry t(target.tensor);
  const NonEmptyGeometry i(index.tensor);
  TL_CHECK_OR_RETURN(t.dim == i.dim, Error::kInvalidArgument,
                     "argument '%s' is %zu-D but '%s' is %zu-D; they must have the same rank",
                     index.name, index.tensor.dim(), target.name, target.tensor.dim());
  for (size_t d = 0; d < t.dim; ++d) {
    TL_CHECK_OR_RETURN(d == dim || i.sizes[d] <= t.sizes[d], Error::kInvalidArgument,
                       "argument '%s' has size %lld at dimension %zu, larger than the %lld of "
                       "'%s' (only dimension %zu may be larger)",
                       index.name, static_cast<long long>(i.sizes[d]), d,
                       static_cast<long long>(t.sizes[d]), target.name, dim);
  }
  if (other != nullptr) {
    const NonEmptyGeometry o(other->tensor);
    TL_CHECK_OR_RETURN(o.dim == i.dim, Error::kInvalidArgument,
                       "argument '%s' is %zu-D but '%s' is %zu-D; they must have the same rank",
                       index.name, index.tensor.dim(), other->name, other->tensor.dim());
    for (size_t d = 0; d < o.dim; ++d) {
      TL_CHECK_OR_RETURN(i.sizes[d] <= o.sizes[d], Error::kInvalidArgument,
                         "argument '%s' has size %lld at dimension %zu, larger than the %lld of "
                         "'%s'",
                         index.name, static_cast<long long>(i.sizes[d]), d,
                         static_cast<long long>(o.sizes[d]), other->name);
    }
  }
  return Error::kOk;
}

/// Calls fn(target_offset, other_offset) (element offsets, strides
/// applied) for every element of `index`, in row-major order, after
/// checking its value is in [0, target size along dim). Shapes were checked
/// with check_scatter_gather_shapes; `other` has index's coordinates.
/// Errors: kInvalidArgument for an index value out of range (nothing is
/// read or written for it).
template <typename Fn>
Status for_each_scatter_gather(const Tensor& target, size_t dim, const Tensor& index,
                               const Tensor& other, const Fn& fn) {
  if (index.numel() == 0) return Error::kOk;
  const NonEmptyGeometry t(target);
  const NonEmptyGeometry i(index);
  const NonEmptyGeometry o(other);
  int64_t coord[kMaxTensorDim] = {};
  const size_t rank = i.dim;
  for (;;) {
    int64_t index_at = 0;
    int64_t target_at = 0;
    int64_t other_at = 0;
    for (size_t d = 0; d < rank; ++d) {
      index_at += coord[d] * i.strides[d];
      other_at += coord[d] * o.strides[d];
      if (d != dim) target_at += coord[d] * t.strides[d];
    }
    int64_t value = 0;
    TL_RETURN_IF_ERROR(check_index_value(load_index(index, index_at), t.sizes[dim], dim,
                                         /*allow_negative=*/false, "index", &value));
    fn(target_at + value * t.strides[dim], other_at);
    size_t d = rank;
    for (;;) {
      if (d == 0) return Error::kOk;
      --d;
      if (++coord[d] < i.sizes[d]) break;
      coord[d] = 0;
    }
  }
}

}  // namespace torchlight::portable
