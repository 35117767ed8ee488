// The prepare steps of the optimized matmul kernels (mm, bmm, addmm,
// linear): what the program fixes, the operands' ranks and dtypes, is
// checked once at load with the messages their evals give, naming the
// argument; then gemm's workspace is sized as method scratch
// (gemm_scratch.h). Shapes, which dynamic dims may change, are still
// checked by eval.
#pragma once

#include <cstddef>

#include "kernels/optimized/util/gemm_scratch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::optimized {

namespace internal {

// Ranks as check_matmul_operands (portable/util/matmul.h) wants them, then
// the dtypes: b and out have a's.
inline Status check_matmul_kinds(const portable::NamedTensor& a, const portable::NamedTensor& b,
                                 const portable::NamedTensor& out, size_t rank) {
  const char* what = rank == 2 ? "a matrix" : "a batch of matrices";
  TL_RETURN_IF_ERROR(portable::check_rank(a, rank, what));
  TL_RETURN_IF_ERROR(portable::check_rank(b, rank, what));
  TL_RETURN_IF_ERROR(portable::check_same_dtype(b, a.tensor.scalar_type(), a.name));
  return portable::check_same_dtype(out, a.tensor.scalar_type(), a.name);
}

}  // namespace internal

/// mm.out(self, mat2, *, out).
inline Status prepare_mm(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(internal::check_matmul_kinds({args[0]->to_tensor(), "self"},
                                                  {args[1]->to_tensor(), "mat2"},
                                                  {args[2]->to_tensor(), "out"}, 2));
  return prepare_gemm_scratch(ctx, args, call);
}

/// bmm.out(self, mat2, *, out).
inline Status prepare_bmm(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(internal::check_matmul_kinds({args[0]->to_tensor(), "self"},
                                                  {args[1]->to_tensor(), "mat2"},
                                                  {args[2]->to_tensor(), "out"}, 3));
  return prepare_gemm_scratch(ctx, args, call);
}

/// addmm.out(self, mat1, mat2, *, beta, alpha, out): self also has mat1's
/// dtype.
inline Status prepare_addmm(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  const portable::NamedTensor mat1{args[1]->to_tensor(), "mat1"};
  TL_RETURN_IF_ERROR(internal::check_matmul_kinds(mat1, {args[2]->to_tensor(), "mat2"},
                                                  {args[5]->to_tensor(), "out"}, 2));
  TL_RETURN_IF_ERROR(portable::check_same_dtype({args[0]->to_tensor(), "self"},
                                                mat1.tensor.scalar_type(), "mat1"));
  return prepare_gemm_scratch(ctx, args, call);
}

/// linear.out(input, weight, bias?, *, out): input at least 1-D, weight a
/// matrix or a vector, all float32 (the table's key holds input, weight
/// and out to float32; bias is checked here).
inline Status prepare_linear(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  const Tensor input = args[0]->to_tensor();
  const Tensor weight = args[1]->to_tensor();
  char shape[128];
  TL_CHECK_OR_RETURN(input.dim() >= 1, Error::kInvalidArgument,
                     "argument 'input' must have at least 1 dimension, got shape %s",
                     format_sizes(input.sizes(), shape, sizeof(shape)));
  TL_CHECK_OR_RETURN(weight.dim() == 1 || weight.dim() == 2, Error::kInvalidArgument,
                     "argument 'weight' must be a matrix [out_features, in_features] or a vector "
                     "[in_features], got shape %s (%zu-D)",
                     format_sizes(weight.sizes(), shape, sizeof(shape)), weight.dim());
  TL_CHECK_OR_RETURN(input.scalar_type() == ScalarType::kFloat, Error::kInvalidType,
                     "argument 'input' has dtype %s; the optimized linear kernel takes float32 only",
                     to_string(input.scalar_type()));
  TL_RETURN_IF_ERROR(portable::check_same_dtype({weight, "weight"}, ScalarType::kFloat, "input"));
  if (args[2]->is_tensor() && args[2]->to_tensor().defined()) {
    TL_RETURN_IF_ERROR(
        portable::check_same_dtype({args[2]->to_tensor(), "bias"}, ScalarType::kFloat, "input"));
  }
  TL_RETURN_IF_ERROR(
      portable::check_same_dtype({args[3]->to_tensor(), "out"}, ScalarType::kFloat, "input"));
  return prepare_gemm_scratch(ctx, args, call);
}

}  // namespace torchlight::optimized
