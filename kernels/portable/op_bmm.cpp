// aten::bmm.out: out[b] = self[b] @ mat2[b] for self [B, m, k] and mat2
// [B, k, n] (no broadcasting of the batch).
//
// ATen semantics as mm.out (op_mm.cpp): one dtype for all three, any real
// type but bool, float accumulation for float16/bfloat16, wrapping ints.
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
void bmm_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mat2{args[1]->to_tensor(), "mat2"};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, check_matmul_shapes(self, mat2, 3));
  const SizesType out_sizes[] = {self.tensor.size(0), self.tensor.size(1), mat2.tensor.size(2)};
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  if (out.tensor.numel() == 0) return;

  const Span<const StridesType> c_strides = out.tensor.strides();
  for (int64_t batch = 0; batch < self.tensor.size(0); ++batch) {
    CTYPE* c = out.tensor.mutable_data_ptr<CTYPE>() + batch * c_strides[0];
    matmul_strided(matrix_of<CTYPE>(self.tensor, batch), matrix_of<CTYPE>(mat2.tensor, batch),
                   [&](int64_t i, int64_t j, opmath_t<CTYPE> acc) {
                     c[i * c_strides[1] + j * c_strides[2]] = convert<CTYPE>(acc);
                   });
  }
}

Status check_bmm_call(Span<EValue*> args) {
  return check_matmul_call({args[0]->to_tensor(), "self"}, {args[1]->to_tensor(), "mat2"},
                           {args[2]->to_tensor(), "out"}, 3);
}

}  // namespace

void bmm_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_bmm_call(args));
  TL_SWITCH_REAL_TYPES_NO_BOOL(args[0]->to_tensor().scalar_type(), ctx, "self", CTYPE,
                               [&] { bmm_shaped<CTYPE>(ctx, args); });
}

// Ranks and dtypes are the program's: checked at load, with the loop for
// the dtype picked there.
Status bmm_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_bmm_call(args));
  visit_real_type_no_bool(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    call->eval = &bmm_shaped<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
