// Batch normalization, four out variants sharing one implementation:
//
//   aten::_native_batch_norm_legit_no_training.out  what eval-mode
//       nn.BatchNorm1d/2d/3d export to (torch 2.6): running statistics.
//   aten::_native_batch_norm_legit.no_stats_out     what nn.InstanceNorm and
//       BatchNorm(track_running_stats=False) export to: batch statistics.
//   aten::_native_batch_norm_legit.out              either, by `training`;
//       training also updates running_mean / running_var in place.
//   aten::native_batch_norm.out                     the same, stats optional.
//
// ATen semantics: input [N, C, *] (rank >= 2, any dim order), per-channel
// parameters [C]. With running statistics (training == false):
//   out = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c]
// and save_mean / save_invstd are empty ([0]). With batch statistics
// (training == true): mean and biased variance over N and the spatial dims,
// save_mean = mean, save_invstd = 1 / sqrt(var + eps) (shape [C]), and
// running stats, when given, become (1 - momentum) * running + momentum *
// (mean, unbiased variance). Dtypes: float16, bfloat16, float32, float64;
// parameters have the input's dtype or, for float16/bfloat16 input, all
// float32; save_mean/save_invstd have the parameters' dtype.
// Statistics are computed in double; the output as x * alpha + beta, with
// alpha = invstd * weight and beta = bias - mean * alpha, as ATen does.
//
// Every variant checks shapes and dtypes at load (its prepare step). For
// dense or channels-last float32 / float64 input and parameters of its
// dtype, prepare installs a loop that only computes: with running
// statistics (training false) one multiply-add per element; with batch
// statistics (training true) the moments of each channel first, summed in
// the reference's order, then the running-statistics update and the same
// multiply-add, so both are bit-identical to the reference.
#include <algorithm>
#include <cmath>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/normalization.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

