// aten::mm.out: out = self @ mat2 for 2-D self [m, k] and mat2 [k, n].
//
// ATen semantics: self, mat2 and out share one dtype (any real type but
// bool); float16/bfloat16 accumulate in float and round once; integers wrap.
// Inputs and out may have any strides (util/matmul.h picks the loop order).
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// The shapes of this run, the resize and the product; after
// check_matmul_call, with operands of dtype CTYPE.
template <typename CTYPE>
void mm_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mat2{args[1]->to_tensor(), "mat2"};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, check_matmul_shapes(self, mat2, 2));
  const SizesType out_sizes[] = {self.tensor.size(0), mat2.tensor.size(1)};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  CTYPE* c = out.tensor.mutable_data_ptr<CTYPE>();
  const int64_t c_rs = out.tensor.strides()[0];
  const int64_t c_cs = out.tensor.strides()[1];
  auto store = [&](int64_t i, int64_t j, opmath_t<CTYPE> acc) {
    c[i * c_rs + j * c_cs] = convert<CTYPE>(acc);
  };
  matmul_strided(matrix_of<CTYPE>(self.tensor), matrix_of<CTYPE>(mat2.tensor), store);
}

Status check_mm_call(Span<EValue*> args) {
  return check_matmul_call({args[0]->to_tensor(), "self"}, {args[1]->to_tensor(), "mat2"},
                           {args[2]->to_tensor(), "out"}, 2);
}

}  // namespace

void mm_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_mm_call(args));
  TL_SWITCH_REAL_TYPES_NO_BOOL(args[0]->to_tensor().scalar_type(), ctx, "self", CTYPE,
                               [&] { mm_shaped<CTYPE>(ctx, args); });
}

// Ranks and dtypes are the program's: checked at load, with the loop for
// the dtype picked there.
Status mm_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_mm_call(args));
  visit_real_type_no_bool(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    call->eval = &mm_shaped<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
