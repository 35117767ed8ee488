#include "kernels/portable/util/kernel_args.h"

#include <cstdio>

#include "runtime/core/result.h"

namespace torchlight::portable {

Status check_void_out_list_args(Span<EValue* const> args, Span<const ArgSpec> specs) {
  if (args.size() == specs.size()) return check_args(args, specs);
  if (args.size() != specs.size() + 1) {
    char names[160];
    format_arg_names(specs, names, sizeof(names));
    return Status::error(Error::kInvalidArgument,
                         "expected %zu arguments (%s), or %zu with the return list upstream's "
                         "emitter appends, got %zu",
                         specs.size(), names, specs.size() + 1, args.size());
  }
  TL_RETURN_IF_ERROR(check_args(args.subspan(0, specs.size()), specs));
  const EValue* ret = args[specs.size()];
  TL_CHECK_OR_RETURN(ret != nullptr, Error::kInvalidArgument,
                     "argument %zu (the return list) is missing (null)", specs.size());
  TL_CHECK_OR_RETURN(ret->is_tensor_list(), Error::kInvalidType,
                     "the return list after 'out' must be a Tensor[], got %s",
                     to_string(ret->tag()));
  const Span<const Tensor> outs = args[specs.size() - 1]->to_tensor_list();
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