namespace {

struct BatchNorm {
  NamedTensor input;
  NamedTensor weight;        // Undefined: 1.
  NamedTensor bias;          // Undefined: 0.
  NamedTensor running_mean;  // Undefined: none (training only).
  NamedTensor running_var;
  bool training;
  double momentum;
  double eps;
  NamedTensor out;
  NamedTensor save_mean;
  NamedTensor save_invstd;
};

// The checks that need no data: shapes, dtypes, which statistics are given.
// Also the prepare step's (at load) for the no_training variant.
Status check_call(const BatchNorm& bn, ScalarType* param_type) {
  const Tensor& in = bn.input.tensor;
  char shape[128];
  TL_CHECK_OR_RETURN(in.dim() >= 2, Error::kInvalidArgument,
                     "argument 'input' has shape %s, expected at least 2 dimensions [N, C, *]",
                     format_sizes(in.sizes(), shape, sizeof(shape)));
  const NamedTensor params[] = {bn.weight, bn.bias, bn.running_mean, bn.running_var};
  const int64_t channels = in.size(1);
  for (const NamedTensor& p : params) {
    if (!p.tensor.defined()) continue;
    TL_CHECK_OR_RETURN(p.tensor.dim() == 1 && p.tensor.size(0) == channels,
                       Error::kInvalidArgument,
                       "argument '%s' has shape %s, expected [%lld] (the channels of 'input')",
                       p.name, format_sizes(p.tensor.sizes(), shape, sizeof(shape)),
                       static_cast<long long>(channels));
  }
  TL_RETURN_IF_ERROR(check_norm_dtypes(bn.input, params, param_type));
  TL_RETURN_IF_ERROR(check_same_dtype(bn.out, in.scalar_type(), "input"));
  TL_RETURN_IF_ERROR(check_same_dtype(bn.save_mean, *param_type, "the parameters"));
  TL_RETURN_IF_ERROR(check_same_dtype(bn.save_invstd, *param_type, "the parameters"));
  TL_CHECK_OR_RETURN(bn.running_mean.tensor.defined() == bn.running_var.tensor.defined(),
                     Error::kInvalidArgument,
                     "arguments 'running_mean' and 'running_var' must be given together");
  if (!bn.training) {
    TL_CHECK_OR_RETURN(bn.running_mean.tensor.defined() && bn.running_var.tensor.defined(),
                       Error::kInvalidArgument,
                       "arguments 'running_mean' and 'running_var' are required when 'training' "
                       "is false");
  } else {
    TL_CHECK_OR_RETURN(in.numel() > 0, Error::kInvalidArgument,
                       "argument 'input' has shape %s; batch statistics need at least one element",
                       format_sizes(in.sizes(), shape, sizeof(shape)));
  }
  return Error::kOk;
}

Status prepare(const BatchNorm& bn, ScalarType* param_type) {
  TL_RETURN_IF_ERROR(check_call(bn, param_type));
  const Tensor& in = bn.input.tensor;
  const int64_t channels = in.size(1);
  for (const NamedTensor& p : {bn.weight, bn.bias, bn.running_mean, bn.running_var}) {
    if (p.tensor.defined()) TL_RETURN_IF_ERROR(check_has_data(p));
  }
  TL_RETURN_IF_ERROR(resize_tensor(bn.out, in.sizes()));
  const SizesType stats_size[] = {bn.training ? static_cast<SizesType>(channels) : 0};
  TL_RETURN_IF_ERROR(resize_tensor(bn.save_mean, stats_size));
  TL_RETURN_IF_ERROR(resize_tensor(bn.save_invstd, stats_size));
  TL_RETURN_IF_ERROR(check_has_data(bn.input));
  TL_RETURN_IF_ERROR(check_has_data(bn.out));
  TL_RETURN_IF_ERROR(check_has_data(bn.save_mean));
  return check_has_data(bn.save_invstd);
}

// Element i of a 1-D tensor of type P as double; `fallback` when undefined.
template <typename P>
double param_at(const Tensor& t, int64_t i, double fallback) {
  return t.defined() ? convert<double>(t.const_data_ptr<P>()[i * t.strides()[0]]) : fallback;
}

template <typename P>
void set_param(const Tensor& t, int64_t i, double value) {
  t.mutable_data_ptr<P>()[i * t.strides()[0]] = convert<P>(value);
}

template <typename T, typename P>
void batch_norm(const BatchNorm& bn) {
  using Acc = opmath_t<T>;
  const Tensor& in = bn.input.tensor;
  const Tensor& out = bn.out.tensor;
  const int64_t batch = in.size(0);
  const int64_t channels = in.size(1);
  const LinearOffsets in_spatial(in, 2, in.dim());
  const LinearOffsets out_spatial(out, 2, out.dim());
  int64_t spatial = 1;
  for (size_t d = 2; d < in.dim(); ++d) spatial *= in.size(d);
  const int64_t count = batch * spatial;
  const T* x = in.const_data_ptr<T>();
  T* y = out.mutable_data_ptr<T>();

  for (int64_t c = 0; c < channels; ++c) {
    const T* x_c = x + c * in.strides()[1];
    double mean;
    double invstd;
    if (bn.training) {
      double variance;
      compute_moments(x_c, count, [&](int64_t i) {
        return (i / spatial) * in.strides()[0] + in_spatial.at(i % spatial);
      }, &mean, &variance);
      invstd = inverse_std(variance, bn.eps);
      set_param<P>(bn.save_mean.tensor, c, mean);
      set_param<P>(bn.save_invstd.tensor, c, invstd);
      if (bn.running_mean.tensor.defined()) {
        const double m = bn.momentum;
        set_param<P>(bn.running_mean.tensor, c,
                     (1 - m) * param_at<P>(bn.running_mean.tensor, c, 0) + m * mean);
        const double unbiased =
            variance * static_cast<double>(count) / static_cast<double>(count - 1);
        set_param<P>(bn.running_var.tensor, c,
                     (1 - m) * param_at<P>(bn.running_var.tensor, c, 0) + m * unbiased);
      }
    } else {
      mean = param_at<P>(bn.running_mean.tensor, c, 0);
      invstd = 1.0 / std::sqrt(param_at<P>(bn.running_var.tensor, c, 0) + bn.eps);
    }
    const double alpha = invstd * param_at<P>(bn.weight.tensor, c, 1);
    const double beta = param_at<P>(bn.bias.tensor, c, 0) - mean * alpha;
    const Acc a = static_cast<Acc>(alpha);
    const Acc b = static_cast<Acc>(beta);
    T* y_c = y + c * out.strides()[1];
    for (int64_t n = 0; n < batch; ++n) {
      const T* x_n = x_c + n * in.strides()[0];
      T* y_n = y_c + n * out.strides()[0];
      for (int64_t k = 0; k < spatial; ++k) {
        y_n[out_spatial.at(k)] = convert<T>(convert<Acc>(x_n[in_spatial.at(k)]) * a + b);
      }
    }
  }
}

void run(KernelContext& ctx, const BatchNorm& bn) {
  ScalarType param_type = ScalarType::kFloat;  // Set by check_norm_dtypes.
  TL_KERNEL_RETURN_IF_ERROR(ctx, prepare(bn, &param_type));
  TL_SWITCH_NORM_TYPES(bn.input.tensor.scalar_type(), param_type, ctx, T, P,
                       [&] { batch_norm<T, P>(bn); });
}

BatchNorm no_training_call(Span<EValue*> args) {
  return BatchNorm{{args[0]->to_tensor(), "input"},
                   {args[1]->to_optional_tensor(), "weight"},
                   {args[2]->to_optional_tensor(), "bias"},
                   {args[3]->to_tensor(), "running_mean"},
                   {args[4]->to_tensor(), "running_var"},
                   /*training=*/false,
                   args[5]->to_double(),
                   args[6]->to_double(),
                   {args[7]->to_tensor(), "out0"},
                   {args[8]->to_tensor(), "out1"},
                   {args[9]->to_tensor(), "out2"}};
}

}  // namespace

