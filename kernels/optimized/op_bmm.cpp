// aten::bmm.out for float32: out[b] = self[b] @ mat2[b] on gemm_batched
// (small matrices one per thread, large ones each over every thread).
// Checks as the portable kernel; other dtypes and an out whose rows are not
// contiguous go to the portable kernel.
#include "kernels/optimized/gemm/gemm.h"
#include "kernels/optimized/util/gemm_scratch.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/util/matrix_layout.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/matmul.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::optimized {

namespace {

using portable::NamedTensor;

}  // namespace

void bmm_out(KernelContext& ctx, Span<EValue*> args) {
  portable::set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor mat2{args[1]->to_tensor(), "mat2"};
  const NamedTensor out{args[2]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_matmul_operands(self, mat2, 3));
  const ScalarType dtype = self.tensor.scalar_type();
  if (dtype != ScalarType::kFloat) return portable::bmm_out(ctx, args);
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_same_dtype(out, dtype, "self"));
  const SizesType out_sizes[] = {self.tensor.size(0), self.tensor.size(1), mat2.tensor.size(2)};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::check_has_data(out));
  if (out.tensor.numel() == 0) return;
  int64_t ldc = 0;
  if (!rows_are_contiguous(out.tensor, 1, &ldc)) return portable::bmm_out(ctx, args);

  GemmProblem p;
  p.workspace = gemm_workspace(ctx);
  p.m = out_sizes[1];
  p.n = out_sizes[2];
  p.k = self.tensor.size(2);
  p.a = last_two_dims(self.tensor);
  p.b = last_two_dims(mat2.tensor);
  p.c = out.tensor.mutable_data_ptr<float>();
  p.ldc = ldc;
  TL_KERNEL_RETURN_IF_ERROR(ctx, gemm_batched(p, out_sizes[0], self.tensor.strides()[0],
                                              mat2.tensor.strides()[0], out.tensor.strides()[0]));
}

}  // namespace torchlight::optimized
