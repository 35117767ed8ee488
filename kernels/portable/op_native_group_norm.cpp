// aten::native_group_norm.out: normalization over groups of channels
// (nn.GroupNorm).
//
// ATen semantics: the input is read as [N, C, HxW] in logical (row-major)
// order, with N, C and HxW given as arguments (input.numel() must equal
// N * C * HxW); channels split into `group` groups of C / group. For each
// (n, g): mean and biased variance over its C / group * HxW elements,
// rstd = 1 / sqrt(var + eps), and out = (x - mean) * rstd * weight[c] +
// bias[c]. out0 has the input's shape and dtype; out1 (mean) and out2
// (rstd) are [N, group] in the parameters' dtype: the input's, or float32
// when a float16/bfloat16 input has float32 weight/bias. An empty group has
// mean 0 and rstd NaN, as ATen. Statistics are in double.
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/normalization.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

// Offsets of element (n, c, k) of a tensor read as [N, C, HxW]: through its
// first two dimensions when they are N and C (any dim order, cheap), else
// through its logical linear index.
class GroupOffsets {
 public:
  GroupOffsets(const Tensor& t, int64_t n, int64_t c, int64_t hxw)
      : structured_(t.dim() >= 2 && t.size(0) == n && t.size(1) == c),
        channels_(c),
        hxw_(hxw),
        spatial_(structured_ ? LinearOffsets(t, 2, t.dim()) : LinearOffsets(t)),
        n_stride_(structured_ ? t.strides()[0] : 0),
        c_stride_(structured_ ? t.strides()[1] : 0) {}

  int64_t at(int64_t n, int64_t c, int64_t k) const {
    if (structured_) return n * n_stride_ + c * c_stride_ + spatial_.at(k);
    return spatial_.at((n * channels_ + c) * hxw_ + k);
  }

 private:
  bool structured_;
  int64_t channels_;
  int64_t hxw_;
  LinearOffsets spatial_;
  int64_t n_stride_;
  int64_t c_stride_;
};

template <typename T, typename P>
void group_norm(const Tensor& in, const Tensor& weight, const Tensor& bias, int64_t batch,
                int64_t channels, int64_t hxw, int64_t groups, double eps, const Tensor& out,
                const Tensor& mean_out, const Tensor& rstd_out) {
  using Acc = opmath_t<T>;
  const GroupOffsets in_at(in, batch, channels, hxw);
  const GroupOffsets out_at(out, batch, channels, hxw);
  const int64_t per_group = channels / groups;
  const T* x = in.const_data_ptr<T>();
  T* y = out.mutable_data_ptr<T>();
  auto param = [](const Tensor& t, int64_t c, double fallback) {
    return t.defined() ? convert<double>(t.const_data_ptr<P>()[c * t.strides()[0]]) : fallback;
  };
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t c0 = g * per_group;
      double mean;
      double variance;
      compute_moments(x, per_group * hxw, [&](int64_t i) {
        return in_at.at(n, c0 + i / hxw, i % hxw);
      }, &mean, &variance);
      const double rstd = inverse_std(variance, eps);
      mean_out.mutable_data_ptr<P>()[n * mean_out.strides()[0] + g * mean_out.strides()[1]] =
          convert<P>(mean);
      rstd_out.mutable_data_ptr<P>()[n * rstd_out.strides()[0] + g * rstd_out.strides()[1]] =
          convert<P>(rstd);
      for (int64_t c = c0; c < c0 + per_group; ++c) {
        const double scale = rstd * param(weight, c, 1);
        const Acc a = static_cast<Acc>(scale);
        const Acc b = static_cast<Acc>(param(bias, c, 0) - mean * scale);
        for (int64_t k = 0; k < hxw; ++k) {
          y[out_at.at(n, c, k)] = convert<T>(convert<Acc>(x[in_at.at(n, c, k)]) * a + b);
        }
      }
    }
  }
}

// What the program fixes: the dtypes. Checked at load by prepare, and on
// every call by the reference eval; sets the parameters' dtype.
Status check_group_norm_dtypes(Span<EValue*> args, ScalarType* param_type) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor params[] = {{args[1]->to_optional_tensor(), "weight"},
                                {args[2]->to_optional_tensor(), "bias"}};
  TL_RETURN_IF_ERROR(check_norm_dtypes(input, params, param_type));
  TL_RETURN_IF_ERROR(
      check_same_dtype({args[8]->to_tensor(), "out0"}, input.tensor.scalar_type(), "input"));
  TL_RETURN_IF_ERROR(
      check_same_dtype({args[9]->to_tensor(), "out1"}, *param_type, "the parameters"));
  return check_same_dtype({args[10]->to_tensor(), "out2"}, *param_type, "the parameters");
}