void native_batch_norm_legit_no_training_out(KernelContext& ctx, Span<EValue*> args) {
  run(ctx, no_training_call(args));
}

namespace {

BatchNorm with_stats_call(Span<EValue*> args) {
  return BatchNorm{{args[0]->to_tensor(), "input"},
                   {args[1]->to_optional_tensor(), "weight"},
                   {args[2]->to_optional_tensor(), "bias"},
                   {args[3]->to_optional_tensor(), "running_mean"},
                   {args[4]->to_optional_tensor(), "running_var"},
                   args[5]->to_bool(),
                   args[6]->to_double(),
                   args[7]->to_double(),
                   {args[8]->to_tensor(), "out"},
                   {args[9]->to_tensor(), "save_mean"},
                   {args[10]->to_tensor(), "save_invstd"}};
}

// Where a variant keeps what the prepared eval reads.
struct RunningStatsArgs {
  size_t training;  // kNoTraining: the variant has no such argument (false).
  size_t eps;
  size_t out;  // save_mean and save_invstd follow it.
};
constexpr size_t kNoTraining = ~size_t{0};
constexpr RunningStatsArgs kNoTrainingArgs{kNoTraining, 6, 7};
constexpr RunningStatsArgs kWithStatsArgs{5, 7, 8};

// Channels one block carries: its alpha and beta stay on the stack.
constexpr int64_t kChannelBlock = 64;

// The prepared eval with running statistics (weight, bias, running_mean,
// running_var at 1..4), for an input of dtype T with parameters of dtype T
// (float32 or float64), input and out both contiguous (kLast false) or both
// channels-last 4-D. Computes alpha and beta per channel exactly as
// batch_norm<T, T> does, then one multiply-add per element. What only a run
// can show (a `training` an earlier instruction set, channels that no
// longer match the parameters, an out that cannot take the input's shape,
// missing data) goes to the reference.
template <typename T, bool kLast, const RunningStatsArgs& kArgs, KernelFunction reference>
void running_stats_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor in = args[0]->to_tensor();
  const Tensor weight = args[1]->to_optional_tensor();
  const Tensor bias = args[2]->to_optional_tensor();
  const Tensor mean = args[3]->to_optional_tensor();
  const Tensor var = args[4]->to_optional_tensor();
  const double eps = args[kArgs.eps]->to_double();
  const Tensor out = args[kArgs.out]->to_tensor();
  const int64_t channels = in.size(1);
  // What the reference would reject first, before any out is resized.
  bool ok = (kArgs.training == kNoTraining || !args[kArgs.training]->to_bool()) &&
            mean.defined() && var.defined();
  for (const Tensor* p : {&weight, &bias, &mean, &var}) {
    ok = ok && (!p->defined() || (p->size(0) == channels && p->const_data_ptr<T>() != nullptr));
  }
  const T* x = in.const_data_ptr<T>();
  ok = ok && (in.numel() == 0 || x != nullptr) && dense_path::fit_out(in, out);
  const SizesType no_stats[] = {0};
  for (size_t i = kArgs.out + 1; ok && i < kArgs.out + 3; ++i) {
    const Tensor s = args[i]->to_tensor();
    ok = (s.dim() == 1 && s.size(0) == 0) || resize_tensor({s, "out"}, no_stats).ok();
  }
  T* y = out.mutable_data_ptr<T>();
  ok = ok && (in.numel() == 0 || y != nullptr);
  if (!ok) return reference(ctx, args);
  const int64_t batch = in.size(0);
  const int64_t spatial = channels == 0 ? 0 : in.numel() / std::max<int64_t>(batch * channels, 1);
  for (int64_t c0 = 0; c0 < channels; c0 += kChannelBlock) {
    const int64_t cn = std::min(kChannelBlock, channels - c0);
    T a[kChannelBlock];
    T b[kChannelBlock];
    for (int64_t j = 0; j < cn; ++j) {
      const int64_t c = c0 + j;
      const double m = param_at<T>(mean, c, 0);
      const double invstd = 1.0 / std::sqrt(param_at<T>(var, c, 0) + eps);
      const double alpha = invstd * param_at<T>(weight, c, 1);
      a[j] = static_cast<T>(alpha);
      b[j] = static_cast<T>(param_at<T>(bias, c, 0) - m * alpha);
    }
    for (int64_t n = 0; n < batch; ++n) {
      if constexpr (kLast) {
        const T* xn = x + n * spatial * channels + c0;
        T* yn = y + n * spatial * channels + c0;
        for (int64_t k = 0; k < spatial; ++k) {
          for (int64_t j = 0; j < cn; ++j) {
            yn[k * channels + j] = xn[k * channels + j] * a[j] + b[j];
          }
        }
      } else {
        for (int64_t j = 0; j < cn; ++j) {
          const T* xc = x + (n * channels + c0 + j) * spatial;
          T* yc = y + (n * channels + c0 + j) * spatial;
          const T aj = a[j];
          const T bj = b[j];
          for (int64_t k = 0; k < spatial; ++k) yc[k] = xc[k] * aj + bj;
        }
      }
    }
  }
}

