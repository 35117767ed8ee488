#include "kernels/portable/util/kernel_args.h"

#include "runtime/core/result.h"

namespace torchlight::portable {

Status check_void_out_return_list(Span<EValue* const> args, size_t out_index) {
  if (args.size() <= out_index + 1) return Error::kOk;  // No appended return slot.
  const EValue* ret = args[out_index + 1];
  TL_CHECK_OR_RETURN(ret != nullptr, Error::kInvalidArgument,
                     "argument %zu (the return list) is missing (null)", out_index + 1);
  TL_CHECK_OR_RETURN(ret->is_tensor_list(), Error::kInvalidType,
                     "the return list after 'out' must be a Tensor[], got %s",
                     to_string(ret->tag()));
  const Span<const Tensor> outs = args[out_index]->to_tensor_list();
  const Span<const Tensor> returned = ret->to_tensor_list();
  TL_CHECK_OR_RETURN(returned.size() == outs.size(), Error::kInvalidArgument,
                     "the return list after 'out' has %zu tensors, 'out' has %zu; they must name "
                     "the same tensors",
                     returned.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    TL_CHECK_OR_RETURN(returned[i].impl() == outs[i].impl(), Error::kInvalidArgument,
                       "the return list after 'out' differs from 'out' at position %zu; they "
                       "must name the same tensors",
                       i);
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
