// aten::convolution.out: 1-D, 2-D and 3-D convolution and transposed
// convolution, with stride, padding, dilation, groups (depthwise included),
// output_padding (transposed) and an optional bias.
//
// ATen semantics: input [N, C_in, *spatial] (batched only, as
// aten::convolution requires); weight [C_out, C_in / groups, *kernel], or
// [C_in, C_out / groups, *kernel] when transposed; bias [C_out]. Output size
// per spatial dimension:
//   (in + 2 * pad - dilation * (k - 1) - 1) / stride + 1        (direct)
//   (in - 1) * stride - 2 * pad + dilation * (k - 1) + output_padding + 1
//                                                               (transposed)
// input, weight, bias and out share one dtype: float16, bfloat16, float32,
// float64 and int64, plus the other integer types for a non-transposed,
// non-dilated convolution (as ATen's CPU kernels). Accumulation is
// in opmath (float for float16/bfloat16, wrapping for integers), so float
// results differ from ATen's only in summation order.
//
// Any layout works (channels-last input, weight or out): every access goes
// through the tensors' strides. The loops build one output row at a time in
// a block of accumulators, adding weight * input-row for each (in-channel,
// kernel offset), so the innermost loop walks an input row and the block;
// the direct convolution does so for up to 16 output channels at once,
// multiplying each input element loaded by that many weights.
#include <algorithm>
#include <cstdint>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/depthwise_conv.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/spatial.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Output elements built per block of accumulators (on the stack).
constexpr int64_t kBlock = 64;

// Geometry of one convolution, every list expanded to 3 spatial dimensions
// (D, H, W); missing leading dimensions have kernel 1, stride 1, no padding.
struct ConvParams {
  size_t spatial = 0;  // Spatial dimensions of the tensors: 1, 2 or 3.
  bool transposed = false;
  int64_t groups = 1;
  int64_t stride[kMaxSpatialDims] = {1, 1, 1};
  int64_t padding[kMaxSpatialDims] = {0, 0, 0};
  int64_t dilation[kMaxSpatialDims] = {1, 1, 1};
  int64_t output_padding[kMaxSpatialDims] = {0, 0, 0};
};

// Reads one int-list argument into the last `p.spatial` entries of `dst`.
Status read_list(const EValue& value, const char* name, size_t spatial, int64_t min_value,
                 int64_t* dst) {
  int64_t values[kMaxSpatialDims];
  const int64_t zeros[kMaxSpatialDims] = {0, 0, 0};
  // output_padding may be empty (ATen reads it as zeros); the others need 1 or n values.
  const bool empty_ok = name[0] == 'o';
  TL_RETURN_IF_ERROR(
      expand_int_list(value.to_int_list(), spatial, name, empty_ok ? zeros : nullptr, values));
  for (size_t d = 0; d < spatial; ++d) {
    TL_CHECK_OR_RETURN(values[d] >= min_value, Error::kInvalidArgument,
                       "argument '%s' has %lld at spatial dimension %zu, expected at least %lld",
                       name, static_cast<long long>(values[d]), d,
                       static_cast<long long>(min_value));
    dst[kMaxSpatialDims - spatial + d] = values[d];
  }
  return Error::kOk;
}

// The call's tensor arguments, named for messages.
struct NamedConvArgs {
  NamedTensor input, weight, bias, out;
};

NamedConvArgs named_conv_args(Span<EValue*> args) {
  return {{args[0]->to_tensor(), "input"},
          {args[1]->to_tensor(), "weight"},
          {args[2]->to_optional_tensor(), "bias"},
          {args[9]->to_tensor(), "out"}};
}

