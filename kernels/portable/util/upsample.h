// Shared pieces of the 2-D upsampling kernels (upsample_nearest2d.vec_out,
// upsample_bilinear2d.vec_out): reading output_size / scale_factors as the
// .vec overloads do, and ATen's source-index scales. Header-only.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/kernel/kernel.h"
#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Output size and scale of each spatial dimension (H, W).
struct Upsample2dParams {
  int64_t out_size[2] = {0, 0};
  bool has_scale[2] = {false, false};  // scale_factors given (not output_size).
  double scale[2] = {0, 0};            // The scale factor, when given.
};

/// Checks `input` ([N, C, H, W], only N may be 0) and reads exactly one of
/// output_size (2 ints) or scale_factors (2 floats; the output is
/// floor(size * scale)), into *p, with out's sizes into `out_sizes` (4).
/// Errors: kInvalidArgument naming 'input', 'output_size' or
/// 'scale_factors', e.g. for both or neither given, a wrong count, or an
/// output size below 1. `fixed_only`: only what a program fixes (input's
/// rank, which list is given, its length), as the prepare step checks.
inline Status read_upsample2d_args(const NamedTensor& input, const EValue& output_size,
                                   const EValue& scale_factors, Upsample2dParams* p,
                                   SizesType* out_sizes, bool fixed_only = false) {
  const Tensor& t = input.tensor;
  char shape[128];
  TL_CHECK_OR_RETURN(t.dim() == 4 && (fixed_only || (t.size(1) > 0 && t.size(2) > 0 &&
                                                     t.size(3) > 0)),
                     Error::kInvalidArgument,
                     "argument '%s' has shape %s, expected 4-D [N, C, H, W] with non-zero C, H "
                     "and W",
                     input.name, format_sizes(t.sizes(), shape, sizeof(shape)));
  TL_CHECK_OR_RETURN(output_size.is_none() != scale_factors.is_none(), Error::kInvalidArgument,
                     "exactly one of arguments 'output_size' and 'scale_factors' must be given, "
                     "got %s",
                     output_size.is_none() ? "neither" : "both");
  if (!output_size.is_none()) {
    const Span<const int64_t> sizes = output_size.to_int_list();
    TL_CHECK_OR_RETURN(sizes.size() == 2, Error::kInvalidArgument,
                       "argument 'output_size' has %zu values, expected 2 (H, W)", sizes.size());
    if (fixed_only) return Error::kOk;
    for (size_t d = 0; d < 2; ++d) p->out_size[d] = sizes[d];
  } else {
    const Span<const double> scales = scale_factors.to_double_list();
    TL_CHECK_OR_RETURN(scales.size() == 2, Error::kInvalidArgument,
                       "argument 'scale_factors' has %zu values, expected 2 (H, W)",
                       scales.size());
    if (fixed_only) return Error::kOk;
    for (size_t d = 0; d < 2; ++d) {
      const double size = static_cast<double>(t.size(2 + d)) * scales[d];
      // NaN and out-of-range products fail the range check below.
      p->out_size[d] = size >= 0 && size < 2147483648.0 ? static_cast<int64_t>(size) : -1;
      p->has_scale[d] = true;
      p->scale[d] = scales[d];
    }
  }
  for (size_t d = 0; d < 2; ++d) {
    TL_CHECK_OR_RETURN(p->out_size[d] > 0 && p->out_size[d] <= 2147483647, Error::kInvalidArgument,
                       "argument '%s' gives output size %lld at spatial dimension %zu for input "
                       "of shape %s, expected 1 to 2147483647",
                       p->has_scale[d] ? "scale_factors" : "output_size",
                       static_cast<long long>(p->out_size[d]), d,
                       format_sizes(t.sizes(), shape, sizeof(shape)));
  }
  out_sizes[0] = t.size(0);
  out_sizes[1] = t.size(1);
  out_sizes[2] = static_cast<SizesType>(p->out_size[0]);
  out_sizes[3] = static_cast<SizesType>(p->out_size[1]);
  return Error::kOk;
}

/// What the program fixes in an upsample_*2d.vec_out call: input's rank
/// and dtype (uint8 or floating), the size lists, out's dtype.
inline Status check_upsample2d_fixed(Span<EValue*> args, const EValue& output_size,
                                     const EValue& scale_factors, const EValue& out_arg) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor out{out_arg.to_tensor(), "out"};
  Upsample2dParams params;
  TL_RETURN_IF_ERROR(
      read_upsample2d_args(input, output_size, scale_factors, &params, nullptr, true));
  const ScalarType dtype = input.tensor.scalar_type();
  TL_CHECK_OR_RETURN(is_floating_point(dtype) || dtype == ScalarType::kByte, Error::kInvalidType,
                     "argument 'input' has dtype %s, which is not supported (supported: uint8, "
                     "float16, bfloat16, float32, float64)",
                     to_string(dtype));
  return check_same_dtype(out, dtype, "input");
}

/// The upsampling eval for `input`'s dtype (uint8 or floating), or null.
template <template <typename> class Shaped>
KernelFunction pick_upsample2d(Span<EValue*> args) {
  const ScalarType dtype = args[0]->to_tensor().scalar_type();
  KernelFunction eval = nullptr;
  if (dtype == ScalarType::kByte || is_floating_point(dtype)) {
    visit_real_type_no_bool(dtype, [&](auto tag) {
      eval = &Shaped<typename decltype(tag)::type>::eval;
    });
  }
  return eval;
}

/// ATen's compute_scales_value: input size per output size, from the scale
/// factor (1 / scale) when one was given and is positive, else in / out.
template <typename T>
T upsample_scale(const Upsample2dParams& p, size_t d, int64_t in_size, int64_t out_size) {
  if (p.has_scale[d] && p.scale[d] > 0) return static_cast<T>(1.0 / p.scale[d]);
  return static_cast<T>(in_size) / static_cast<T>(out_size);
}

}  // namespace torchlight::portable
