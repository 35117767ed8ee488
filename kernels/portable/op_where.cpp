// aten::where.self_out and aten::masked_fill.Scalar_out: elementwise
// selection.
//
// ATen semantics:
// - where.self_out: out = condition ? self : other. condition must be bool
//   (uint8 is still accepted, deprecated in ATen); self and other promote
//   to their common dtype, and out must have exactly that dtype; all three
//   broadcast together.
// - masked_fill.Scalar_out: out = mask ? value : self. mask must be bool
//   and broadcasts with self (the result has the broadcast shape); value is
//   converted to self's dtype with an overflow check (NaN into an integer
//   tensor is an error); out must have exactly self's dtype.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

void where_self_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor condition{args[0]->to_tensor(), "condition"};
  const NamedTensor self{args[1]->to_tensor(), "self"};
  const NamedTensor other{args[2]->to_tensor(), "other"};
  const NamedTensor out{args[3]->to_tensor(), "out"};

  const ScalarType condition_type = condition.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx, condition_type == ScalarType::kBool || condition_type == ScalarType::kByte,
                  Error::kInvalidType, "argument 'condition' has dtype %s, expected bool",
                  to_string(condition_type));
  ScalarType common;
  TL_KERNEL_RETURN_IF_ERROR(ctx, compute_result_type(self, other, &common));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype_rule(common, out, OutDtypeRule::kSame));
  const NamedTensor inputs[] = {condition, self, other};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(inputs, out));

  TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    // A bool or uint8 condition converts to any real type without turning a
    // nonzero value into zero.
    TL_KERNEL_RETURN_IF_ERROR(ctx, apply_ternary_elementwise<CTYPE>(
                                       condition, self, other, out,
                                       [](Compute c, Compute a, Compute b) {
                                         return c != Compute(0) ? a : b;
                                       }));
  });
}

void masked_fill_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mask{args[1]->to_tensor(), "mask"};
  const EValue& value = *args[2];
  const NamedTensor out{args[3]->to_tensor(), "out"};

  const ScalarType type = self.tensor.scalar_type();
  TL_KERNEL_CHECK(ctx, mask.tensor.scalar_type() == ScalarType::kBool, Error::kInvalidType,
                  "argument 'mask' has dtype %s, expected bool",
                  to_string(mask.tensor.scalar_type()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype_rule(type, out, OutDtypeRule::kSame));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(self, mask, out));

  TL_SWITCH_REAL_TYPES(type, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_scalar_fits(value, type, "value"));
    const Compute fill = convert<Compute>(scalar_to<CTYPE>(value));
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_binary_elementwise<CTYPE>(self, mask, out, [fill](Compute x, Compute m) {
          return m != Compute(0) ? fill : x;
        }));
  });
}

}  // namespace torchlight::portable