// Checks the arguments and computes out's sizes (no data needed: also the
// prepare step's checks, at load).
Status check_conv(const NamedTensor& input, const NamedTensor& weight, const NamedTensor& bias,
               Span<EValue*> args, const NamedTensor& out, ConvParams* p, SizesType* out_sizes) {
  const Tensor& in = input.tensor;
  const Tensor& w = weight.tensor;
  char in_shape[128];
  char w_shape[128];
  format_sizes(in.sizes(), in_shape, sizeof(in_shape));
  format_sizes(w.sizes(), w_shape, sizeof(w_shape));
  TL_CHECK_OR_RETURN(in.dim() >= 3 && in.dim() <= 5, Error::kInvalidArgument,
                     "argument 'input' must be 3-D, 4-D or 5-D ([N, C, *spatial]), got shape %s",
                     in_shape);
  TL_CHECK_OR_RETURN(w.dim() == in.dim(), Error::kInvalidArgument,
                     "argument 'weight' of shape %s must have the rank of argument 'input' of "
                     "shape %s (%zu-D)",
                     w_shape, in_shape, in.dim());
  const ScalarType dtype = in.scalar_type();
  TL_RETURN_IF_ERROR(check_same_dtype(weight, dtype, "input"));
  if (bias.tensor.defined()) TL_RETURN_IF_ERROR(check_same_dtype(bias, dtype, "input"));
  TL_RETURN_IF_ERROR(check_same_dtype(out, dtype, "input"));

  p->spatial = in.dim() - 2;
  p->transposed = args[6]->to_bool();
  p->groups = args[8]->to_int();
  TL_CHECK_OR_RETURN(p->groups > 0, Error::kInvalidArgument,
                     "argument 'groups' is %lld, expected a positive number",
                     static_cast<long long>(p->groups));
  TL_RETURN_IF_ERROR(read_list(*args[3], "stride", p->spatial, 1, p->stride));
  TL_RETURN_IF_ERROR(read_list(*args[4], "padding", p->spatial, 0, p->padding));
  TL_RETURN_IF_ERROR(read_list(*args[5], "dilation", p->spatial, 1, p->dilation));
  if (p->transposed) {
    TL_RETURN_IF_ERROR(read_list(*args[7], "output_padding", p->spatial, 0, p->output_padding));
  }

  const int64_t groups = p->groups;
  const int64_t in_channels = in.size(1);
  int64_t out_channels;
  if (!p->transposed) {
    TL_CHECK_OR_RETURN(w.size(0) >= groups && w.size(0) % groups == 0, Error::kInvalidArgument,
                       "argument 'weight' of shape %s must have a multiple of groups = %lld "
                       "output channels (dimension 0)",
                       w_shape, static_cast<long long>(groups));
    TL_CHECK_OR_RETURN(in_channels == w.size(1) * groups, Error::kInvalidArgument,
                       "argument 'input' of shape %s has %lld channels, but argument 'weight' of "
                       "shape %s with groups = %lld expects %lld",
                       in_shape, static_cast<long long>(in_channels), w_shape,
                       static_cast<long long>(groups),
                       static_cast<long long>(w.size(1) * groups));
    out_channels = w.size(0);
  } else {
    TL_CHECK_OR_RETURN(in_channels == w.size(0), Error::kInvalidArgument,
                       "argument 'input' of shape %s has %lld channels, but argument 'weight' of "
                       "shape %s (transposed) expects %d",
                       in_shape, static_cast<long long>(in_channels), w_shape, w.size(0));
    TL_CHECK_OR_RETURN(w.size(0) % groups == 0, Error::kInvalidArgument,
                       "argument 'weight' of shape %s (transposed) must have a multiple of "
                       "groups = %lld input channels (dimension 0)",
                       w_shape, static_cast<long long>(groups));
    out_channels = w.size(1) * groups;
  }
  if (bias.tensor.defined()) {
    char b_shape[128];
    TL_CHECK_OR_RETURN(bias.tensor.dim() == 1 && bias.tensor.size(0) == out_channels,
                       Error::kInvalidArgument,
                       "argument 'bias' has shape %s, expected [%lld] (the output channels)",
                       format_sizes(bias.tensor.sizes(), b_shape, sizeof(b_shape)),
                       static_cast<long long>(out_channels));
  }

  int64_t sizes[2 + kMaxSpatialDims] = {in.size(0), out_channels};
  for (size_t d = 0; d < p->spatial; ++d) {
    const size_t k = kMaxSpatialDims - p->spatial + d;  // Index in the 3-D params.
    const int64_t in_size = in.size(2 + d);
    const int64_t kernel = w.size(2 + d);
    const int64_t extent = p->dilation[k] * (kernel - 1) + 1;  // Dilated kernel.
    int64_t size;
    if (!p->transposed) {
      const int64_t padded = in_size + 2 * p->padding[k];
      TL_CHECK_OR_RETURN(
          extent <= padded, Error::kInvalidArgument,
          "argument 'weight' of shape %s has a (dilated) kernel of %lld at spatial dimension %zu, "
          "larger than the padded size %lld of argument 'input' of shape %s",
          w_shape, static_cast<long long>(extent), d, static_cast<long long>(padded), in_shape);
      size = (padded - extent) / p->stride[k] + 1;
    } else {
      TL_CHECK_OR_RETURN(
          p->output_padding[k] < p->stride[k] || p->output_padding[k] < p->dilation[k],
          Error::kInvalidArgument,
          "argument 'output_padding' has %lld at spatial dimension %zu, expected less than "
          "the stride (%lld) or the dilation (%lld)",
          static_cast<long long>(p->output_padding[k]), d, static_cast<long long>(p->stride[k]),
          static_cast<long long>(p->dilation[k]));
      size = (in_size - 1) * p->stride[k] - 2 * p->padding[k] + extent + p->output_padding[k];
      TL_CHECK_OR_RETURN(size > 0, Error::kInvalidArgument,
                         "argument 'padding' leaves an output size of %lld at spatial dimension "
                         "%zu for argument 'input' of shape %s",
                         static_cast<long long>(size), d, in_shape);
    }
    sizes[2 + d] = size;
  }
  TL_RETURN_IF_ERROR(to_sizes({sizes, in.dim()}, "the output", out_sizes));
  // ATen's CPU kernels for integers other than int64 (slow_conv2d/3d) have
  // no dilated or transposed variant; mirror that instead of accepting more.
  bool dilated = false;
  for (int64_t d : p->dilation) dilated = dilated || d != 1;
  TL_CHECK_OR_RETURN(!is_integral(dtype) || dtype == ScalarType::kLong ||
                         (!p->transposed && !dilated),
                     Error::kInvalidType,
                     "argument 'input' has dtype %s, which is only supported by a non-transposed, "
                     "non-dilated convolution (every convolution supports float16, bfloat16, "
                     "float32, float64 and int64)",
                     to_string(dtype));
  return Error::kOk;
}