// N, C, HxW and group of this run (SymInts an earlier instruction may
// compute) against the input and the parameters, the resizes and the
// normalization; after check_group_norm_dtypes, for input dtype T and
// parameter dtype P.
template <typename T, typename P>
void group_norm_shaped(KernelContext& ctx, Span<EValue*> args) {
  const NamedTensor input{args[0]->to_tensor(), "input"};
  const NamedTensor weight{args[1]->to_optional_tensor(), "weight"};
  const NamedTensor bias{args[2]->to_optional_tensor(), "bias"};
  const int64_t batch = args[3]->to_int();
  const int64_t channels = args[4]->to_int();
  const int64_t hxw = args[5]->to_int();
  const int64_t groups = args[6]->to_int();
  const double eps = args[7]->to_double();
  const NamedTensor out{args[8]->to_tensor(), "out0"};
  const NamedTensor mean{args[9]->to_tensor(), "out1"};
  const NamedTensor rstd{args[10]->to_tensor(), "out2"};

  const Tensor& in = input.tensor;
  char shape[128];
  TL_KERNEL_CHECK(ctx, batch >= 0 && channels >= 0 && hxw >= 0, Error::kInvalidArgument,
                  "arguments 'N' = %lld, 'C' = %lld and 'HxW' = %lld must not be negative",
                  static_cast<long long>(batch), static_cast<long long>(channels),
                  static_cast<long long>(hxw));
  TL_KERNEL_CHECK(ctx, groups > 0 && channels % groups == 0, Error::kInvalidArgument,
                  "argument 'group' is %lld, expected a positive divisor of 'C' = %lld",
                  static_cast<long long>(groups), static_cast<long long>(channels));
  // Overflow-safe: each factor is checked against numel before multiplying.
  const int64_t numel = in.numel();
  const bool sizes_match = (batch == 0 || channels == 0 || hxw == 0)
                               ? numel == 0
                               : (channels <= numel / batch && hxw <= numel / (batch * channels) &&
                                  batch * channels * hxw == numel);
  TL_KERNEL_CHECK(ctx, sizes_match, Error::kInvalidArgument,
                  "argument 'input' has shape %s (%lld elements), expected N * C * HxW = %lld * "
                  "%lld * %lld elements",
                  format_sizes(in.sizes(), shape, sizeof(shape)), static_cast<long long>(numel),
                  static_cast<long long>(batch), static_cast<long long>(channels),
                  static_cast<long long>(hxw));
  for (const NamedTensor* p : {&weight, &bias}) {
    if (!p->tensor.defined()) continue;
    TL_KERNEL_CHECK(ctx, p->tensor.dim() == 1 && p->tensor.size(0) == channels,
                    Error::kInvalidArgument, "argument '%s' has shape %s, expected [%lld] ('C')",
                    p->name, format_sizes(p->tensor.sizes(), shape, sizeof(shape)),
                    static_cast<long long>(channels));
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*p));
  }
  const int64_t stats[] = {batch, groups};
  SizesType stat_sizes[2];
  TL_KERNEL_RETURN_IF_ERROR(ctx, to_sizes(stats, "the mean and rstd", stat_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, in.sizes()));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(mean, stat_sizes));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(rstd, stat_sizes));
  for (const NamedTensor* t : {&input, &out, &mean, &rstd}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*t));
  }
  if (mean.tensor.numel() == 0) return;

  group_norm<T, P>(in, weight.tensor, bias.tensor, batch, channels, hxw, groups, eps, out.tensor,
                   mean.tensor, rstd.tensor);
}


}  // namespace

void native_group_norm_out(KernelContext& ctx, Span<EValue*> args) {
  ScalarType param_type = ScalarType::kFloat;  // Set by check_norm_dtypes.
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_group_norm_dtypes(args, &param_type));
  TL_SWITCH_NORM_TYPES(args[0]->to_tensor().scalar_type(), param_type, ctx, T, P,
                       [&] { group_norm_shaped<T, P>(ctx, args); });
}

// The dtypes are the program's: checked at load, with the loop for them
// picked there.
Status native_group_norm_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  ScalarType param_type = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(check_group_norm_dtypes(args, &param_type));
  const ScalarType in = args[0]->to_tensor().scalar_type();
  visit_float_type(in, [&](auto tag) {
    using T = typename decltype(tag)::type;
    call->eval = param_type == in ? &group_norm_shaped<T, T> : &group_norm_shaped<T, float>;
  });
  return Error::kOk;
}

}  // namespace torchlight::portable
