// aten::upsample_bilinear2d.vec_out: bilinear resize of the spatial
// dimensions of [N, C, H, W] (nn.Upsample(mode="bilinear"), F.interpolate).
//
// Note: torch.export's default decomposition table turns upsampling into
// index arithmetic; this kernel serves programs that keep the core ATen
// operator (preserve_ops, or exporters that do not decompose it).
//
// ATen semantics: exactly one of output_size / scale_factors. Source
// coordinate of output index o, in opmath (float, or double for float64):
// align_corners: o * (in - 1) / (out - 1) (0 when out == 1); otherwise
// max((o + 0.5) * scale - 0.5, 0) with scale = 1 / factor (when given) or
// in / out. The result mixes the two neighbours of each dimension with
// weights (1 - frac, frac), the upper index clamped to the input. Dtypes:
// uint8, float16, bfloat16, float32, float64. uint8 is computed in double
// and rounded to nearest (halves up); ATen uses fixed-point weights for it,
// so uint8 results may differ from ATen's by 1 (the conformance reference is
// torch's float64 result rounded the same way). The lists' kinds and
// lengths and the dtypes are checked at load; the installed eval (one per
// dtype) reads the sizes and scales of a run.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/spatial.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/upsample.h"

namespace torchlight::portable {

namespace {

// The two source indices and their weights for one output index.
template <typename Acc>
struct LinearTap {
  int64_t i0;
  int64_t i1;
  Acc w0;
  Acc w1;
};

template <typename Acc>
LinearTap<Acc> linear_tap(int64_t o, int64_t in_size, Acc scale, bool align_corners) {
  Acc src;
  if (align_corners) {
    src = scale * static_cast<Acc>(o);
  } else {
    src = scale * (static_cast<Acc>(o) + static_cast<Acc>(0.5)) - static_cast<Acc>(0.5);
    if (src < 0) src = 0;
  }
  const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in_size - 1);
  const Acc frac = std::min(std::max(src - static_cast<Acc>(i0), Acc(0)), Acc(1));
  return {i0, i0 + (i0 < in_size - 1 ? 1 : 0), Acc(1) - frac, frac};
}

template <typename Acc>
Acc area_scale(const Upsample2dParams& p, size_t d, int64_t in_size, int64_t out_size,
               bool align_corners) {
  if (align_corners) {
    return out_size > 1 ? static_cast<Acc>(in_size - 1) / static_cast<Acc>(out_size - 1) : Acc(0);
  }
  return upsample_scale<Acc>(p, d, in_size, out_size);
}

template <typename T>
void upsample_bilinear(const Tensor& input, const Upsample2dParams& p, bool align_corners,
                       const Tensor& out) {
  // uint8 in double, so that rounding to nearest is well defined (see top).
  using Acc = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<T, uint8_t>, double,
                                 float>;
  const SpatialView iv = make_spatial_view(input, 2);
  const SpatialView ov = make_spatial_view(out, 2);
  const Acc scale_h = area_scale<Acc>(p, 0, iv.size[1], ov.size[1], align_corners);
  const Acc scale_w = area_scale<Acc>(p, 1, iv.size[2], ov.size[2], align_corners);
  const T* in = input.const_data_ptr<T>();
  T* out_data = out.mutable_data_ptr<T>();
  for (int64_t n = 0; n < ov.batch; ++n) {
    for (int64_t c = 0; c < ov.channels; ++c) {
      const T* plane = in + iv.plane_offset(n, c);
      T* out_plane = out_data + ov.plane_offset(n, c);
      for (int64_t oh = 0; oh < ov.size[1]; ++oh) {
        const LinearTap<Acc> h = linear_tap(oh, iv.size[1], scale_h, align_corners);
        const T* row0 = plane + h.i0 * iv.stride[1];
        const T* row1 = plane + h.i1 * iv.stride[1];
        for (int64_t ow = 0; ow < ov.size[2]; ++ow) {
          const LinearTap<Acc> w = linear_tap(ow, iv.size[2], scale_w, align_corners);
          const int64_t c0 = w.i0 * iv.stride[2];
          const int64_t c1 = w.i1 * iv.stride[2];
          const Acc top = w.w0 * convert<Acc>(row0[c0]) + w.w1 * convert<Acc>(row0[c1]);
          const Acc bottom = w.w0 * convert<Acc>(row1[c0]) + w.w1 * convert<Acc>(row1[c1]);
          const Acc value = h.w0 * top + h.w1 * bottom;
          T& result = out_plane[oh * ov.stride[1] + ow * ov.stride[2]];
          if constexpr (std::is_same_v<T, uint8_t>) {
            result = static_cast<uint8_t>(std::min(std::max(std::floor(value + Acc(0.5)), Acc(0)),
                                                   Acc(255)));
          } else {
            result = convert<T>(value);
          }
        }
      }
    }
  }
}

// args = input, output_size, align_corners, scale_factors, out, out.
Status check_bilinear_fixed(Span<EValue*> args) {
  return check_upsample2d_fixed(args, *args[1], *args[3], *args[4]);
}

// The shaped eval for one dtype, after check_bilinear_fixed.
template <typename T>
struct BilinearShaped {
  static void eval(KernelContext& ctx, Span<EValue*> args) {
    set_return(args, 5, *args[4]);
    const NamedTensor input{args[0]->to_tensor(), "input"};
    const NamedTensor out{args[4]->to_tensor(), "out"};
    Upsample2dParams params;
    SizesType sizes[4];
    TL_KERNEL_RETURN_IF_ERROR(ctx,
                              read_upsample2d_args(input, *args[1], *args[3], &params, sizes));
    TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, sizes));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(input));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
    if (out.tensor.numel() == 0) return;
    upsample_bilinear<T>(input.tensor, params, args[2]->to_bool(), out.tensor);
  }
};

}  // namespace

void upsample_bilinear2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<4, &check_bilinear_fixed, &pick_upsample2d<BilinearShaped>>(
      ctx, args);
}

Status upsample_bilinear2d_vec_out_prepare(PrepareContext&, Span<EValue*> args,
                                           PreparedCall* call) {
  return split_checks::picked_prepare<&check_bilinear_fixed, &pick_upsample2d<BilinearShaped>>(
      args, call);
}

}  // namespace torchlight::portable