// check_conv, then out resized and every tensor's data present.
Status prepare(const NamedTensor& input, const NamedTensor& weight, const NamedTensor& bias,
               Span<EValue*> args, const NamedTensor& out, ConvParams* p, SizesType* out_sizes) {
  TL_RETURN_IF_ERROR(check_conv(input, weight, bias, args, out, p, out_sizes));
  TL_RETURN_IF_ERROR(resize_tensor(out, {out_sizes, input.tensor.dim()}));
  TL_RETURN_IF_ERROR(check_has_data(input));
  TL_RETURN_IF_ERROR(check_has_data(weight));
  if (bias.tensor.defined()) TL_RETURN_IF_ERROR(check_has_data(bias));
  return check_has_data(out);
}

// Pointers and views shared by the two loop nests.
template <typename T>
struct ConvTensors {
  SpatialView in;
  SpatialView weight;  // "batch" = weight dim 0, "channels" = weight dim 1.
  SpatialView out;
  const T* in_data;
  const T* weight_data;
  const T* bias_data;  // Null without bias.
  int64_t bias_stride;
  T* out_data;
};

// One tile of the direct convolution: output channels [oc0, oc0 + CB) of
// one group, output row (n, od, oh), columns [ow0, ow1) (at most kBlock):
//   out[n][oc][od][oh][ow] = bias[oc] + sum over (icg, kd, kh, kw) of
//     weight[oc][icg][kd][kh][kw] * input[n][ic][id][ih][iw],
//   ic = g * in_per_group + icg, id = od * stride - pad + kd * dilation, ...
// The accumulators are acc[ow - ow0][c] with the channel innermost, so each
// input element loaded is multiplied by CB weights held in registers.
template <typename T, int64_t CB>
void direct_tile(const ConvTensors<T>& t, const ConvParams& p, int64_t n, int64_t ic0,
                 int64_t in_per_group, int64_t oc0, int64_t od, int64_t oh, int64_t ow0,
                 int64_t ow1) {
  using Acc = opmath_t<T>;
  const SpatialView& iv = t.in;
  const SpatialView& wv = t.weight;
  const SpatialView& ov = t.out;
  const int64_t* s = p.stride;
  const int64_t* pad = p.padding;
  const int64_t* dil = p.dilation;
  Acc acc[kBlock][CB] = {};
  for (int64_t icg = 0; icg < in_per_group; ++icg) {
    const T* in_plane = t.in_data + iv.plane_offset(n, ic0 + icg);
    for (int64_t kd = 0; kd < wv.size[0]; ++kd) {
      const int64_t id = od * s[0] - pad[0] + kd * dil[0];
      if (id < 0 || id >= iv.size[0]) continue;
      for (int64_t kh = 0; kh < wv.size[1]; ++kh) {
        const int64_t ih = oh * s[1] - pad[1] + kh * dil[1];
        if (ih < 0 || ih >= iv.size[1]) continue;
        const T* in_row = in_plane + id * iv.stride[0] + ih * iv.stride[1];
        const T* w_row = t.weight_data + wv.plane_offset(oc0, icg) + kd * wv.stride[0] +
                         kh * wv.stride[1];
        for (int64_t kw = 0; kw < wv.size[2]; ++kw) {
          // iw = ow * stride + shift must lie in [0, in_w).
          const int64_t shift = kw * dil[2] - pad[2];
          const int64_t lo = std::max(ow0, ceil_div(-shift, s[2]));
          const int64_t hi = std::min(ow1, floor_div(iv.size[2] - 1 - shift, s[2]) + 1);
          if (lo >= hi) continue;
          Acc w[CB];
          for (int64_t c = 0; c < CB; ++c) {
            w[c] = convert<Acc>(w_row[c * wv.batch_stride + kw * wv.stride[2]]);
          }
          const T* src = in_row + (lo * s[2] + shift) * iv.stride[2];
          const int64_t step = s[2] * iv.stride[2];
          for (int64_t j = 0; j < hi - lo; ++j) {
            const Acc x = convert<Acc>(src[j * step]);
            Acc* a = acc[lo - ow0 + j];
            for (int64_t c = 0; c < CB; ++c) a[c] = opmath_add(a[c], opmath_mul(w[c], x));
          }
        }
      }
    }
  }
  for (int64_t c = 0; c < CB; ++c) {
    const int64_t oc = oc0 + c;
    const Acc bias =
        t.bias_data != nullptr ? convert<Acc>(t.bias_data[oc * t.bias_stride]) : Acc(0);
    T* out_row = t.out_data + ov.plane_offset(n, oc) + od * ov.stride[0] + oh * ov.stride[1];
    for (int64_t ow = ow0; ow < ow1; ++ow) {
      out_row[ow * ov.stride[2]] = convert<T>(opmath_add(acc[ow - ow0][c], bias));
    }
  }
}

