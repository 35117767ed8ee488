// aten::mul.out and aten::mul.Scalar_out: out = self * other.
//
// ATen semantics: type promotion, broadcasting, wrapping integers, bool mul
// is logical and; float16/bfloat16 compute in float and round once. As in
// ATen, a Scalar `other` multiplies float16/bfloat16 in float without first
// being rounded to the common dtype. (ATen does the same for a one-element
// *tensor* `other`; here a tensor operand is always converted to the common
// dtype first, which can differ by one unit in the last place.)
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/arith_fast_path.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

void mul_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor other{args[1]->to_tensor(), "other"};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  ScalarType common;
  TL_KERNEL_RETURN_IF_ERROR(ctx, compute_result_type(self, other, &common));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(self, other, out));

  TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_binary_elementwise<CTYPE>(self, other, out, [](Compute a, Compute b) {
          return opmath_mul(a, b);
        }));
  });
}

void mul_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const EValue& other = *args[1];
  const NamedTensor out{args[2]->to_tensor(), "out"};

  ResultType result_type;
  TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor(self));
  result_type.add_scalar(other);
  const ScalarType common = result_type.get();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));

  TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    const Compute factor = scalar_to<Compute>(other);
    TL_KERNEL_RETURN_IF_ERROR(ctx, apply_unary_elementwise<CTYPE>(self, out, [factor](Compute a) {
                                return opmath_mul(a, factor);
                              }));
  });
}

Status mul_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return arith_fast_path::prepare_arith<arith_fast_path::kMulOut, mul_out>(args, call);
}

Status mul_scalar_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return arith_fast_path::prepare_arith<arith_fast_path::kMulScalarOut, mul_scalar_out>(args, call);
}

}  // namespace torchlight::portable
