// aten::upsample_nearest2d.vec_out: nearest-neighbour resize of the spatial
// dimensions of [N, C, H, W] (nn.Upsample(mode="nearest"), F.interpolate).
//
// Note: torch.export's default decomposition table turns upsampling into
// index arithmetic (arange, mul, _to_copy, index.Tensor); this kernel serves
// programs that keep the core ATen operator (preserve_ops, or exporters
// that do not decompose it).
//
// ATen semantics: exactly one of output_size / scale_factors; the source of
// output index o is min(floor(o * scale), in - 1) with scale = 1 / factor
// (when a factor was given) or in / out, in float32; sizes equal or doubled
// map directly. Dtypes: uint8, float16, bfloat16, float32, float64. Values
// are copied, so results are exact. The lists' kinds and lengths and the
// dtypes are checked at load; the installed eval (one per dtype) reads the
// sizes and scales of a run.
#include <algorithm>
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/spatial.h"
#include "kernels/portable/util/split_checks.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/upsample.h"

namespace torchlight::portable {

namespace {

// ATen's nearest_idx.
int64_t nearest_source(int64_t o, int64_t in_size, int64_t out_size, float scale) {
  if (out_size == in_size) return o;
  if (out_size == 2 * in_size) return o >> 1;
  return std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * scale)), in_size - 1);
}

template <typename T>
void upsample_nearest(const Tensor& input, const Upsample2dParams& p, const Tensor& out) {
  const SpatialView iv = make_spatial_view(input, 2);
  const SpatialView ov = make_spatial_view(out, 2);
  const float scale_h = upsample_scale<float>(p, 0, iv.size[1], ov.size[1]);
  const float scale_w = upsample_scale<float>(p, 1, iv.size[2], ov.size[2]);
  const T* in = input.const_data_ptr<T>();
  T* out_data = out.mutable_data_ptr<T>();
  for (int64_t n = 0; n < ov.batch; ++n) {
    for (int64_t c = 0; c < ov.channels; ++c) {
      const T* plane = in + iv.plane_offset(n, c);
      T* out_plane = out_data + ov.plane_offset(n, c);
      for (int64_t oh = 0; oh < ov.size[1]; ++oh) {
        const int64_t ih = nearest_source(oh, iv.size[1], ov.size[1], scale_h);
        for (int64_t ow = 0; ow < ov.size[2]; ++ow) {
          const int64_t iw = nearest_source(ow, iv.size[2], ov.size[2], scale_w);
          out_plane[oh * ov.stride[1] + ow * ov.stride[2]] =
              plane[ih * iv.stride[1] + iw * iv.stride[2]];
        }
      }
    }
  }
}

// args = input, output_size, scale_factors, out, out.
Status check_nearest_fixed(Span<EValue*> args) {
  return check_upsample2d_fixed(args, *args[1], *args[2], *args[3]);
}

// The shaped eval for one dtype, after check_nearest_fixed.
template <typename T>
struct NearestShaped {
  static void eval(KernelContext& ctx, Span<EValue*> args) {
    set_return(args, 4, *args[3]);
    const NamedTensor input{args[0]->to_tensor(), "input"};
    const NamedTensor out{args[3]->to_tensor(), "out"};
    Upsample2dParams params;
    SizesType sizes[4];
    TL_KERNEL_RETURN_IF_ERROR(ctx,
                              read_upsample2d_args(input, *args[1], *args[2], &params, sizes));
    TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, sizes));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(input));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
    if (out.tensor.numel() == 0) return;
    upsample_nearest<T>(input.tensor, params, out.tensor);
  }
};

}  // namespace

void upsample_nearest2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  split_checks::picked_reference_eval<3, &check_nearest_fixed, &pick_upsample2d<NearestShaped>>(
      ctx, args);
}

Status upsample_nearest2d_vec_out_prepare(PrepareContext&, Span<EValue*> args,
                                          PreparedCall* call) {
  return split_checks::picked_prepare<&check_nearest_fixed, &pick_upsample2d<NearestShaped>>(args,
                                                                                             call);
}

}  // namespace torchlight::portable