// Direct convolution: tiles of 16 output channels while a group has that
// many left, then 4, then 1 (depthwise convolutions have 1 per group).
template <typename T>
void convolve_direct(const ConvTensors<T>& t, const ConvParams& p) {
  const SpatialView& ov = t.out;
  const int64_t in_per_group = t.in.channels / p.groups;
  const int64_t out_per_group = ov.channels / p.groups;
  for (int64_t n = 0; n < ov.batch; ++n) {
    for (int64_t g = 0; g < p.groups; ++g) {
      const int64_t group_end = (g + 1) * out_per_group;
      int64_t oc0 = g * out_per_group;
      while (oc0 < group_end) {
        const int64_t left = group_end - oc0;
        const int64_t width = left >= 16 ? 16 : (left >= 4 ? 4 : 1);
        for (int64_t od = 0; od < ov.size[0]; ++od) {
          for (int64_t oh = 0; oh < ov.size[1]; ++oh) {
            for (int64_t ow0 = 0; ow0 < ov.size[2]; ow0 += kBlock) {
              const int64_t ow1 = std::min(ov.size[2], ow0 + kBlock);
              const int64_t ic0 = g * in_per_group;
              if (width == 16) {
                direct_tile<T, 16>(t, p, n, ic0, in_per_group, oc0, od, oh, ow0, ow1);
              } else if (width == 4) {
                direct_tile<T, 4>(t, p, n, ic0, in_per_group, oc0, od, oh, ow0, ow1);
              } else {
                direct_tile<T, 1>(t, p, n, ic0, in_per_group, oc0, od, oh, ow0, ow1);
              }
            }
          }
        }
        oc0 += width;
      }
    }
  }
}

