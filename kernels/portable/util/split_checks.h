// A kernel split in two: what the program fixes (kCheck: dtypes, ranks,
// dims, list lengths), run once at load by the prepare step and on every
// call by the reference eval, and the rest (kShaped: the checks a run's
// shapes or values decide, and the work), which the prepare step installs
// as the eval. kCheck errors name the argument; the runtime adds the
// operator. When the shaped half is one instance per dtype (or per other
// fixed choice), a pick function returns the instance for a checked call,
// so the prepare step installs it and the reference eval runs it. A shaped
// eval, being installed alone, sets the return slot itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::split_checks {

using CheckFunction = Status (*)(Span<EValue*> args);

/// kOut for a kernel with no single out to return (a tuple of outs, a view).
inline constexpr size_t kNoReturn = SIZE_MAX;

/// The reference eval: out = args[kOut] goes to the return slot after it
/// (also when a check fails, as the kernels always did; not for kNoReturn),
/// then both halves.
template <size_t kOut, CheckFunction kCheck, KernelFunction kShaped>
void reference_eval(KernelContext& ctx, Span<EValue*> args) {
  if constexpr (kOut != kNoReturn) set_return(args, kOut + 1, *args[kOut]);
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

/// The shaped eval for a call kCheck accepted, or null (then the prepare
/// step keeps the reference eval).
using PickFunction = KernelFunction (*)(Span<EValue*> args);

/// The reference eval of a picked kernel: the return slot as above (unless
/// kNoReturn), kCheck, then the picked shaped eval.
template <size_t kOut, CheckFunction kCheck, PickFunction kPick>
void picked_reference_eval(KernelContext& ctx, Span<EValue*> args) {
  if constexpr (kOut != kNoReturn) set_return(args, kOut + 1, *args[kOut]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, kCheck(args));
  const KernelFunction shaped = kPick(args);
  TL_KERNEL_CHECK(ctx, shaped != nullptr, Error::kInternal, "no eval for this call");
  shaped(ctx, args);
}

/// The prepare step of a picked kernel: kCheck at load, the pick as the eval.
template <CheckFunction kCheck, PickFunction kPick>
Status picked_prepare(Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(kCheck(args));
  const KernelFunction shaped = kPick(args);
  if (shaped != nullptr) call->eval = shaped;
  return Error::kOk;
}

}  // namespace torchlight::portable::split_checks
