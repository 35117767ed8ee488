#include "backends/xnnpack/staged_builder.h"

#include <pthreadpool.h>

#include <algorithm>
#include <memory>
#include <new>
#include <utility>

#include "backends/xnnpack/node_definition.h"
#include "backends/xnnpack/staged_executor.h"
#include "backends/xnnpack/value_definition.h"
#include "backends/xnnpack/value_view.h"
#include "kernels/optimized/conv/winograd_f2x3.h"
#include "extension/threadpool/threadpool.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

struct SubgraphDeleter {
  void operator()(xnn_subgraph* s) const { xnn_delete_subgraph(s); }
};

constexpr size_t kScratchAlignment = 64;

// The convolution of node `node` (runs_on_conv2d holds), with its largest
// scratch needs from the declared input shape and, where Winograd pays at
// that shape, its transformed filter. Errors: kDelegateMemoryAllocationFailed.
Result<ConvStage> make_conv_stage(const DefinitionContext& ctx, uint32_t node,
                                  StagedParts* parts) {
  const fb_xnnpack::XNode* n = ctx.graph->xnodes()->Get(node);
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(n->xnode_union());
  const OutputRange range = output_range(n);
  ConvStage c;
  c.node = node;
  c.input = t->input1_id();
  c.output = t->output_id();
  optimized::Conv2dGeometry& w = c.window;
  w.in_channels = t->group_input_channels();
  w.out_channels = t->group_output_channels();
  w.kernel_h = t->kernel_height();
  w.kernel_w = t->kernel_width();
  w.stride_h = t->subsampling_height();
  w.stride_w = t->subsampling_width();
  w.pad_h = t->padding_top();
  w.pad_w = t->padding_left();
  w.dilation_h = t->dilation_height();
  w.dilation_w = t->dilation_width();
  c.weight = static_cast<const float*>(ctx.constant_data[t->filter_id()]);
  c.bias = t->bias_id() == XNN_INVALID_VALUE_ID
               ? nullptr
               : static_cast<const float*>(ctx.constant_data[t->bias_id()]);
  c.output_min = range.min;
  c.output_max = range.max;
  optimized::Conv2dGeometry declared = w;
  const DeclaredShape& in = ctx.shapes[c.input];
  declared.batch = static_cast<int64_t>(in.dims[0]);
  declared.in_h = static_cast<int64_t>(in.dims[1]);
  declared.in_w = static_cast<int64_t>(in.dims[2]);
  declared.out_h = optimized::conv2d_output_size(declared.in_h, w.kernel_h, w.stride_h, w.pad_h,
                                                 w.dilation_h);
  declared.out_w = optimized::conv2d_output_size(declared.in_w, w.kernel_w, w.stride_w, w.pad_w,
                                                 w.dilation_w);
  parts->columns_floats =
      std::max(parts->columns_floats, optimized::conv2d_columns_floats(declared));
  c.amx_filter = nullptr;
  const int64_t patch = w.patch();
  if (optimized::active_gemm_isa() == optimized::GemmIsa::kAmx) {
    // Split once here (1.5x the filter's bytes) instead of on every call.
    const size_t bytes = optimized::gemm_amx_split_bytes(w.out_channels, patch);
    void* split = ctx.allocator->allocate(bytes, 64);
    TL_CHECK_OR_RETURN(split != nullptr, Error::kDelegateMemoryAllocationFailed,
                       "out of memory for XNNPACK node %u's AMX filter (%zu bytes)", node, bytes);
    if (optimized::gemm_amx_split_weight(c.weight, patch, w.out_channels, patch, split)) {
      c.amx_filter = split;
    }
  }
  c.winograd_filter = nullptr;
  // Winograd's scratch (16 points per 2x2 tile of input and output
  // channels: about 4x the two activations) is held to the activation
  // budget as the unfolding is (stage_plan.cpp); beyond it im2col runs.
  if (optimized::winograd_f2x3_preferred(declared) &&
      static_cast<double>(optimized::winograd_f2x3_scratch_floats(declared)) * sizeof(float) <=
          static_cast<double>(ctx.max_value_bytes)) {
    const size_t floats = optimized::winograd_f2x3_filter_floats(w.in_channels, w.out_channels);
    auto* filter = static_cast<float*>(ctx.allocator->allocate(floats * sizeof(float), 64));
    TL_CHECK_OR_RETURN(filter != nullptr, Error::kDelegateMemoryAllocationFailed,
                       "out of memory for XNNPACK node %u's Winograd filter (%zu floats)", node,
                       floats);
    optimized::winograd_f2x3_transform_filter(c.weight, w.in_channels, w.out_channels, filter);
    c.winograd_filter = filter;
    parts->winograd_floats =
        std::max(parts->winograd_floats, optimized::winograd_f2x3_scratch_floats(declared));
  }
  return c;
}

