// The bodies of the pooling kernels, shared by the operators that differ
// only in their number of spatial dimensions (max_pool2d/3d_with_indices,
// avg_pool1d/2d/3d, adaptive average pooling 1d/2d/3d, adaptive_max_pool2d):
// argument checks, out resizing and dtype dispatch around pool_loops.h.
// Each is split (util/split_checks.h) into what the program fixes (self's
// rank and dtype, the lists, the outs' dtypes: checked at load by the
// prepare step) and a shaped eval per dtype (the lists re-read, as an
// earlier instruction may write them, self's sizes, the outs resized, the
// loop). Each op_<name>.cpp instantiates one of these.
// Header-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/pool_loops.h"
#include "kernels/portable/util/pooling.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/evalue.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::portable {

// ---- max_pool{2,3}d_with_indices.out: args = self, kernel_size, stride,
// padding, dilation, ceil_mode, out, indices, (out, indices) ----

inline Status read_max_pool_params(Span<EValue*> args, size_t spatial, PoolParams* params) {
  return read_pool_params(spatial, false, *args[1], *args[2], *args[3], args[4],
                          args[5]->to_bool(), params);
}

/// What the program fixes: self's rank and dtype (any real type but bool),
/// the lists' values, out's and indices' dtypes.
template <size_t kSpatial>
Status check_max_pool_fixed(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  const Tensor indices = args[7]->to_tensor();
  PoolParams params;
  TL_RETURN_IF_ERROR(check_pool_input(self, kSpatial, /*rank_only=*/true));
  TL_RETURN_IF_ERROR(read_max_pool_params(args, kSpatial, &params));
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_CHECK_OR_RETURN(indices.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                     "argument 'indices' has dtype %s, expected int64",
                     to_string(indices.scalar_type()));
  const ScalarType dtype = self.tensor.scalar_type();
  if (!visit_real_type_no_bool(dtype, [](auto) {})) {
    return unsupported_dtype("self", dtype, kRealTypeNoBoolNames);
  }
  return Error::kOk;
}

/// The checks of max_pool{2,3}d_with_indices.out that need no data: the
/// fixed ones, then self's sizes and a kernel that fits the padded input.
/// Fills `params` and out's `sizes`. The 2-D prepare step runs it at load.
inline Status check_max_pool_call(Span<EValue*> args, size_t spatial, PoolParams* params,
                                  SizesType* sizes) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  TL_RETURN_IF_ERROR(spatial == 2 ? check_max_pool_fixed<2>(args) : check_max_pool_fixed<3>(args));
  TL_RETURN_IF_ERROR(read_max_pool_params(args, spatial, params));
  TL_RETURN_IF_ERROR(check_pool_input(self, spatial));
  return pool_output_sizes(self, *params, sizes);
}

/// The shaped eval, after check_max_pool_fixed.
template <size_t kSpatial, typename T>
void max_pool_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[6]->to_tensor(), "out"};
  const NamedTensor indices{args[7]->to_tensor(), "indices"};
  PoolParams params;
  SizesType sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_max_pool_params(args, kSpatial, &params));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_pool_input(self, kSpatial));
  TL_KERNEL_RETURN_IF_ERROR(ctx, pool_output_sizes(self, params, sizes));
  const Span<const SizesType> out_sizes(sizes, self.tensor.dim());
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, out_sizes));
  for (const NamedTensor* t : {&self, &out, &indices}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*t));
  }
  if (out.tensor.numel() == 0) return;
  max_pool<T>(self.tensor, params, out.tensor, indices.tensor);
}

template <size_t kSpatial>
KernelFunction pick_max_pool(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_real_type_no_bool(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    eval = &max_pool_shaped<kSpatial, typename decltype(tag)::type>;
  });
  return eval;
}

/// max_pool{2,3}d_with_indices.out's reference eval and prepare step.
template <size_t kSpatial>
void run_max_pool_with_indices(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<split_checks::kNoReturn, &check_max_pool_fixed<kSpatial>,
                                      &pick_max_pool<kSpatial>>(ctx, args);
}
template <size_t kSpatial>
Status prepare_max_pool_with_indices(Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_max_pool_fixed<kSpatial>, &pick_max_pool<kSpatial>>(
      args, call);
}

