// The bodies of the pooling kernels, shared by the operators that differ
// only in their number of spatial dimensions (max_pool2d/3d_with_indices,
// avg_pool1d/2d/3d, adaptive average pooling 1d/2d/3d, adaptive_max_pool2d):
// argument checks, out resizing and dtype dispatch around pool_loops.h.
// Each op_<name>.cpp declares its schema and calls one of these.
// Header-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/pool_loops.h"
#include "kernels/portable/util/pooling.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/evalue.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::portable {

/// The checks of max_pool{2,3}d_with_indices.out that need no data (args =
/// self, kernel_size, stride, padding, dilation, ceil_mode, out, indices,
/// (out, indices)): self's rank and sizes, the lists' values, out's and
/// indices' dtypes, a kernel that fits the padded input. Fills `params` and
/// out's `sizes`. Shared by the eval and the prepare step (at load).
inline Status check_max_pool_call(Span<EValue*> args, size_t spatial, PoolParams* params,
                                  SizesType* sizes) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  const Tensor indices = args[7]->to_tensor();
  TL_RETURN_IF_ERROR(check_pool_input(self, spatial));
  TL_RETURN_IF_ERROR(read_pool_params(spatial, false, *args[1], *args[2], *args[3], args[4],
                                      args[5]->to_bool(), params));
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_CHECK_OR_RETURN(indices.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                     "argument 'indices' has dtype %s, expected int64",
                     to_string(indices.scalar_type()));
  return pool_output_sizes(self, *params, sizes);
}

/// max_pool{2,3}d_with_indices.out. Any real type but bool; indices int64.
inline void run_max_pool_with_indices(KernelContext& ctx, Span<EValue*> args, size_t spatial) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  const NamedTensor indices{args[7]->to_tensor(), "indices"};
  PoolParams params;
  SizesType sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_max_pool_call(args, spatial, &params, sizes));
  const ScalarType dtype = self.tensor.scalar_type();
  const Span<const SizesType> out_sizes(sizes, self.tensor.dim());
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, out_sizes));
  for (const NamedTensor* t : {&self, &out, &indices}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*t));
  }
  if (out.tensor.numel() == 0) return;
  TL_SWITCH_REAL_TYPES_NO_BOOL(dtype, ctx, "self", CTYPE, [&] {
    max_pool<CTYPE>(self.tensor, params, out.tensor, indices.tensor);
  });
}

/// The checks of avg_pool{1,2,3}d.out that need no data (args = self,
/// kernel_size, stride, padding, ceil_mode, count_include_pad,
/// [divisor_override,] out, out). The 1-D operator has no divisor_override
/// and takes exactly one value per list. Dtypes: float32, float64, int64,
/// and float16/bfloat16 unless `reduced_floats` is false (avg_pool3d's CPU
/// kernel has none). Fills `params` and out's `sizes`; shared by the eval
/// and the prepare step (at load).
inline Status check_avg_pool_call(Span<EValue*> args, size_t spatial, bool has_divisor,
                                  bool reduced_floats, PoolParams* params, SizesType* sizes) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[has_divisor ? 7 : 6]->to_tensor(), "out"};
  if (has_divisor && !args[6]->is_none()) {
    TL_CHECK_OR_RETURN(args[6]->to_int() != 0, Error::kInvalidArgument,
                       "argument 'divisor_override' is 0, expected a non-zero divisor or None");
  }
  TL_RETURN_IF_ERROR(check_pool_input(self, spatial));
  TL_RETURN_IF_ERROR(read_pool_params(spatial, spatial == 1, *args[1], *args[2], *args[3],
                                      nullptr, args[4]->to_bool(), params));
  const ScalarType dtype = self.tensor.scalar_type();
  const bool supported = dtype == ScalarType::kFloat || dtype == ScalarType::kDouble ||
                         dtype == ScalarType::kLong ||
                         (reduced_floats &&
                          (dtype == ScalarType::kHalf || dtype == ScalarType::kBFloat16));
  TL_CHECK_OR_RETURN(supported, Error::kInvalidType,
                     "argument 'self' has dtype %s, which is not supported (supported: %sfloat32, "
                     "float64, int64)",
                     to_string(dtype), reduced_floats ? "float16, bfloat16, " : "");
  TL_RETURN_IF_ERROR(check_same_dtype(out, dtype, "self"));
  return pool_output_sizes(self, *params, sizes);
}

/// avg_pool{1,2,3}d.out (see check_avg_pool_call).
inline void run_avg_pool(KernelContext& ctx, Span<EValue*> args, size_t spatial,
                         bool has_divisor, bool reduced_floats) {
  const size_t out_index = has_divisor ? 7 : 6;
  set_return(args, out_index + 1, *args[out_index]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[out_index]->to_tensor(), "out"};
  PoolParams params;
  SizesType sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, check_avg_pool_call(args, spatial, has_divisor, reduced_floats, &params, sizes));
  const int64_t divisor = has_divisor && !args[6]->is_none() ? args[6]->to_int() : 0;  // 0: none.
  const ScalarType dtype = self.tensor.scalar_type();
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, {sizes, self.tensor.dim()}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  if (out.tensor.numel() == 0) return;
  const bool count_include_pad = args[5]->to_bool();
  TL_SWITCH_REAL_TYPES_NO_BOOL(dtype, ctx, "self", CTYPE, [&] {
    avg_pool<CTYPE>(self.tensor, params, count_include_pad, divisor, out.tensor);
  });
}

/// The checks of an adaptive pooling that need no data (args = self,
/// output_size, out[, indices], return): self's rank and sizes, out's (and
/// indices') dtype, output_size. Fills out's `sizes`; shared by the eval and
/// the prepare step (at load).
inline Status check_adaptive_pool_call(Span<EValue*> args, size_t spatial, bool with_indices,
                                       SizesType* sizes) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_pool_input(self, spatial));
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), "self"));
  if (with_indices) {
    const ScalarType indices_type = args[3]->to_tensor().scalar_type();
    TL_CHECK_OR_RETURN(indices_type == ScalarType::kLong, Error::kInvalidType,
                       "argument 'indices' has dtype %s, expected int64",
                       to_string(indices_type));
  }
  return adaptive_pool_output_sizes(self, *args[1], spatial, sizes);
}

/// Adaptive pooling: average (no indices) or max (with indices); float
/// types only.
inline void run_adaptive_pool(KernelContext& ctx, Span<EValue*> args, size_t spatial,
                              bool with_indices) {
  if (!with_indices) set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const NamedTensor indices{with_indices ? args[3]->to_tensor() : Tensor(), "indices"};
  SizesType sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_adaptive_pool_call(args, spatial, with_indices, sizes));
  const Span<const SizesType> out_sizes(sizes, self.tensor.dim());
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  if (with_indices) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, out_sizes));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(indices));
  }
  if (out.tensor.numel() == 0) return;
  TL_SWITCH_FLOAT_TYPES(self.tensor.scalar_type(), ctx, "self", CTYPE, [&] {
    if (with_indices) {
      adaptive_max_pool<CTYPE>(self.tensor, spatial, out.tensor, indices.tensor);
    } else {
      adaptive_avg_pool<CTYPE>(self.tensor, spatial, out.tensor);
    }
  });
}

}  // namespace torchlight::portable
