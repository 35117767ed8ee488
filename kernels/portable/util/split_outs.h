// The out list of split_copy, split_with_sizes_copy and unbind_copy: each
// out tensor takes a slice of self along one dimension.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dim_index.h"
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

/// What split_copy, split_with_sizes_copy and unbind_copy check at load
/// (the program fixes it): the appended return list, self's rank (`verb`
/// names the op in the message), `dim` at args[dim_index], and that every
/// out in the list at args[out_index] has self's dtype. Errors name the
/// argument.
inline Status check_split_call(Span<EValue*> args, size_t dim_index, size_t out_index,
                               const char* verb) {
  TL_RETURN_IF_ERROR(check_void_out_return_list(args, out_index));
  const Tensor self = args[0]->to_tensor();
  TL_CHECK_OR_RETURN(self.dim() > 0, Error::kInvalidArgument,
                     "argument 'self' is 0-d; %s needs at least one dimension", verb);
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[dim_index]->to_int(), self.dim(), "dim", &dim));
  const Span<const Tensor> outs = args[out_index]->to_tensor_list();
  for (size_t i = 0; i < outs.size(); ++i) {
    TL_CHECK_OR_RETURN(!outs[i].defined() || outs[i].scalar_type() == self.scalar_type(),
                       Error::kInvalidType,
                       "argument 'out' has dtype %s at position %zu, expected %s (the dtype of "
                       "'self')",
                       to_string(outs[i].scalar_type()), i, to_string(self.scalar_type()));
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