// ---- avg_pool{1,2,3}d.out: args = self, kernel_size, stride, padding,
// ceil_mode, count_include_pad, [divisor_override,] out, out. The 1-D
// operator has no divisor_override and takes exactly one value per list.
// Dtypes: float32, float64, int64, and float16/bfloat16 unless
// kReducedFloats is false (avg_pool3d's CPU kernel has none). ----

inline Status read_avg_pool_params(Span<EValue*> args, size_t spatial, PoolParams* params) {
  return read_pool_params(spatial, spatial == 1, *args[1], *args[2], *args[3], nullptr,
                          args[4]->to_bool(), params);
}

/// divisor_override: 0 when absent; errors for a given 0.
inline Status read_divisor(Span<EValue*> args, bool has_divisor, int64_t* divisor) {
  *divisor = has_divisor && !args[6]->is_none() ? args[6]->to_int() : 0;
  TL_CHECK_OR_RETURN(!has_divisor || args[6]->is_none() || *divisor != 0, Error::kInvalidArgument,
                     "argument 'divisor_override' is 0, expected a non-zero divisor or None");
  return Error::kOk;
}

/// What the program fixes: divisor_override, self's rank and dtype, the
/// lists, out's dtype.
template <size_t kSpatial, bool kHasDivisor, bool kReducedFloats>
Status check_avg_pool_fixed(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[kHasDivisor ? 7 : 6]->to_tensor(), "out"};
  int64_t divisor = 0;
  PoolParams params;
  TL_RETURN_IF_ERROR(read_divisor(args, kHasDivisor, &divisor));
  TL_RETURN_IF_ERROR(check_pool_input(self, kSpatial, /*rank_only=*/true));
  TL_RETURN_IF_ERROR(read_avg_pool_params(args, kSpatial, &params));
  const ScalarType dtype = self.tensor.scalar_type();
  const bool supported = dtype == ScalarType::kFloat || dtype == ScalarType::kDouble ||
                         dtype == ScalarType::kLong ||
                         (kReducedFloats &&
                          (dtype == ScalarType::kHalf || dtype == ScalarType::kBFloat16));
  TL_CHECK_OR_RETURN(supported, Error::kInvalidType,
                     "argument 'self' has dtype %s, which is not supported (supported: %sfloat32, "
                     "float64, int64)",
                     to_string(dtype), kReducedFloats ? "float16, bfloat16, " : "");
  return check_same_dtype(out, dtype, "self");
}

/// The checks of avg_pool2d.out that need no data: the fixed ones, then
/// self's sizes and a kernel that fits. Fills `params` and out's `sizes`;
/// the 2-D prepare step runs it at load.
inline Status check_avg_pool2d_call(Span<EValue*> args, PoolParams* params, SizesType* sizes) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  TL_RETURN_IF_ERROR((check_avg_pool_fixed<2, true, true>(args)));
  TL_RETURN_IF_ERROR(read_avg_pool_params(args, 2, params));
  TL_RETURN_IF_ERROR(check_pool_input(self, 2));
  return pool_output_sizes(self, *params, sizes);
}

/// The shaped eval, after check_avg_pool_fixed.
template <size_t kSpatial, bool kHasDivisor, typename T>
void avg_pool_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[kHasDivisor ? 7 : 6]->to_tensor(), "out"};
  set_return(args, kHasDivisor ? 8 : 7, *args[kHasDivisor ? 7 : 6]);
  int64_t divisor = 0;
  PoolParams params;
  SizesType sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_divisor(args, kHasDivisor, &divisor));
  TL_KERNEL_RETURN_IF_ERROR(ctx, read_avg_pool_params(args, kSpatial, &params));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_pool_input(self, kSpatial));
  TL_KERNEL_RETURN_IF_ERROR(ctx, pool_output_sizes(self, params, sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, {sizes, self.tensor.dim()}));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  if (out.tensor.numel() == 0) return;
  avg_pool<T>(self.tensor, params, args[5]->to_bool(), divisor, out.tensor);
}

template <size_t kSpatial, bool kHasDivisor>
KernelFunction pick_avg_pool(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_real_type_no_bool(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    eval = &avg_pool_shaped<kSpatial, kHasDivisor, typename decltype(tag)::type>;
  });
  return eval;
}

