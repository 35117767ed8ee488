// The out list of split_copy, split_with_sizes_copy and unbind_copy: each
// out tensor takes a slice of self along one dimension.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Checks that `outs` has `count` defined tensors. Errors: kInvalidArgument
/// naming 'out' and the counts.
inline Status check_out_list(Span<const Tensor> outs, size_t count) {
  TL_CHECK_OR_RETURN(outs.size() == count, Error::kInvalidArgument,
                     "argument 'out' has %zu tensors, expected %zu", outs.size(), count);
  for (size_t i = 0; i < outs.size(); ++i) {
    TL_CHECK_OR_RETURN(outs[i].defined(), Error::kInvalidArgument,
                       "argument 'out' has no tensor at position %zu", i);
  }
  return Error::kOk;
}

/// Copies the slice [start, start + length) of self along `dim` into `out`
/// (position `index` of the out list, for messages), resizing it; with
/// `drop_dim` the dimension is removed (length must be 1), as unbind does.
/// Errors: as copy_view_to_out, prefixed with the out position.
inline Status copy_slice_to_out(const NamedTensor& self, size_t dim, int64_t start, int64_t length,
                                bool drop_dim, const Tensor& out, size_t index) {
  StridedView view(self.tensor);
  if (drop_dim) {
    view.select(dim, start);
  } else {
    view.narrow(dim, start, length);
  }
  Status status = copy_view_to_out(self, view, {out, "out"});
  if (!status.ok()) return status.with_context("out[%zu]", index);
  return Error::kOk;
}

}  // namespace torchlight::portable
