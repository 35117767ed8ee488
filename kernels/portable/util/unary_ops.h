// The whole kernel of a unary elementwise operator whose schema is
// `op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)`, with its prepare
// step:
//
//   constexpr auto kSqrt = [](auto x) { return std::sqrt(x); };
//   TL_UNARY_KERNEL(sqrt_out, kUnaryFloatSpec, kSqrt)
//
// defines sqrt_out (the reference eval) and sqrt_out_prepare (list both in
// portable_ops.def with TL_PORTABLE_OP_PREPARE), which checks the dtypes at
// load and installs a dense loop where it can (dense_path.h).
//
// `op` is called with one opmath value (opmath.h) of the compute dtype and
// returns the result in that type (or a bool, for kAny/kBool out rules); it
// is instantiated only for the dtypes of the spec's DtypeSet. Ops with
// further arguments call prepare_unary() (elementwise_spec.h) and
// apply_unary_elementwise() (elementwise.h) themselves.
#pragma once

#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::portable {

/// Float math (sqrt, exp, sin...): integers and bool compute in float32; out
/// takes any dtype the result can be cast to.
inline constexpr ElementwiseSpec kUnaryFloatSpec{DtypeSet::kFloat, Promotion::kIntToFloat,
                                                 OutDtypeRule::kCanCast};

/// Runs out = op(self) for the schema (self, out) -> out under `kSpec`
/// (a constexpr ElementwiseSpec with static storage). Failures go to `ctx`:
/// kInvalidType for a dtype outside the
/// spec (naming 'self' or 'out'), kInvalidArgument when out cannot be
/// resized to self's shape.
template <const ElementwiseSpec& kSpec, typename Op>
void unary_kernel(KernelContext& ctx, Span<EValue*> args, const Op& op) {
  set_return(args, 2, *args[1]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};

  ScalarType compute;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare_unary(self, out, kSpec, &compute));
  TL_SWITCH_DTYPE_SET(kSpec.dtypes, compute, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    TL_KERNEL_RETURN_IF_ERROR(ctx, apply_unary_elementwise<CTYPE>(self, out, [&op](Compute x) {
                                return static_cast<Compute>(op(x));
                              }));
  });
}

}  // namespace torchlight::portable

/// Defines `function` (out = kOp(self) under kSpec, the reference eval) and
/// `function##_prepare`. kSpec and kOp are constexpr objects with static
/// storage; kOp is a generic lambda. Use in namespace torchlight::portable.
#define TL_UNARY_KERNEL(function, kSpec, kOp)                                                 \
  void function(KernelContext& ctx, Span<EValue*> args) {                                     \
    unary_kernel<kSpec>(ctx, args, kOp);                                                      \
  }                                                                                           \
  Status function##_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {    \
    return dense_path::prepare_unary_op<kSpec, kOp, &function>(ctx, args, call);              \
  }
