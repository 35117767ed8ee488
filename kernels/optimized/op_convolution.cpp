// aten::convolution.out for float32 2-D convolutions with one group, not
// transposed, in contiguous (NCHW, OIHW weight) or channels-last (input,
// weight and out all channels-last) layout: im2col + gemm (conv/conv2d.h).
// Every other call, and every call with a bad argument, goes to the
// portable kernel, which checks everything and words the errors.
#include <algorithm>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/conv/conv2d.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/util/gemm_scratch.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"

namespace torchlight::optimized {

namespace {

constexpr size_t kColumnsAlignment = 64;

bool is_float(const Tensor& t) { return t.scalar_type() == ScalarType::kFloat; }

bool has_layout(const Tensor& t, ConvLayout layout) {
  const Span<const DimOrderType> order = t.dim_order();
  return layout == ConvLayout::kNchw ? is_contiguous_dim_order(order)
                                     : is_channels_last_dim_order(order);
}

// A list of one value (both dims) or two, each at least `min_value`.
bool read_pair(const EValue& value, int64_t min_value, int64_t* h, int64_t* w) {
  if (!value.is_int_list()) return false;
  const Span<const int64_t> list = value.to_int_list();
  if (list.size() != 1 && list.size() != 2) return false;
  *h = list[0];
  *w = list[list.size() - 1];
  return *h >= min_value && *w >= min_value;
}

// The call's geometry and layout when the fast path takes it; false hands
// the call to the portable kernel (including every malformed one).
bool read_call(Span<EValue*> args, Conv2dGeometry* g, ConvLayout* layout) {
  if (!args[0]->is_tensor() || !args[1]->is_tensor() || !args[9]->is_tensor()) return false;
  const Tensor input = args[0]->to_tensor();
  const Tensor weight = args[1]->to_tensor();
  const Tensor out = args[9]->to_tensor();
  const Tensor bias = args[2]->to_optional_tensor();
  if (input.dim() != 4 || weight.dim() != 4 || out.dim() != 4) return false;
  if (!is_float(input) || !is_float(weight) || !is_float(out)) return false;
  if (!args[6]->is_bool() || args[6]->to_bool()) return false;    // transposed
  if (!args[8]->is_int() || args[8]->to_int() != 1) return false;  // groups
  if (bias.defined() &&
      (!is_float(bias) || bias.dim() != 1 || bias.size(0) != weight.size(0) ||
       (bias.size(0) > 1 && bias.strides()[0] != 1))) {
    return false;
  }
  if (!read_pair(*args[3], 1, &g->stride_h, &g->stride_w) ||
      !read_pair(*args[4], 0, &g->pad_h, &g->pad_w) ||
      !read_pair(*args[5], 1, &g->dilation_h, &g->dilation_w)) {
    return false;
  }
  *layout = has_layout(input, ConvLayout::kNchw) ? ConvLayout::kNchw : ConvLayout::kNhwc;
  if (!has_layout(input, *layout) || !has_layout(weight, *layout) || !has_layout(out, *layout)) {
    return false;
  }
  g->batch = input.size(0);
  g->in_channels = input.size(1);
  g->in_h = input.size(2);
  g->in_w = input.size(3);
  g->out_channels = weight.size(0);
  g->kernel_h = weight.size(2);
  g->kernel_w = weight.size(3);
  if (weight.size(1) != g->in_channels) return false;
  g->out_h = conv2d_output_size(g->in_h, g->kernel_h, g->stride_h, g->pad_h, g->dilation_h);
  g->out_w = conv2d_output_size(g->in_w, g->kernel_w, g->stride_w, g->pad_w, g->dilation_w);
  // Empty outputs (and the shapes ATen refuses) are the portable kernel's.
  return g->batch > 0 && g->in_channels > 0 && g->out_channels > 0 && g->out_h > 0 &&
         g->out_w > 0;
}

size_t columns_bytes(const Conv2dGeometry& g) {
  return conv2d_columns_floats(g) * sizeof(float) + kColumnsAlignment;
}

}  // namespace

Status prepare_convolution(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call) {
  Conv2dGeometry g;
  ConvLayout layout;
  // Load-time shapes are the upper bounds of dynamic ones. Calls this kernel
  // leaves to the portable one (depthwise, transposed, ...) get its prepare:
  // its load-time checks and its specialised evals, and no GEMM scratch.
  if (!read_call(args, &g, &layout)) return portable::convolution_out_prepare(ctx, args, call);
  call->scratch_bytes = gemm_workspace_bytes(threadpool::num_threads()) + columns_bytes(g);
  return Error::kOk;
}

void convolution_out(KernelContext& ctx, Span<EValue*> args) {
  Conv2dGeometry g;
  ConvLayout layout;
  if (!read_call(args, &g, &layout)) return portable::convolution_out(ctx, args);
  // The unfolded image after gemm's slots; a call that outgrew it (not
  // possible within a program's bounds) is the portable kernel's.
  const size_t gemm_bytes = gemm_workspace_bytes(threadpool::num_threads());
  if (ctx.scratch() == nullptr || ctx.scratch_bytes() < gemm_bytes + columns_bytes(g)) {
    return portable::convolution_out(ctx, args);
  }
  portable::set_return(args, 10, *args[9]);
  const Tensor out = args[9]->to_tensor();
  const SizesType out_sizes[] = {static_cast<SizesType>(g.batch),
                                 static_cast<SizesType>(g.out_channels),
                                 static_cast<SizesType>(g.out_h), static_cast<SizesType>(g.out_w)};
  TL_KERNEL_RETURN_IF_ERROR(ctx, portable::resize_tensor({out, "out"}, out_sizes));
  const Tensor input = args[0]->to_tensor();
  const Tensor weight = args[1]->to_tensor();
  const Tensor bias = args[2]->to_optional_tensor();
  if (input.const_data_ptr() == nullptr || weight.const_data_ptr() == nullptr ||
      out.mutable_data_ptr() == nullptr || (bias.defined() && bias.const_data_ptr() == nullptr)) {
    return portable::convolution_out(ctx, args);  // It names the tensor without data.
  }
  uint8_t* scratch = static_cast<uint8_t*>(ctx.scratch());
  Conv2dProblem p;
  p.geometry = g;
  p.layout = layout;
  p.input = input.const_data_ptr<float>();
  p.weight = weight.const_data_ptr<float>();
  p.bias = bias.defined() ? bias.const_data_ptr<float>() : nullptr;
  p.output = out.mutable_data_ptr<float>();
  p.workspace = make_gemm_workspace(scratch, gemm_bytes);
  const uintptr_t columns = reinterpret_cast<uintptr_t>(scratch + gemm_bytes);
  p.columns = reinterpret_cast<float*>((columns + kColumnsAlignment - 1) & ~(kColumnsAlignment - 1));
  TL_KERNEL_RETURN_IF_ERROR(ctx, conv2d(p));
}

}  // namespace torchlight::optimized
