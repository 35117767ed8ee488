#include "backends/xnnpack/staged_executor.h"

#include <pthreadpool.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "backends/xnnpack/xnn_executor.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/optimized/conv/winograd_f2x3.h"
#include "extension/threadpool/threadpool.h"
#include "runtime/platform/platform.h"

namespace torchlight {
namespace xnnpack {

StagedExecutor::StagedExecutor(StagedParts parts, FreeableBuffer payload)
    : parts_(parts), payload_(std::move(payload)) {}

StagedExecutor::~StagedExecutor() {
  // Runtimes first: they may point into the payload and the workspace.
  for (uint32_t i = 0; i < parts_.num_xnn_stages; ++i) {
    if (parts_.xnn_stages[i].runtime == nullptr) continue;
    xnn_delete_runtime(parts_.xnn_stages[i].runtime);
    if (parts_.cache != nullptr) parts_.cache->release_runtime();
  }
  for (uint32_t i = 0; i < parts_.num_linears; ++i) {
    if (parts_.linears[i].one_row != nullptr) xnn_delete_runtime(parts_.linears[i].one_row);
  }
  if (parts_.workspace != nullptr) xnn_release_workspace(parts_.workspace);
}

void StagedExecutor::invalidate() {
  prepared_ = false;
  for (uint32_t i = 0; i < parts_.num_externals; ++i) parts_.externals[i].bound_rank = kNoShape;
}

ValueShape StagedExecutor::shape_of(Span<EValue*> args, uint32_t value) const {
  const PlannedValue& planned = parts_.plan.values[value];
  if (planned.home == ValueHome::kArena) return parts_.shapes[value];
  ValueShape shape;
  const Tensor t = args[planned.external_id]->to_tensor();
  shape.rank = t.dim() == 0 ? 1 : static_cast<uint32_t>(t.dim());
  shape.dims[0] = 1;  // 0-d tensors are [1] in XNNPACK.
  for (size_t d = 0; d < t.dim(); ++d) shape.dims[d] = static_cast<size_t>(t.size(d));
  return shape;
}

void* StagedExecutor::data_of(Span<EValue*> args, uint32_t value) const {
  const PlannedValue& planned = parts_.plan.values[value];
  if (planned.home == ValueHome::kArena) return parts_.arena + planned.offset;
  return args[planned.external_id]->to_tensor().mutable_data_ptr<void>();
}

Status StagedExecutor::set_output_shape(Span<EValue*> args, uint32_t value, uint32_t rank,
                                        const size_t* dims) {
  const PlannedValue& planned = parts_.plan.values[value];
  size_t numel = 1;
  for (uint32_t d = 0; d < rank; ++d) numel *= dims[d];
  if (planned.home == ValueHome::kArena) {
    TL_CHECK_OR_RETURN(numel * planned.element_bytes <= planned.capacity,
                       Error::kInvalidArgument,
                       "XNNPACK delegate value %u would hold %zu elements; its declared shape "
                       "allows %zu",
                       value, numel, planned.capacity / planned.element_bytes);
    ValueShape& shape = parts_.shapes[value];
    shape.rank = rank;
    for (uint32_t d = 0; d < rank; ++d) shape.dims[d] = dims[d];
    return Error::kOk;
  }
  const Tensor t = args[planned.external_id]->to_tensor();
  if (t.dim() == 0 && numel == 1) return Error::kOk;  // 0-d outputs are [1] in XNNPACK.
  SizesType sizes[XNN_MAX_TENSOR_DIMS];
  for (uint32_t d = 0; d < rank; ++d) sizes[d] = static_cast<SizesType>(dims[d]);
  Status resized = t.resize({sizes, rank});
  if (!resized.ok()) {
    return resized.with_context("XNNPACK delegate output %u", planned.external_id);
  }
  return Error::kOk;
}

Status StagedExecutor::reshape_xnn_stage(Span<EValue*> args, XnnStage& stage) {
  for (uint32_t k = 0; k < stage.num_externals; ++k) {
    if (stage.is_output[k] != 0) continue;
    const ValueShape shape = shape_of(args, stage.values[k]);
    const xnn_status s =
        xnn_reshape_external_value(stage.runtime, stage.bindings[k].id, shape.rank, shape.dims);
    TL_CHECK_OR_RETURN(s == xnn_status_success, Error::kInvalidArgument,
                       "XNNPACK cannot take value %u with a shape of %u dims (status %d)",
                       stage.values[k], shape.rank, static_cast<int>(s));
  }
  const xnn_status s = xnn_reshape_runtime(stage.runtime);
  TL_CHECK_OR_RETURN(s == xnn_status_success, Error::kInvalidArgument,
                     "XNNPACK cannot run with these input shapes (reshape status %d)",
                     static_cast<int>(s));
  for (uint32_t k = 0; k < stage.num_externals; ++k) {
    if (stage.is_output[k] == 0) continue;
    size_t rank = 0;
    size_t dims[XNN_MAX_TENSOR_DIMS];
    const xnn_status q =
        xnn_get_external_value_shape(stage.runtime, stage.bindings[k].id, &rank, dims);
    if (q != xnn_status_success) return internal_error(q, "output shape query");
    TL_RETURN_IF_ERROR(set_output_shape(args, stage.values[k], static_cast<uint32_t>(rank), dims));
  }
  return Error::kOk;
}

Status StagedExecutor::reshape_conv(Span<EValue*> args, const ConvStage& conv) {
  const ValueShape in = shape_of(args, conv.input);
  const optimized::Conv2dGeometry& w = conv.window;
  TL_CHECK_OR_RETURN(in.rank == 4 && in.dims[3] == static_cast<size_t>(w.in_channels),
                     Error::kInvalidArgument,
                     "XNNPACK node %u: convolution input must be [N, H, W, %lld]", conv.node,
                     static_cast<long long>(w.in_channels));
  optimized::Conv2dGeometry g = w;
  g.batch = static_cast<int64_t>(in.dims[0]);
  g.in_h = static_cast<int64_t>(in.dims[1]);
  g.in_w = static_cast<int64_t>(in.dims[2]);
  g.out_h = optimized::conv2d_output_size(g.in_h, g.kernel_h, g.stride_h, g.pad_h, g.dilation_h);
  g.out_w = optimized::conv2d_output_size(g.in_w, g.kernel_w, g.stride_w, g.pad_w, g.dilation_w);
  TL_CHECK_OR_RETURN(g.out_h > 0 && g.out_w > 0, Error::kInvalidArgument,
                     "XNNPACK node %u: a %zux%zu input is smaller than the convolution window",
                     conv.node, in.dims[1], in.dims[2]);
  TL_CHECK_OR_RETURN(optimized::conv2d_columns_floats(g) <= parts_.columns_floats,
                     Error::kInvalidArgument,
                     "XNNPACK node %u: a %zux%zu input needs more unfolding room than its "
                     "declared shape",
                     conv.node, in.dims[1], in.dims[2]);
  const size_t dims[4] = {in.dims[0], static_cast<size_t>(g.out_h), static_cast<size_t>(g.out_w),
                          static_cast<size_t>(g.out_channels)};
  return set_output_shape(args, conv.output, 4, dims);
}

Status StagedExecutor::reshape_linear(Span<EValue*> args, const LinearStage& linear) {
  ValueShape shape = shape_of(args, linear.input);
  TL_CHECK_OR_RETURN(shape.rank >= 1 && shape.dims[shape.rank - 1] == static_cast<size_t>(linear.k),
                     Error::kInvalidArgument,
                     "XNNPACK node %u: the linear's input rows must be %lld long", linear.node,
                     static_cast<long long>(linear.k));
  shape.dims[shape.rank - 1] = static_cast<size_t>(linear.n);
  return set_output_shape(args, linear.output, shape.rank, shape.dims);
}

Status StagedExecutor::reshape_depthwise(Span<EValue*> args, const DepthwiseStage& dw) {
  const ValueShape in = shape_of(args, dw.input);
  TL_CHECK_OR_RETURN(in.rank == 4 && in.dims[3] == dw.window.channels, Error::kInvalidArgument,
                     "XNNPACK node %u: depthwise input must be [N, H, W, %zu]", dw.node,
                     dw.window.channels);
  const size_t padded_h = in.dims[1] + dw.window.pad_top + dw.pad_bottom;
  const size_t padded_w = in.dims[2] + dw.window.pad_left + dw.pad_right;
  TL_CHECK_OR_RETURN(padded_h >= 3 && padded_w >= 3, Error::kInvalidArgument,
                     "XNNPACK node %u: a %zux%zu input is smaller than the 3x3 window", dw.node,
                     in.dims[1], in.dims[2]);
  const size_t dims[4] = {in.dims[0], (padded_h - 3) / dw.window.stride_h + 1,
                          (padded_w - 3) / dw.window.stride_w + 1, dw.window.channels};
  return set_output_shape(args, dw.output, 4, dims);
}

namespace {

// The block's shape for an input of `in`'s dims.
optimized::InvertedResidualShape call_shape(const InvertedResidualStage& block,
                                            const ValueShape& in) {
  optimized::InvertedResidualShape s = block.shape;
  s.batch = in.dims[0];
  s.in_h = in.dims[1];
  s.in_w = in.dims[2];
  return s;
}

}  // namespace

Status StagedExecutor::reshape_block(Span<EValue*> args, const InvertedResidualStage& block) {
  const ValueShape in = shape_of(args, block.input);
  TL_CHECK_OR_RETURN(in.rank == 4 && in.dims[3] == block.shape.in_channels,
                     Error::kInvalidArgument,
                     "XNNPACK node %u: inverted-residual block input must be [N, H, W, %zu]",
                     block.node, block.shape.in_channels);
  const optimized::InvertedResidualShape s = call_shape(block, in);
  const char* why = optimized::inverted_residual_unsupported(s);
  TL_CHECK_OR_RETURN(*why == '\0', Error::kInvalidArgument,
                     "XNNPACK node %u: inverted-residual block input with %s", block.node, why);
  TL_CHECK_OR_RETURN(optimized::inverted_residual_scratch_floats(s, block.isa) <= block.band_floats,
                     Error::kInvalidArgument,
                     "XNNPACK node %u: a %zu-wide input is wider than the block's declared input",
                     block.node, s.in_w);
  const size_t dims[4] = {s.batch, s.out_h(), s.out_w(), s.out_channels};
  return set_output_shape(args, block.output, 4, dims);
}

Status StagedExecutor::reshape_all(Span<EValue*> args) {
  for (uint32_t i = 0; i < parts_.plan.num_stages; ++i) {
    const StageRef ref = parts_.order[i];
    switch (ref.kind) {
      case StageKind::kConv2d:
        TL_RETURN_IF_ERROR(reshape_conv(args, parts_.convs[ref.index]));
        break;
      case StageKind::kLinear8da4w:
        TL_RETURN_IF_ERROR(reshape_linear(args, parts_.linears[ref.index]));
        break;
      case StageKind::kXnnpack:
        TL_RETURN_IF_ERROR(reshape_xnn_stage(args, parts_.xnn_stages[ref.index]));
        break;
      case StageKind::kDepthwiseQs8:
        TL_RETURN_IF_ERROR(reshape_depthwise(args, parts_.depthwise[ref.index]));
        break;
      case StageKind::kInvertedResidual:
        TL_RETURN_IF_ERROR(reshape_block(args, parts_.blocks[ref.index]));
        break;
      case StageKind::kSkip:
      case StageKind::kFolded:
        break;
    }
  }
  return Error::kOk;
}

Status StagedExecutor::bind_and_prepare(Span<EValue*> args) {
  bool reshape = !prepared_;
  for (uint32_t i = 0; i < parts_.num_externals; ++i) {
    ExternalValue& e = parts_.externals[i];
    TL_ASSIGN_OR_RETURN(Tensor t, external_tensor(args, e));
    if (!e.is_input) continue;
    bool same = e.bound_rank == t.dim();
    for (size_t d = 0; d < t.dim(); ++d) {
      same = same && e.bound_dims[d] == static_cast<size_t>(t.size(d));
      e.bound_dims[d] = static_cast<size_t>(t.size(d));
    }
    e.bound_rank = static_cast<uint32_t>(t.dim());
    reshape = reshape || !same;
  }
  if (reshape) {
    TL_RETURN_IF_ERROR(check_input_shapes(parts_.externals, parts_.num_externals));
    TL_RETURN_IF_ERROR(reshape_all(args));
  }
  for (uint32_t i = 0; i < parts_.num_xnn_stages; ++i) {
    XnnStage& stage = parts_.xnn_stages[i];
    bool setup = reshape;
    for (uint32_t k = 0; k < stage.num_externals; ++k) {
      void* data = data_of(args, stage.values[k]);
      setup = setup || stage.bindings[k].data != data;
      stage.bindings[k].data = data;
    }
    if (!setup) continue;
    const xnn_status s = xnn_setup_runtime_v2(stage.runtime, stage.num_externals, stage.bindings);
    if (s != xnn_status_success) return internal_error(s, "setup");
  }
  prepared_ = true;
  return Error::kOk;
}

Status StagedExecutor::run_conv(Span<EValue*> args, const ConvStage& conv, EventTracer* tracer,
                                uint32_t nth) {
  const ValueShape in = shape_of(args, conv.input);
  const ValueShape out = shape_of(args, conv.output);
  optimized::Conv2dProblem p;
  p.geometry = conv.window;
  p.geometry.batch = static_cast<int64_t>(in.dims[0]);
  p.geometry.in_h = static_cast<int64_t>(in.dims[1]);
  p.geometry.in_w = static_cast<int64_t>(in.dims[2]);
  p.geometry.out_h = static_cast<int64_t>(out.dims[1]);
  p.geometry.out_w = static_cast<int64_t>(out.dims[2]);
  p.layout = optimized::ConvLayout::kNhwc;
  p.input = static_cast<const float*>(data_of(args, conv.input));
  p.weight = conv.weight;
  p.bias = conv.bias;
  p.output = static_cast<float*>(data_of(args, conv.output));
  p.columns = parts_.columns;
  p.workspace = parts_.gemm;
  p.weight_amx_split = conv.amx_filter;
  p.output_min = conv.output_min;
  p.output_max = conv.output_max;
  const uint64_t start_ns = tracer != nullptr ? tl_platform_monotonic_ns() : 0;
  // Shapes may have shrunk since load: Winograd only where it still pays.
  const bool winograd = conv.winograd_filter != nullptr &&
                        optimized::winograd_f2x3_preferred(p.geometry) &&
                        optimized::winograd_f2x3_scratch_floats(p.geometry) <= parts_.winograd_floats;
  Status status = winograd ? optimized::winograd_f2x3_conv2d(p, conv.winograd_filter,
                                                             parts_.winograd_scratch)
                           : optimized::conv2d(p);
  if (!status.ok()) return status.with_context("XNNPACK node %u (conv2d)", conv.node);
  if (tracer != nullptr) {
    // Named like XNNPACK's own operators, numbered in run order.
    char name[64];
    std::snprintf(name, sizeof(name), "Convolution (NHWC, F32) %s #%u",
                  winograd ? "conv2d Winograd" : "conv2d", nth);
    tracer->log_profiling_delegate(name, -1, start_ns, tl_platform_monotonic_ns(), nullptr, 0);
  }
  return Error::kOk;
}

namespace {

struct DepthwiseJob {
  DepthwiseQs8Shape shape;
  const DepthwiseStage* stage;
  const int8_t* in;
  int8_t* out;
};

}  // namespace

void StagedExecutor::run_depthwise(Span<EValue*> args, const DepthwiseStage& dw,
                                   EventTracer* tracer, uint32_t nth) {
  const ValueShape in = shape_of(args, dw.input);
  const ValueShape out = shape_of(args, dw.output);
  DepthwiseJob job{dw.window, &dw, static_cast<const int8_t*>(data_of(args, dw.input)),
                   static_cast<int8_t*>(data_of(args, dw.output))};
  job.shape.batch = in.dims[0];
  job.shape.in_h = in.dims[1];
  job.shape.in_w = in.dims[2];
  job.shape.out_h = out.dims[1];
  job.shape.out_w = out.dims[2];
  const uint64_t start_ns = tracer != nullptr ? tl_platform_monotonic_ns() : 0;
  const size_t rows = job.shape.batch * job.shape.out_h;
  auto run_row = [](void* context, size_t row) {
    const auto* j = static_cast<const DepthwiseJob*>(context);
    depthwise_qs8_rows(j->shape, j->stage->quant, j->stage->packed, j->in, j->out, row, row + 1);
  };
  if (parts_.pool != nullptr) {
    threadpool::yield_to_native_pool();
    pthreadpool_parallelize_1d(parts_.pool, run_row, &job, rows, 0);
  } else {
    depthwise_qs8_rows(job.shape, dw.quant, dw.packed, job.in, job.out, 0, rows);
  }
  if (tracer != nullptr) {
    char name[64];
    std::snprintf(name, sizeof(name), "Convolution (NHWC, QC8) DWConv depthwise_qs8 #%u", nth);
    tracer->log_profiling_delegate(name, -1, start_ns, tl_platform_monotonic_ns(), nullptr, 0);
  }
}

namespace {

struct BlockJob {
  optimized::InvertedResidualShape shape;
  const InvertedResidualStage* stage;
  const float* in;
  float* out;
  float* scratch;
  size_t band_floats, rows, bands;
};

}  // namespace

void StagedExecutor::run_block(Span<EValue*> args, const InvertedResidualStage& block,
                               EventTracer* tracer, uint32_t nth) {
  BlockJob job{call_shape(block, shape_of(args, block.input)),
               &block,
               static_cast<const float*>(data_of(args, block.input)),
               static_cast<float*>(data_of(args, block.output)),
               parts_.block_scratch,
               parts_.block_band_floats,
               0,
               1};
  job.rows = job.shape.batch * job.shape.out_h();
  // One band per thread: each band computes two expanded rows twice (its
  // top halo), so more bands cost more.
  job.bands = std::min(parts_.block_bands, job.rows);
  const uint64_t start_ns = tracer != nullptr ? tl_platform_monotonic_ns() : 0;
  auto run_band = [](void* context, size_t band) {
    const auto* j = static_cast<const BlockJob*>(context);
    optimized::inverted_residual_rows(j->shape, j->stage->isa, j->stage->packed, j->in, j->out,
                                      j->rows * band / j->bands, j->rows * (band + 1) / j->bands,
                                      j->scratch + band * j->band_floats);
  };
  if (parts_.pool != nullptr && job.bands > 1) {
    threadpool::yield_to_native_pool();
    pthreadpool_parallelize_1d(parts_.pool, run_band, &job, job.bands, 0);
  } else {
    job.bands = 1;
    run_band(&job, 0);
  }
  if (tracer != nullptr) {
    char name[64];
    std::snprintf(name, sizeof(name), "Inverted residual (NHWC, F32) fused %s #%u",
                  optimized::to_string(block.isa), nth);
    tracer->log_profiling_delegate(name, -1, start_ns, tl_platform_monotonic_ns(), nullptr, 0);
  }
}

size_t StagedExecutor::linear_rows(Span<EValue*> args, const LinearStage& linear) const {
  const ValueShape in = shape_of(args, linear.input);
  size_t rows = 1;
  for (uint32_t d = 0; d + 1 < in.rank; ++d) rows *= in.dims[d];
  return rows;
}

Status StagedExecutor::run_linear(Span<EValue*> args, LinearStage& linear, size_t rows,
                                  EventTracer* tracer, uint32_t nth, bool* on_xnnpack) {
  const uint64_t start_ns = tracer != nullptr ? tl_platform_monotonic_ns() : 0;
  if (rows == 1 && parts_.pool != nullptr) threadpool::yield_to_native_pool();
  TL_RETURN_IF_ERROR(run_linear_stage(linear, static_cast<const float*>(data_of(args, linear.input)),
                                      rows, static_cast<float*>(data_of(args, linear.output)),
                                      parts_.linear_scratch, parts_.linear_scratch_bytes,
                                      on_xnnpack));
  if (tracer != nullptr) {
    char name[80];
    std::snprintf(name, sizeof(name), "Fully Connected (NC, QD8, F32, QB4W) %s#%u",
                  *on_xnnpack ? "" : "linear_8da4w ", nth);
    tracer->log_profiling_delegate(name, -1, start_ns, tl_platform_monotonic_ns(), nullptr, 0);
  }
  return Error::kOk;
}

Status StagedExecutor::execute(Span<EValue*> args, EventTracer* tracer) {
  TL_RETURN_IF_ERROR(check_pool_unchanged(parts_.pool));
  Status status = bind_and_prepare(args);
  if (!status.ok()) {
    invalidate();
    return status;
  }
  uint32_t nth_conv = 0;
  uint32_t nth_linear = 0;
  uint32_t nth_depthwise = 0;
  uint32_t nth_block = 0;
  bool after_xnnpack = false;
  for (uint32_t i = 0; i < parts_.plan.num_stages; ++i) {
    const StageRef ref = parts_.order[i];
    if (ref.kind == StageKind::kSkip || ref.kind == StageKind::kFolded) continue;
    if (ref.kind == StageKind::kDepthwiseQs8) {  // On pthreadpool, like XNNPACK's stages.
      run_depthwise(args, parts_.depthwise[ref.index], tracer, ++nth_depthwise);
      after_xnnpack = true;
      continue;
    }
    if (ref.kind == StageKind::kInvertedResidual) {  // On pthreadpool too.
      run_block(args, parts_.blocks[ref.index], tracer, ++nth_block);
      after_xnnpack = true;
      continue;
    }
    if (ref.kind == StageKind::kConv2d) {
      // On pthreadpool too (conv2d's parallel_for goes there in the scope):
      // its workers, spinning after XNNPACK's last operator, take the
      // chunks, and no pool hands the cores to the other.
      threadpool::NativePoolScope on_native(parts_.pool);
      if (parts_.pool != nullptr) threadpool::yield_to_native_pool();
      TL_RETURN_IF_ERROR(run_conv(args, parts_.convs[ref.index], tracer, ++nth_conv));
      after_xnnpack = true;
      continue;
    }
    if (ref.kind == StageKind::kLinear8da4w) {
      // Each pool's workers spin for a while after a job; the other pool's
      // would then wait for a core (with 2 cores, for a scheduler tick).
      // linear_8da4w stays on the WorkPool, whose caller never waits for a
      // worker that has not started (pthreadpool's does, on a busy machine).
      // A linear small enough for the calling thread alone (decode's) needs
      // no core back, and parking costs a pthreadpool job.
      LinearStage& linear = parts_.linears[ref.index];
      const size_t rows = linear_rows(args, linear);
      if (parts_.pool != nullptr && after_xnnpack &&
          quantized::linear_runs_parallel(static_cast<int64_t>(rows), linear.k, linear.n)) {
        threadpool::park_native_pool();
        after_xnnpack = false;
      }
      bool on_xnnpack = false;
      TL_RETURN_IF_ERROR(run_linear(args, linear, rows, tracer, ++nth_linear, &on_xnnpack));
      after_xnnpack = after_xnnpack || on_xnnpack;
      continue;
    }
    after_xnnpack = true;
    XnnStage& stage = parts_.xnn_stages[ref.index];
    const bool profile = tracer != nullptr && stage.profiler.enabled();
    const uint64_t start_ns = profile ? tl_platform_monotonic_ns() : 0;
    if (parts_.pool != nullptr) threadpool::yield_to_native_pool();
    const xnn_status s = xnn_invoke_runtime(stage.runtime);
    if (s != xnn_status_success) return internal_error(s, "invoke");
    if (profile) stage.profiler.report(stage.runtime, tracer, start_ns);
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