// Where a batch-statistics variant keeps what the prepared eval reads.
struct BatchStatsArgs {
  size_t running;  // running_mean (running_var follows); kNoRunning: none.
  size_t training;
  size_t momentum;
  size_t eps;
  size_t out;  // save_mean and save_invstd follow it.
};
constexpr size_t kNoRunning = ~size_t{0};
constexpr BatchStatsArgs kNoStatsBatchArgs{kNoRunning, 3, 4, 5, 6};
constexpr BatchStatsArgs kWithStatsBatchArgs{3, 5, 6, 7, 8};

// Mean and biased variance of channel c of a dense (kLast false: NCHW...;
// true: channels-last) input of `batch` x `spatial` elements per channel,
// as compute_moments computes them: two passes in double, in the order
// n, then spatial position.
template <typename T, bool kLast>
void channel_moments(const T* x, int64_t c, int64_t batch, int64_t channels, int64_t spatial,
                     double* mean, double* variance) {
  auto at = [&](int64_t n, int64_t k) {
    return kLast ? x[(n * spatial + k) * channels + c] : x[(n * channels + c) * spatial + k];
  };
  double sum = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t k = 0; k < spatial; ++k) sum += static_cast<double>(at(n, k));
  }
  const double count = static_cast<double>(batch * spatial);
  const double m = sum / count;
  double squares = 0;
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t k = 0; k < spatial; ++k) {
      const double d = static_cast<double>(at(n, k)) - m;
      squares += d * d;
    }
  }
  *mean = m;
  *variance = squares / count;
}

