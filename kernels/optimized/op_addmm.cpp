// aten::addmm.out for float32: out = beta * self + alpha * (mat1 @ mat2) on
// gemm, self broadcast through zero strides (a bias row [n] is fused into
// the product's epilogue). BLAS semantics as the portable kernel: beta == 0
// ignores self, alpha == 0 ignores the product. mat2 may be a transposed
// weight (what nn.Linear exports to), which gemm reads without a copy.
// Checks as the portable kernel; other dtypes and an out whose rows are not
// contiguous go to the portable kernel.
#include "kernels/optimized/gemm/gemm.h"
#include "kernels/optimized/util/gemm_scratch.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/util/matrix_layout.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::optimized {

namespace {

using portable::NamedTensor;

}  // namespace

void addmm_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 6, *args[5]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mat1{args[1]->to_tensor(), "mat1"};
  const NamedTensor mat2{args[2]->to_tensor(), "mat2"};
  const NamedTensor out{args[5]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_matmul_operands(mat1, mat2, 2));
  const ScalarType dtype = mat1.tensor.scalar_type();
  if (dtype != ScalarType::kFloat) return portable::addmm_out(ctx, args);
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_same_dtype(self, dtype, "mat1"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_same_dtype(out, dtype, "mat1"));
  const SizesType out_sizes[] = {mat1.tensor.size(0), mat2.tensor.size(1)};
  if (!portable::broadcasts_to(self.tensor.sizes(), out_sizes)) {
    char have[128];
    char want[128];
    TL_KERNEL_CHECK(ctx, false, Error::kInvalidArgument,
                    "argument 'self' of shape %s does not broadcast to the product's shape %s",
                    format_sizes(self.tensor.sizes(), have, sizeof(have)),
                    format_sizes(out_sizes, want, sizeof(want)));
  }
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  int64_t ldc = 0;
  if (!rows_are_contiguous(out.tensor, 0, &ldc)) return portable::addmm_out(ctx, args);

  int64_t self_strides[2];
  broadcast_strides(self.tensor, out_sizes, self_strides);
  GemmProblem p;
  p.workspace = gemm_workspace(ctx);
  p.m = out_sizes[0];
  p.n = out_sizes[1];
  p.k = mat1.tensor.size(1);
  p.a = last_two_dims(mat1.tensor);
  p.b = last_two_dims(mat2.tensor);
  p.c = out.tensor.mutable_data_ptr<float>();
  p.ldc = ldc;
  p.alpha = portable::scalar_to<float>(*args[4]);
  p.beta = portable::scalar_to<float>(*args[3]);
  p.addend = ConstMatrix{self.tensor.const_data_ptr<float>(), self_strides[0], self_strides[1]};
  TL_KERNEL_RETURN_IF_ERROR(ctx, gemm(p));
}

}  // namespace torchlight::optimized
