// A kernel split in two: what the program fixes (kCheck: dtypes, ranks,
// dims, list lengths), run once at load by the prepare step and on every
// call by the reference eval, and the rest (kShaped: the checks a run's
// shapes or values decide, and the work), which the prepare step installs
// as the eval. kCheck errors name the argument; the runtime adds the
// operator.
#pragma once

#include <cstddef>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::split_checks {

using CheckFunction = Status (*)(Span<EValue*> args);

/// The reference eval: out = args[kOut] goes to the return slot after it
/// (also when a check fails, as the kernels always did), then both halves.
template <size_t kOut, CheckFunction kCheck, KernelFunction kShaped>
void reference_eval(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, kOut + 1, *args[kOut]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, kCheck(args));
  kShaped(ctx, args);
}

/// The prepare step: kCheck at load, then kShaped as the eval.
template <CheckFunction kCheck, KernelFunction kShaped>
Status prepare(Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(kCheck(args));
  call->eval = kShaped;
  return Error::kOk;
}

}  // namespace torchlight::portable::split_checks