// The prepared eval with batch statistics, for an input of dtype T with
// parameters of dtype T (float32 or float64), input and out both dense
// (kLast false) or both channels-last 4-D. Per channel, as batch_norm<T, T>
// does: the moments, save_mean / save_invstd, the running statistics when
// given, alpha and beta, then one multiply-add per element. What only a run
// can show (a `training` an earlier instruction cleared, an empty input,
// channels that no longer match the parameters, outs that cannot take the
// shapes, missing data) goes to the reference.
template <typename T, bool kLast, const BatchStatsArgs& kArgs, KernelFunction reference>
void batch_stats_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor in = args[0]->to_tensor();
  const Tensor weight = args[1]->to_optional_tensor();
  const Tensor bias = args[2]->to_optional_tensor();
  const Tensor mean =
      kArgs.running == kNoRunning ? Tensor() : args[kArgs.running]->to_optional_tensor();
  const Tensor var =
      kArgs.running == kNoRunning ? Tensor() : args[kArgs.running + 1]->to_optional_tensor();
  const double momentum = args[kArgs.momentum]->to_double();
  const double eps = args[kArgs.eps]->to_double();
  const Tensor out = args[kArgs.out]->to_tensor();
  const int64_t channels = in.size(1);
  bool ok = args[kArgs.training]->to_bool() && in.numel() > 0 && mean.defined() == var.defined();
  for (const Tensor* p : {&weight, &bias, &mean, &var}) {
    ok = ok && (!p->defined() || (p->size(0) == channels && p->const_data_ptr<T>() != nullptr));
  }
  const T* x = in.const_data_ptr<T>();
  ok = ok && x != nullptr && dense_path::fit_out(in, out);
  const SizesType stats_size[] = {static_cast<SizesType>(channels)};
  Tensor stats[2];
  for (size_t i = 0; ok && i < 2; ++i) {
    stats[i] = args[kArgs.out + 1 + i]->to_tensor();
    ok = (stats[i].dim() == 1 && stats[i].size(0) == channels) ||
         resize_tensor({stats[i], "out"}, stats_size).ok();
    ok = ok && stats[i].const_data_ptr() != nullptr;
  }
  T* y = out.mutable_data_ptr<T>();
  ok = ok && y != nullptr;
  if (!ok) return reference(ctx, args);
  const int64_t batch = in.size(0);
  const int64_t spatial = in.numel() / (batch * channels);
  const double count = static_cast<double>(batch * spatial);
  for (int64_t c = 0; c < channels; ++c) {
    double m;
    double variance;
    channel_moments<T, kLast>(x, c, batch, channels, spatial, &m, &variance);
    const double invstd = inverse_std(variance, eps);
    set_param<T>(stats[0], c, m);
    set_param<T>(stats[1], c, invstd);
    if (mean.defined()) {
      set_param<T>(mean, c, (1 - momentum) * param_at<T>(mean, c, 0) + momentum * m);
      const double unbiased = variance * count / (count - 1);
      set_param<T>(var, c, (1 - momentum) * param_at<T>(var, c, 0) + momentum * unbiased);
    }
    const double alpha = invstd * param_at<T>(weight, c, 1);
    const T a = static_cast<T>(alpha);
    const T b = static_cast<T>(param_at<T>(bias, c, 0) - m * alpha);
    for (int64_t n = 0; n < batch; ++n) {
      if constexpr (kLast) {
        const T* xn = x + n * spatial * channels + c;
        T* yn = y + n * spatial * channels + c;
        for (int64_t k = 0; k < spatial; ++k) yn[k * channels] = xn[k * channels] * a + b;
      } else {
        const T* xc = x + (n * channels + c) * spatial;
        T* yc = y + (n * channels + c) * spatial;
        for (int64_t k = 0; k < spatial; ++k) yc[k] = xc[k] * a + b;
      }
    }
  }
}