// Transposed convolution, as the gather of its scatter definition:
// out[n][g * out_per_group + ocg][o] = bias + sum over (icg, k, i) with
// o == i * stride - pad + k * dilation of weight[ic][ocg][k] * input[n][ic][i].
template <typename T>
void convolve_transposed(const ConvTensors<T>& t, const ConvParams& p) {
  using Acc = opmath_t<T>;
  const SpatialView& iv = t.in;
  const SpatialView& wv = t.weight;
  const SpatialView& ov = t.out;
  const int64_t in_per_group = iv.channels / p.groups;
  const int64_t out_per_group = ov.channels / p.groups;
  const int64_t* s = p.stride;
  const int64_t* pad = p.padding;
  const int64_t* dil = p.dilation;
  const int64_t out_w = ov.size[2];
  const int64_t in_w = iv.size[2];

  for (int64_t n = 0; n < ov.batch; ++n) {
    for (int64_t oc = 0; oc < ov.channels; ++oc) {
      const int64_t g = oc / out_per_group;
      const int64_t ocg = oc % out_per_group;
      const Acc bias =
          t.bias_data != nullptr ? convert<Acc>(t.bias_data[oc * t.bias_stride]) : Acc(0);
      for (int64_t od = 0; od < ov.size[0]; ++od) {
        for (int64_t oh = 0; oh < ov.size[1]; ++oh) {
          for (int64_t ow0 = 0; ow0 < out_w; ow0 += kBlock) {
            const int64_t ow1 = std::min(out_w, ow0 + kBlock);
            Acc acc[kBlock] = {};
            for (int64_t icg = 0; icg < in_per_group; ++icg) {
              const int64_t ic = g * in_per_group + icg;
              const T* in_plane = t.in_data + iv.plane_offset(n, ic);
              const T* w_plane = t.weight_data + wv.plane_offset(ic, ocg);
              for (int64_t kd = 0; kd < wv.size[0]; ++kd) {
                const int64_t num_d = od + pad[0] - kd * dil[0];
                if (num_d < 0 || num_d % s[0] != 0 || num_d / s[0] >= iv.size[0]) continue;
                for (int64_t kh = 0; kh < wv.size[1]; ++kh) {
                  const int64_t num_h = oh + pad[1] - kh * dil[1];
                  if (num_h < 0 || num_h % s[1] != 0 || num_h / s[1] >= iv.size[1]) continue;
                  const T* in_row =
                      in_plane + (num_d / s[0]) * iv.stride[0] + (num_h / s[1]) * iv.stride[1];
                  const T* w_row = w_plane + kd * wv.stride[0] + kh * wv.stride[1];
                  for (int64_t kw = 0; kw < wv.size[2]; ++kw) {
                    const Acc w = convert<Acc>(w_row[kw * wv.stride[2]]);
                    // ow = iw * stride + shift must lie in [ow0, ow1).
                    const int64_t shift = kw * dil[2] - pad[2];
                    const int64_t lo = std::max<int64_t>(0, ceil_div(ow0 - shift, s[2]));
                    const int64_t hi = std::min(in_w, floor_div(ow1 - 1 - shift, s[2]) + 1);
                    for (int64_t iw = lo; iw < hi; ++iw) {
                      Acc& a = acc[iw * s[2] + shift - ow0];
                      a = opmath_add(a, opmath_mul(w, convert<Acc>(in_row[iw * iv.stride[2]])));
                    }
                  }
                }
              }
            }
            T* out_row =
                t.out_data + ov.plane_offset(n, oc) + od * ov.stride[0] + oh * ov.stride[1];
            for (int64_t ow = ow0; ow < ow1; ++ow) {
              out_row[ow * ov.stride[2]] = convert<T>(opmath_add(acc[ow - ow0], bias));
            }
          }
        }
      }
    }
  }
}

