// The whole kernel of a binary elementwise operator, for the two common
// schemas:
//
//   op.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)
//   op.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) -> Tensor(a!)
//
//   void maximum_out(KernelContext& ctx, Span<EValue*> args) {
//     binary_kernel<kMaximumSpec>(ctx, args, [](auto a, auto b) { return nan_max(a, b); });
//   }
//
// `op` takes two opmath values (opmath.h) of the compute dtype and returns
// one (or a bool, for kAny/kBool out rules, as comparisons do); it is
// instantiated only for the dtypes of the spec's DtypeSet. A Scalar `other`
// is converted to the compute dtype first, as ATen's wrapped numbers are
// (unless the spec says scalar_in_opmath).
#pragma once

#include <cstdint>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::portable {

/// Comparisons (eq, lt...) and logical ops: any input dtypes, compared in
/// their common dtype; the bool result goes into an out of any real dtype.
inline constexpr ElementwiseSpec kComparisonSpec{DtypeSet::kReal, Promotion::kDefault,
                                                 OutDtypeRule::kAny};

/// Fails when any element of `divisor`, converted to CTYPE, is zero: ATen
/// raises ZeroDivisionError for integer division and remainder. Call only
/// when the result has elements (ATen checks inside its loop). Errors:
/// kInvalidArgument naming the argument.
template <typename CTYPE>
Status check_nonzero_divisor(const NamedTensor& divisor) {
  BroadcastIndexer indexer;
  TL_RETURN_IF_ERROR(
      indexer.init(divisor.tensor.sizes(), Span<const NamedTensor>(&divisor, 1)));
  if (indexer.numel() == 0) return Error::kOk;
  const LoadFn<CTYPE> load = get_load_fn<CTYPE>(divisor.tensor.scalar_type());
  const char* data = divisor.tensor.const_data_ptr<char>();
  TL_CHECK_OR_RETURN(load != nullptr && data != nullptr, Error::kInvalidArgument,
                     "argument '%s' has dtype %s or no data", divisor.name,
                     to_string(divisor.tensor.scalar_type()));
  const int64_t element_size = static_cast<int64_t>(divisor.tensor.element_size());
  bool has_zero = false;
  indexer.for_each([&](const int64_t* offsets) {
    has_zero = has_zero || load(data + offsets[0] * element_size) == 0;
  });
  TL_CHECK_OR_RETURN(!has_zero, Error::kInvalidArgument,
                     "integer division by zero: argument '%s' has a zero element (ATen raises "
                     "ZeroDivisionError)",
                     divisor.name);
  return Error::kOk;
}

/// Runs out = op(self, other) for the schema (self, other, out) -> out
/// under `kSpec` (a constexpr ElementwiseSpec with static storage).
/// `other_name` is the schema's name for the second argument (static
/// storage; "exponent" for pow). Failures go to `ctx`:
/// kInvalidType for an unsupported dtype (naming the argument);
/// kInvalidArgument for shapes that do not broadcast, an out that cannot be
/// resized, or a zero integer divisor when the spec asks.
template <const ElementwiseSpec& kSpec, typename Op>
void binary_kernel(KernelContext& ctx, Span<EValue*> args, const Op& op,
                   const char* other_name = "other") {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor other{args[1]->to_tensor(), other_name};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  ScalarType compute;
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare_binary(self, other, out, kSpec, &compute));
  TL_SWITCH_DTYPE_SET(kSpec.dtypes, compute, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    if constexpr (kSpec.nonzero_int_divisor && std::is_integral_v<CTYPE>) {
      if (out.tensor.numel() > 0) {
        TL_KERNEL_RETURN_IF_ERROR(ctx, check_nonzero_divisor<CTYPE>(other));
      }
    }
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_binary_elementwise<CTYPE>(self, other, out, [&op](Compute a, Compute b) {
          return static_cast<Compute>(op(a, b));
        }));
  });
}

/// Runs out = op(self, other) for the schema (self, Scalar other, out) ->
/// out under `kSpec`. Failures: as binary_kernel.
template <const ElementwiseSpec& kSpec, typename Op>
void binary_scalar_kernel(KernelContext& ctx, Span<EValue*> args, const Op& op) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const EValue& other = *args[1];
  const NamedTensor out{args[2]->to_tensor(), "out"};

  ScalarType compute;
  TL_KERNEL_RETURN_IF_ERROR(ctx,
                            prepare_binary_scalar(self, other, "other", out, kSpec, &compute));
  TL_SWITCH_DTYPE_SET(kSpec.dtypes, compute, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    const Compute b = kSpec.scalar_in_opmath ? scalar_to<Compute>(other)
                                             : convert<Compute>(scalar_to<CTYPE>(other));
    if constexpr (kSpec.nonzero_int_divisor && std::is_integral_v<CTYPE>) {
      TL_KERNEL_CHECK(ctx, out.tensor.numel() == 0 || b != 0, Error::kInvalidArgument,
                      "integer division by zero: argument 'other' is 0 as %s (ATen raises "
                      "ZeroDivisionError)",
                      to_string(compute));
    }
    TL_KERNEL_RETURN_IF_ERROR(ctx, apply_unary_elementwise<CTYPE>(self, out, [&op, b](Compute a) {
                                return static_cast<Compute>(op(a, b));
                              }));
  });
}

}  // namespace torchlight::portable

/// Defines `function` (out = kOp(self, other) under kSpec, the reference
/// eval of the Tensor schema) and `function##_prepare` (dense_path.h).
/// kSpec and kOp are constexpr objects with static storage; kOp is a
/// generic lambda. Use in namespace torchlight::portable.
#define TL_BINARY_KERNEL(function, kSpec, kOp)                                             \
  void function(KernelContext& ctx, Span<EValue*> args) {                                  \
    binary_kernel<kSpec>(ctx, args, kOp);                                                  \
  }                                                                                        \
  Status function##_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) { \
    return dense_path::prepare_binary_op<kSpec, kOp, &function>(ctx, args, call);          \
  }

/// As TL_BINARY_KERNEL, for the schema with a Scalar `other`.
#define TL_BINARY_SCALAR_KERNEL(function, kSpec, kOp)                                      \
  void function(KernelContext& ctx, Span<EValue*> args) {                                  \
    binary_scalar_kernel<kSpec>(ctx, args, kOp);                                           \
  }                                                                                        \
  Status function##_prepare(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) { \
    return dense_path::prepare_binary_scalar_op<kSpec, kOp, &function>(ctx, args, call);   \
  }