// Which layout loop the input and out share: 0 none, 1 dense, 2 channels-last.
int loop_layout(const Tensor& in, const Tensor& out) {
  if (dense_path::is_dense(in) && dense_path::is_dense(out)) return 1;
  const bool last = in.dim() == 4 && is_channels_last_dim_order(in.dim_order()) &&
                    is_channels_last_dim_order(out.dim_order());
  return last ? 2 : 0;
}

// The reference's checks at load; for float32 and float64 with parameters
// of the input's dtype, the loops above: running statistics (kArgs) when
// training is false at load, batch statistics (kBatch) when it is true.
// (A variant without one of the two never installs it: check_call rejects
// no_stats without training and no_training has no training.)
template <const RunningStatsArgs& kArgs, const BatchStatsArgs& kBatch, KernelFunction reference>
Status prepare_batch_norm(const BatchNorm& bn, PreparedCall* call) {
  ScalarType param_type = ScalarType::kFloat;
  TL_RETURN_IF_ERROR(check_call(bn, &param_type));
  const ScalarType dtype = bn.input.tensor.scalar_type();
  const int layout = loop_layout(bn.input.tensor, bn.out.tensor);
  if (param_type != dtype || layout == 0) return Error::kOk;
  auto pick = [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (bn.training) {
      call->eval = layout == 1 ? &batch_stats_eval<T, false, kBatch, reference>
                               : &batch_stats_eval<T, true, kBatch, reference>;
    } else {
      call->eval = layout == 1 ? &running_stats_eval<T, false, kArgs, reference>
                               : &running_stats_eval<T, true, kArgs, reference>;
    }
  };
  if (dtype == ScalarType::kFloat) pick(TypeTag<float>{});
  if (dtype == ScalarType::kDouble) pick(TypeTag<double>{});
  return Error::kOk;
}

}  // namespace

Status native_batch_norm_legit_no_training_out_prepare(PrepareContext&, Span<EValue*> args,
                                                       PreparedCall* call) {
  return prepare_batch_norm<kNoTrainingArgs, kWithStatsBatchArgs,
                            &native_batch_norm_legit_no_training_out>(no_training_call(args), call);
}

namespace {

BatchNorm no_stats_call(Span<EValue*> args) {
  return BatchNorm{{args[0]->to_tensor(), "input"},
                   {args[1]->to_optional_tensor(), "weight"},
                   {args[2]->to_optional_tensor(), "bias"},
                   {Tensor(), "running_mean"},
                   {Tensor(), "running_var"},
                   args[3]->to_bool(),
                   args[4]->to_double(),
                   args[5]->to_double(),
                   {args[6]->to_tensor(), "out"},
                   {args[7]->to_tensor(), "save_mean"},
                   {args[8]->to_tensor(), "save_invstd"}};
}

}  // namespace

void native_batch_norm_legit_no_stats_out(KernelContext& ctx, Span<EValue*> args) {
  run(ctx, no_stats_call(args));
}

// Batch statistics only (training false fails the reference's checks).
Status native_batch_norm_legit_no_stats_out_prepare(PrepareContext&, Span<EValue*> args,
                                                    PreparedCall* call) {
  return prepare_batch_norm<kNoTrainingArgs, kNoStatsBatchArgs,
                            &native_batch_norm_legit_no_stats_out>(no_stats_call(args), call);
}

void native_batch_norm_legit_out(KernelContext& ctx, Span<EValue*> args) {
  run(ctx, with_stats_call(args));
}

void native_batch_norm_out(KernelContext& ctx, Span<EValue*> args) {
  run(ctx, with_stats_call(args));
}

Status native_batch_norm_legit_out_prepare(PrepareContext&, Span<EValue*> args,
                                           PreparedCall* call) {
  return prepare_batch_norm<kWithStatsArgs, kWithStatsBatchArgs, &native_batch_norm_legit_out>(
      with_stats_call(args), call);
}

Status native_batch_norm_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_batch_norm<kWithStatsArgs, kWithStatsBatchArgs, &native_batch_norm_out>(
      with_stats_call(args), call);
}

}  // namespace torchlight::portable