template <typename T>
void convolve(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvParams& p,
              const Tensor& out) {
  const ConvTensors<T> t{make_spatial_view(input, p.spatial),
                         make_spatial_view(weight, p.spatial),
                         make_spatial_view(out, p.spatial),
                         input.const_data_ptr<T>(),
                         weight.const_data_ptr<T>(),
                         bias.defined() ? bias.const_data_ptr<T>() : nullptr,
                         bias.defined() ? bias.strides()[0] : 0,
                         out.mutable_data_ptr<T>()};
  if (p.transposed) {
    convolve_transposed(t, p);
  } else {
    convolve_direct(t, p);
  }
}

}  // namespace

void convolution_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 10, *args[9]);
  const NamedConvArgs t = named_conv_args(args);
  ConvParams params;
  SizesType out_sizes[2 + kMaxSpatialDims];
  TL_KERNEL_RETURN_IF_ERROR(ctx,
                            prepare(t.input, t.weight, t.bias, args, t.out, &params, out_sizes));
  const ScalarType dtype = t.input.tensor.scalar_type();
  if (t.out.tensor.numel() == 0) return;
  TL_SWITCH_REAL_TYPES_NO_BOOL(dtype, ctx, "input", CTYPE, [&] {
    convolve<CTYPE>(t.input.tensor, t.weight.tensor, t.bias.tensor, params, t.out.tensor);
  });
}

// The reference's checks at load. A depthwise 2-D floating convolution
// (float32, float64, float16, bfloat16; groups == input channels, output
// channels a multiple of them, not transposed) with input and out both
// contiguous or both channels-last gets the stencil loops of
// util/depthwise_conv.h; everything else keeps the reference eval.
Status convolution_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedConvArgs t = named_conv_args(args);
  ConvParams params;
  SizesType out_sizes[2 + kMaxSpatialDims];
  TL_RETURN_IF_ERROR(check_conv(t.input, t.weight, t.bias, args, t.out, &params, out_sizes));
  const ScalarType dtype = t.input.tensor.scalar_type();
  if (!visit_real_type_no_bool(dtype, [](auto) {})) {
    return unsupported_dtype("input", dtype, kRealTypeNoBoolNames);
  }
  const Tensor& in = t.input.tensor;
  const Tensor& w = t.weight.tensor;
  const bool depthwise = params.spatial == 2 && !params.transposed &&
                         params.groups == in.size(1) && in.size(1) > 0 &&
                         w.size(0) % in.size(1) == 0 &&
                         w.size(1) == 1 && w.size(2) * w.size(3) <= depthwise::kMaxTaps;
  if (!depthwise) return Error::kOk;
  const bool nchw =
      is_contiguous_dim_order(in.dim_order()) && is_contiguous_dim_order(t.out.tensor.dim_order());
  const bool last = is_channels_last_dim_order(in.dim_order()) &&
                    is_channels_last_dim_order(t.out.tensor.dim_order());
  visit_float_type(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (nchw) call->eval = depthwise::depthwise_eval_for<T, false, convolution_out>();
    if (last) call->eval = depthwise::depthwise_eval_for<T, true, convolution_out>();
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
