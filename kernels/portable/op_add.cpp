// aten::add.out and aten::add.Scalar_out: out = self + alpha * other.
//
// ATen semantics: the common dtype follows type promotion (type_promotion.h);
// alpha must suit it (no Bool alpha unless bool, no float alpha for an
// integral result, no overflow) and is converted to it; inputs broadcast;
// integers wrap; bool add is logical or. float16/bfloat16 compute in float
// and round once, as ATen's vectorised CPU path does (its scalar path for
// non-contiguous tensors rounds alpha * other to half first, so it can
// differ from ours by one unit in the last place when alpha != 1).
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

void add_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor other{args[1]->to_tensor(), "other"};
  const EValue& alpha = *args[2];
  const NamedTensor out{args[3]->to_tensor(), "out"};

  ScalarType common;
  TL_KERNEL_RETURN_IF_ERROR(ctx, compute_result_type(self, other, &common));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_alpha(alpha, common));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_to_broadcast_shape(self, other, out));

  TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    // ATen converts alpha to the common dtype, then computes in opmath.
    const Compute alpha_value = convert<Compute>(scalar_to<CTYPE>(alpha));
    TL_KERNEL_RETURN_IF_ERROR(
        ctx, apply_binary_elementwise<CTYPE>(self, other, out, [alpha_value](Compute a, Compute b) {
          return opmath_add(a, opmath_mul(alpha_value, b));
        }));
  });
}

void add_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const EValue& other = *args[1];
  const EValue& alpha = *args[2];
  const NamedTensor out{args[3]->to_tensor(), "out"};

  ResultType result_type;
  TL_KERNEL_RETURN_IF_ERROR(ctx, result_type.add_tensor(self));
  result_type.add_scalar(other);
  const ScalarType common = result_type.get();
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_alpha(alpha, common));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_out_dtype(common, out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));

  TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
    using Compute = opmath_t<CTYPE>;
    // `other` becomes a tensor of the common dtype in ATen: converted
    // without a range check (int8 + 300 adds 44), unlike alpha.
    const Compute addend =
        opmath_mul(convert<Compute>(scalar_to<CTYPE>(alpha)), convert<Compute>(scalar_to<CTYPE>(other)));
    TL_KERNEL_RETURN_IF_ERROR(ctx, apply_unary_elementwise<CTYPE>(self, out, [addend](Compute a) {
                                return opmath_add(a, addend);
                              }));
  });
}

Status add_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return arith_fast_path::prepare_arith<arith_fast_path::kAddOut, add_out>(args, call);
}

Status add_scalar_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return arith_fast_path::prepare_arith<arith_fast_path::kAddScalarOut, add_scalar_out>(args, call);
}

}  // namespace torchlight::portable
