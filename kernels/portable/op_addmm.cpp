// aten::addmm.out: out = beta * self + alpha * (mat1 @ mat2), for mat1
// [m, k], mat2 [k, n] and self broadcastable to [m, n]. What nn.Linear
// exports to (addmm(bias, x, permute(weight))).
//
// ATen semantics: self, mat1, mat2 and out share one dtype (any real type
// but bool). beta and alpha are converted to that dtype first (so an int
// tensor with beta=0.5 uses beta 0). As in BLAS, beta == 0 ignores self
// (NaN in self does not propagate) and alpha == 0 ignores the product.
// float16/bfloat16 accumulate and combine in float, rounding once.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// What the program fixes: the ranks and dtypes. Checked at load by prepare,
// and on every call by the reference eval.
Status check_addmm_call(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mat1{args[1]->to_tensor(), "mat1"};
  // self before out: an out given self's wrong dtype names self.
  TL_RETURN_IF_ERROR(check_matmul_ranks_and_dtypes(mat1, {args[2]->to_tensor(), "mat2"}, 2));
  TL_RETURN_IF_ERROR(check_same_dtype(self, mat1.tensor.scalar_type(), "mat1"));
  return check_matmul_call(mat1, {args[2]->to_tensor(), "mat2"}, {args[5]->to_tensor(), "out"}, 2);
}

// The shapes of this run (inner sizes, self's broadcast), the resize and
// the product; after check_addmm_call, with every tensor of dtype CTYPE.
template <typename CTYPE>
void addmm_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 6, *args[5]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mat1{args[1]->to_tensor(), "mat1"};
  const NamedTensor mat2{args[2]->to_tensor(), "mat2"};
  const EValue& beta = *args[3];
  const EValue& alpha = *args[4];
  const NamedTensor out{args[5]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, check_matmul_shapes(mat1, mat2, 2));
  const SizesType out_sizes[] = {mat1.tensor.size(0), mat2.tensor.size(1)};
  if (!broadcasts_to(self.tensor.sizes(), out_sizes)) {
    char have[128];
    char want[128];
    TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                    "argument 'self' of shape %s does not broadcast to the product's shape %s",
                    format_sizes(self.tensor.sizes(), have, sizeof(have)),
                    format_sizes(out_sizes, want, sizeof(want)));
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));

  // self's strides over [m, n]: 0 where it is broadcast.
  const Tensor& s = self.tensor;
  const size_t lead = 2 - s.dim();
  int64_t self_strides[2] = {0, 0};
  for (size_t d = 0; d < s.dim(); ++d) {
    self_strides[lead + d] = s.size(d) == 1 ? 0 : s.strides()[d];
  }

  using Acc = opmath_t<CTYPE>;
  const Acc beta_value = convert<Acc>(scalar_to<CTYPE>(beta));
  const Acc alpha_value = convert<Acc>(scalar_to<CTYPE>(alpha));
  const CTYPE* self_data = s.const_data_ptr<CTYPE>();
  CTYPE* c = out.tensor.mutable_data_ptr<CTYPE>();
  const int64_t c_rs = out.tensor.strides()[0];
  const int64_t c_cs = out.tensor.strides()[1];
  auto emit = [&](int64_t i, int64_t j, Acc product) {
    Acc result = alpha_value == Acc(0) ? Acc(0) : opmath_mul(alpha_value, product);
    if (beta_value != Acc(0)) {
      const Acc bias = convert<Acc>(self_data[i * self_strides[0] + j * self_strides[1]]);
      result = opmath_add(result, opmath_mul(beta_value, bias));
    }
    c[i * c_rs + j * c_cs] = convert<CTYPE>(result);
  };
  if (alpha_value == Acc(0)) {
    // The product is ignored: do not compute it.
    for (int64_t i = 0; i < out_sizes[0]; ++i) {
      for (int64_t j = 0; j < out_sizes[1]; ++j) emit(i, j, Acc(0));
    }
    return;
  }
  matmul_strided(matrix_of<CTYPE>(mat1.tensor), matrix_of<CTYPE>(mat2.tensor), emit);
}

}  // namespace

void addmm_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 6, *args[5]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_addmm_call(args));
  TL_SWITCH_REAL_TYPES_NO_BOOL(args[1]->to_tensor().scalar_type(), ctx, "mat1", CTYPE,
                               [&] { addmm_shaped<CTYPE>(ctx, args); });
}

// Ranks and dtypes are the program's: checked at load, with the loop for
// the dtype picked there.
Status addmm_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_addmm_call(args));
  visit_real_type_no_bool(args[1]->to_tensor().scalar_type(), [&](auto tag) {
    call->eval = &addmm_shaped<typename decltype(tag)::type>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