// Defines stage `stage` on a subgraph of its own and builds its runtime;
// `earlier` are the profilers of the XNNPACK stages before it.
Status build_xnn_stage(const StagedBuild& b, uint32_t stage, uint32_t* flags, uint32_t* ids,
                       uint32_t* producers, xnn_workspace_t workspace,
                       Span<const XnnProfiler* const> earlier, XnnStage* out) {
  DefinitionContext& ctx = *b.ctx;
  const Stage& s = b.plan->stages[stage];
  stage_value_flags(ctx, *b.reads, *b.plan, stage, flags, ids);
  xnn_subgraph_t raw = nullptr;
  xnn_status status = xnn_create_subgraph(b.plan->num_external_ids, 0, &raw);
  TL_CHECK_OR_RETURN(status == xnn_status_success, Error::kDelegateMemoryAllocationFailed,
                     "XNNPACK could not create a subgraph (status %d)",
                     static_cast<int>(status));
  std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph(raw);

  // The whole graph's definition was checked; this stage reuses the
  // context with its own subgraph, ids, writers and external flags.
  DefinitionContext stage_ctx = ctx;
  stage_ctx.subgraph = subgraph.get();
  stage_ctx.producers = producers;
  stage_ctx.consumed = nullptr;
  stage_ctx.reads = nullptr;
  stage_ctx.value_flags = flags;
  stage_ctx.external_ids = ids;
  stage_ctx.num_constants = 0;
  stage_ctx.payload_external_ids = nullptr;
  std::fill(stage_ctx.id_map, stage_ctx.id_map + ctx.num_values, kUndefinedValue);
  std::fill(producers, producers + ctx.num_values, kNoProducer);
  uint32_t unused = 0;
  TL_RETURN_IF_ERROR(define_values(stage_ctx, nullptr, &unused));
  TL_RETURN_IF_ERROR(define_node_range(stage_ctx, s.begin, s.end));

  uint32_t count = 0;
  for (uint32_t v = 0; v < ctx.num_values; ++v) count += flags[v] != kNotInStage && flags[v] != 0;
  out->values = ctx.allocator->allocate_array<uint32_t>(count);
  out->is_output = ctx.allocator->allocate_array<uint8_t>(count);
  out->bindings = ctx.allocator->allocate_array<xnn_external_value>(count);
  TL_CHECK_OR_RETURN(out->values != nullptr && out->is_output != nullptr &&
                         out->bindings != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory for XNNPACK stage %u's %u external values", stage, count);
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    if (flags[v] == kNotInStage || flags[v] == 0) continue;
    const uint32_t k = out->num_externals++;
    out->values[k] = v;
    out->is_output[k] = flags[v] == kExternalOutput;
    out->bindings[k] = {ids[v], nullptr};
  }

  if (b.cache != nullptr) {
    b.cache->begin_runtime({stage_ctx.constants, stage_ctx.num_constants});
    status = xnn_create_runtime_v4(subgraph.get(), b.cache->provider(), workspace, b.pool,
                                   b.runtime_flags, &out->runtime);
    b.cache->end_runtime(status == xnn_status_success);
  } else {
    status = xnn_create_runtime_v4(subgraph.get(), nullptr, workspace, b.pool, b.runtime_flags,
                                   &out->runtime);
  }
  if (status != xnn_status_success) out->runtime = nullptr;
  TL_CHECK_OR_RETURN(status == xnn_status_success, Error::kInvalidProgram,
                     "XNNPACK could not build a runtime for stage %u (nodes %u..%u; status %d)",
                     stage, s.begin, s.end - 1, static_cast<int>(status));
  if (b.profile) out->profiler.init(out->runtime, ctx.allocator, earlier);
  return Error::kOk;
}

}  // namespace