/// avg_pool{1,2,3}d.out's reference eval and prepare step.
template <size_t kSpatial, bool kHasDivisor, bool kReducedFloats>
void run_avg_pool(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<kHasDivisor ? 7 : 6,
                                      &check_avg_pool_fixed<kSpatial, kHasDivisor, kReducedFloats>,
                                      &pick_avg_pool<kSpatial, kHasDivisor>>(ctx, args);
}
template <size_t kSpatial, bool kHasDivisor, bool kReducedFloats>
Status prepare_avg_pool(Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_avg_pool_fixed<kSpatial, kHasDivisor, kReducedFloats>,
                                      &pick_avg_pool<kSpatial, kHasDivisor>>(args, call);
}

// ---- Adaptive pooling, average (args = self, output_size, out, out) or
// max (self, output_size, out, indices, (out, indices)); float types. ----

/// What the program fixes: self's rank and dtype, out's (and indices')
/// dtype, output_size's length.
template <size_t kSpatial, bool kWithIndices>
Status check_adaptive_pool_fixed(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_pool_input(self, kSpatial, /*rank_only=*/true));
  TL_RETURN_IF_ERROR(check_same_dtype(out, self.tensor.scalar_type(), "self"));
  if (kWithIndices) {
    const ScalarType indices_type = args[3]->to_tensor().scalar_type();
    TL_CHECK_OR_RETURN(indices_type == ScalarType::kLong, Error::kInvalidType,
                       "argument 'indices' has dtype %s, expected int64",
                       to_string(indices_type));
  }
  const size_t pooled = args[1]->to_int_list().size();
  TL_CHECK_OR_RETURN(pooled == kSpatial, Error::kInvalidArgument,
                     "argument 'output_size' has %zu values, expected %zu", pooled, kSpatial);
  const ScalarType dtype = self.tensor.scalar_type();
  if (!visit_float_type(dtype, [](auto) {})) {
    return unsupported_dtype("self", dtype, kFloatTypeNames);
  }
  return Error::kOk;
}

/// The checks of _adaptive_avg_pool2d.out that need no data: the fixed
/// ones, self's sizes, output_size's values. Fills out's `sizes`; the 2-D
/// prepare step runs it at load.
inline Status check_adaptive_avg_pool2d_call(Span<EValue*> args, SizesType* sizes) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  TL_RETURN_IF_ERROR((check_adaptive_pool_fixed<2, false>(args)));
  TL_RETURN_IF_ERROR(check_pool_input(self, 2));
  return adaptive_pool_output_sizes(self, *args[1], 2, sizes);
}

/// The shaped eval, after check_adaptive_pool_fixed.
template <size_t kSpatial, bool kWithIndices, typename T>
void adaptive_pool_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  if constexpr (!kWithIndices) set_return(args, 3, *args[2]);
  SizesType sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_pool_input(self, kSpatial));
  TL_KERNEL_RETURN_IF_ERROR(ctx, adaptive_pool_output_sizes(self, *args[1], kSpatial, sizes));
  const Span<const SizesType> out_sizes(sizes, self.tensor.dim());
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, out_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  if constexpr (kWithIndices) {
    const NamedTensor indices{args[3]->to_tensor(), "indices"};
    TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(indices, out_sizes));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(indices));
    if (out.tensor.numel() == 0) return;
    adaptive_max_pool<T>(self.tensor, kSpatial, out.tensor, indices.tensor);
  } else {
    if (out.tensor.numel() == 0) return;
    adaptive_avg_pool<T>(self.tensor, kSpatial, out.tensor);
  }
}

template <size_t kSpatial, bool kWithIndices>
KernelFunction pick_adaptive_pool(Span<EValue*> args) {
  KernelFunction eval = nullptr;
  visit_float_type(args[0]->to_tensor().scalar_type(), [&](auto tag) {
    eval = &adaptive_pool_shaped<kSpatial, kWithIndices, typename decltype(tag)::type>;
  });
  return eval;
}

/// Adaptive pooling's reference eval and prepare step.
template <size_t kSpatial, bool kWithIndices>
void run_adaptive_pool(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<kWithIndices ? split_checks::kNoReturn : 2,
                                      &check_adaptive_pool_fixed<kSpatial, kWithIndices>,
                                      &pick_adaptive_pool<kSpatial, kWithIndices>>(ctx, args);
}
template <size_t kSpatial, bool kWithIndices>
Status prepare_adaptive_pool(Span<EValue*> args, PreparedCall* call) {
  return split_checks::picked_prepare<&check_adaptive_pool_fixed<kSpatial, kWithIndices>,
                                      &pick_adaptive_pool<kSpatial, kWithIndices>>(args, call);
}

}  // namespace torchlight::portable
