// The kernel functions of the optimized library, for its table
// (optimized_kernels.cpp) and for tests that call them directly.
//
// Each takes float32 operands onto gemm (gemm/gemm.h). Arguments are checked
// with the portable library's helpers, so errors read the same; dtypes and
// layouts these kernels do not speed up are handed to the portable kernel
// of the same operator (linear, which has no portable kernel here, handles
// every layout itself).
#pragma once

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::optimized {

/// aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
void mm_out(KernelContext& ctx, Span<EValue*> args);

/// aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)
void bmm_out(KernelContext& ctx, Span<EValue*> args);

/// aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1,
///                 Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
void addmm_out(KernelContext& ctx, Span<EValue*> args);

/// aten::linear.out(Tensor input, Tensor weight, Tensor? bias=None, *,
///                  Tensor(a!) out) -> Tensor(a!)
void linear_out(KernelContext& ctx, Span<EValue*> args);

/// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
///                       SymInt[] padding, SymInt[] dilation, bool transposed,
///                       SymInt[] output_padding, SymInt groups, *, Tensor(a!) out)
/// 2-D, one group, not transposed, float32, NCHW or channels-last: im2col +
/// gemm; everything else is the portable kernel's.
void convolution_out(KernelContext& ctx, Span<EValue*> args);
/// Sizes its scratch: gemm's workspace and, when the load-time shapes take
/// the fast path, the unfolded image.
Status prepare_convolution(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// aten::add.out, sub.out, mul.out, div.out: the portable kernels; their
/// prepare steps install the portable fast path with large float32 loops
/// split over the thread pool (op_arith.cpp).
void add_out(KernelContext& ctx, Span<EValue*> args);
void sub_out(KernelContext& ctx, Span<EValue*> args);
void mul_out(KernelContext& ctx, Span<EValue*> args);
void div_out(KernelContext& ctx, Span<EValue*> args);
Status prepare_add(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);
Status prepare_sub(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);
Status prepare_mul(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);
Status prepare_div(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

/// aten::permute_copy.out: the portable kernel; its prepare step installs
/// the portable gather with large copies split over the thread pool
/// (op_permute_copy.cpp).
void permute_copy_out(KernelContext& ctx, Span<EValue*> args);
Status prepare_permute_copy(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

}  // namespace torchlight::optimized