Result<XnnDelegate*> build_staged_delegate(const StagedBuild& b, FreeableBuffer* payload) {
  DefinitionContext& ctx = *b.ctx;
  MemoryAllocator* allocator = ctx.allocator;
  const StagePlan& plan = *b.plan;
  StagedParts parts;
  parts.plan = plan;
  parts.num_values = ctx.num_values;
  parts.externals = b.externals;
  parts.num_externals = b.num_externals;
  parts.cache = b.cache;
  parts.pool = b.pool;
  parts.num_xnn_stages = plan.num_xnn_stages;
  parts.order = allocator->allocate_array<StageRef>(plan.num_stages);
  parts.xnn_stages = allocator->allocate_array<XnnStage>(parts.num_xnn_stages + 1);
  parts.convs = allocator->allocate_array<ConvStage>(plan.num_convs + 1);
  parts.linears = allocator->allocate_array<LinearStage>(plan.num_linears + 1);
  parts.depthwise = allocator->allocate_array<DepthwiseStage>(plan.num_depthwise + 1);
  parts.blocks = allocator->allocate_array<InvertedResidualStage>(plan.num_blocks + 1);
  parts.shapes = allocator->allocate_array<ValueShape>(ctx.num_values);
  parts.arena = static_cast<uint8_t*>(
      allocator->allocate(plan.arena_bytes == 0 ? 1 : plan.arena_bytes, kScratchAlignment));
  void* executor_memory = allocator->allocate(sizeof(StagedExecutor), alignof(StagedExecutor));
  std::unique_ptr<uint32_t[]> flags(new (std::nothrow) uint32_t[ctx.num_values + 1]);
  std::unique_ptr<uint32_t[]> ids(new (std::nothrow) uint32_t[ctx.num_values + 1]);
  std::unique_ptr<uint32_t[]> producers(new (std::nothrow) uint32_t[ctx.num_values + 1]);
  TL_CHECK_OR_RETURN(parts.order != nullptr && parts.xnn_stages != nullptr &&
                         parts.convs != nullptr && parts.linears != nullptr &&
                         parts.depthwise != nullptr && parts.blocks != nullptr &&
                         parts.shapes != nullptr &&
                         parts.arena != nullptr && executor_memory != nullptr &&
                         flags != nullptr && ids != nullptr && producers != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory for an XNNPACK delegate of %u stages (arena %zu bytes)",
                     plan.num_stages, plan.arena_bytes);
  for (uint32_t i = 0; i < parts.num_xnn_stages; ++i) new (&parts.xnn_stages[i]) XnnStage();
  for (uint32_t i = 0; i < ctx.num_values; ++i) new (&parts.shapes[i]) ValueShape();

  const xnn_status ws = xnn_create_workspace(&parts.workspace);
  TL_CHECK_OR_RETURN(ws == xnn_status_success, Error::kDelegateMemoryAllocationFailed,
                     "XNNPACK could not create a workspace (status %d)", static_cast<int>(ws));

  // Convolutions and linears first: they read the whole graph's
  // definition, which the XNNPACK stages' definitions then overwrite.
  for (uint32_t i = 0; i < plan.num_stages; ++i) {
    const Stage& stage = plan.stages[i];
    if (stage.kind == StageKind::kConv2d) {
      parts.order[i] = {stage.kind, parts.num_convs};
      TL_ASSIGN_OR_RETURN(parts.convs[parts.num_convs], make_conv_stage(ctx, stage.begin, &parts));
      ++parts.num_convs;
    } else if (stage.kind == StageKind::kLinear8da4w) {
      parts.order[i] = {stage.kind, parts.num_linears};
      Result<LinearStage> linear = make_linear_stage(ctx, stage.begin, parts.workspace, b.pool);
      if (!linear.ok()) {
        StagedExecutor release_built(parts, FreeableBuffer());  // Frees runtimes and workspace.
        return linear.status();
      }
      parts.linears[parts.num_linears] = linear.get();
      parts.linear_scratch_bytes =
          std::max(parts.linear_scratch_bytes, parts.linears[parts.num_linears].scratch_bytes);
      ++parts.num_linears;
    } else if (stage.kind == StageKind::kDepthwiseQs8) {
      parts.order[i] = {stage.kind, parts.num_depthwise};
      Result<DepthwiseStage> dw = make_depthwise_stage(ctx, stage.begin, stage.folded);
      if (!dw.ok()) {
        StagedExecutor release_built(parts, FreeableBuffer());  // Frees runtimes and workspace.
        return dw.status();
      }
      parts.depthwise[parts.num_depthwise++] = dw.get();
    } else if (stage.kind == StageKind::kInvertedResidual) {
      parts.order[i] = {stage.kind, parts.num_blocks};
      InvertedResidualMatch match;
      match_inverted_residual(ctx, *b.reads, stage.begin,
                              conv_routing_for(optimized::active_gemm_isa()), &match);
      Result<InvertedResidualStage> block = make_inverted_residual_stage(ctx, match);
      if (!block.ok()) {
        StagedExecutor release_built(parts, FreeableBuffer());  // Frees runtimes and workspace.
        return block.status();
      }
      parts.blocks[parts.num_blocks++] = block.get();
      parts.block_band_floats = std::max(parts.block_band_floats, block->band_floats);
    } else if (stage.kind == StageKind::kSkip || stage.kind == StageKind::kFolded) {
      parts.order[i] = {stage.kind, 0};
    }
  }
  parts.linear_scratch = allocator->allocate(parts.linear_scratch_bytes + 1, kScratchAlignment);
  parts.winograd_scratch = static_cast<float*>(
      allocator->allocate(parts.winograd_floats * sizeof(float) + 1, kScratchAlignment));
  parts.columns = static_cast<float*>(
      allocator->allocate(parts.columns_floats * sizeof(float) + 1, kScratchAlignment));
  parts.block_bands = b.pool != nullptr ? std::max<size_t>(1, pthreadpool_get_threads_count(b.pool)) : 1;
  parts.block_scratch = static_cast<float*>(allocator->allocate(
      parts.block_band_floats * parts.block_bands * sizeof(float) + 1, kScratchAlignment));
  const size_t gemm_bytes = optimized::gemm_workspace_bytes(threadpool::num_threads());
  void* gemm_memory = allocator->allocate(gemm_bytes, kScratchAlignment);
  TL_CHECK_OR_RETURN(parts.columns != nullptr && parts.winograd_scratch != nullptr &&
                         parts.block_scratch != nullptr &&
                         gemm_memory != nullptr && parts.linear_scratch != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory for convolution scratch (%zu floats) in an XNNPACK delegate",
                     parts.columns_floats);
  parts.gemm = optimized::make_gemm_workspace(gemm_memory, gemm_bytes);

  std::unique_ptr<const XnnProfiler*[]> profilers(
      new (std::nothrow) const XnnProfiler*[parts.num_xnn_stages + 1]);
  TL_CHECK_OR_RETURN(profilers != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory for %u XNNPACK stages", parts.num_xnn_stages);
  uint32_t built = 0;
  for (uint32_t i = 0; i < plan.num_stages; ++i) {
    if (plan.stages[i].kind != StageKind::kXnnpack) continue;
    parts.order[i] = {StageKind::kXnnpack, built};
    Status status = build_xnn_stage(b, i, flags.get(), ids.get(), producers.get(), parts.workspace,
                                    {profilers.get(), built}, &parts.xnn_stages[built]);
    profilers[built] = &parts.xnn_stages[built].profiler;
    ++built;
    if (!status.ok()) {
      StagedExecutor release_built(parts, FreeableBuffer());  // Frees runtimes and workspace.
      return status;
    }
  }
  auto* executor = new (executor_memory) StagedExecutor(parts, std::move(*payload));
  return static_cast<XnnDelegate*>(executor);
}

}  // namespace xnnpack
}  // namespace torchlight
