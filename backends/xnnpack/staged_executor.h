// StagedExecutor: a delegate whose payload stage_plan.h split. XNNPACK
// stages (one runtime each, sharing one XNNPACK workspace), convolutions on
// conv2d, 8da4w linears on linear_8da4w, int8 depthwise convolutions on
// depthwise_qs8 and fp32 inverted-residual blocks on the fused kernel run in
// payload order. Values crossing stages live in the arena
// or in the call's tensors. Shapes flow stage by stage, so dynamic inputs
// work as they do with one runtime.
#pragma once

#include <xnnpack.h>

#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/depthwise_stage.h"
#include "backends/xnnpack/inverted_residual_stage.h"
#include "backends/xnnpack/linear_stage.h"
#include "backends/xnnpack/packed_weights_cache.h"
#include "backends/xnnpack/stage_plan.h"
#include "backends/xnnpack/xnn_delegate.h"
#include "backends/xnnpack/xnn_profiler.h"
#include "kernels/optimized/conv/conv2d.h"
#include "runtime/core/freeable_buffer.h"

namespace torchlight {
namespace xnnpack {

/// A convolution conv2d runs (NHWC input, OHWI filter, as XNNPACK's).
struct ConvStage {
  uint32_t node;    // For messages and profiling.
  uint32_t input;   // Payload value ids.
  uint32_t output;
  optimized::Conv2dGeometry window;  // Channels, kernel, stride, padding, dilation.
  const float* weight;
  const float* bias;  // May be null.
  // The filter Winograd-transformed (winograd_f2x3.h), or null when the
  // declared shape does not call for it.
  const float* winograd_filter;
  // The filter split for gemm's AMX path (gemm_amx_split_weight), or null
  // (no AMX, or inf/NaN in it).
  const void* amx_filter;
  float output_min;
  float output_max;
};

/// One XNNPACK stage: its runtime and its external values.
struct XnnStage {
  xnn_runtime_t runtime = nullptr;
  uint32_t num_externals = 0;
  uint32_t* values = nullptr;             // Payload value id of each external.
  uint8_t* is_output = nullptr;           // Whether the stage writes it.
  xnn_external_value* bindings = nullptr;  // Ids and data, for setup.
  XnnProfiler profiler;
};

/// Stage i of the plan: its kind, and its index in that kind's list.
struct StageRef {
  StageKind kind;
  uint32_t index;
};

/// A value's current shape (arena values; arguments keep theirs).
struct ValueShape {
  uint32_t rank = 0;
  size_t dims[XNN_MAX_TENSOR_DIMS] = {};
};

/// Everything the builder (staged_builder.h) hands over; arrays live in the
/// delegate's allocator, runtimes and the workspace become the executor's.
struct StagedParts {
  StagePlan plan;
  uint32_t num_values = 0;
  StageRef* order = nullptr;  // plan.num_stages entries.
  XnnStage* xnn_stages = nullptr;
  uint32_t num_xnn_stages = 0;
  ConvStage* convs = nullptr;
  uint32_t num_convs = 0;
  LinearStage* linears = nullptr;
  uint32_t num_linears = 0;
  DepthwiseStage* depthwise = nullptr;
  uint32_t num_depthwise = 0;
  InvertedResidualStage* blocks = nullptr;
  uint32_t num_blocks = 0;
  // Per band of a block's rows: block_band_floats each (the largest
  // block's), block_bands of them (the pool's threads).
  float* block_scratch = nullptr;
  size_t block_band_floats = 0;
  size_t block_bands = 1;
  void* linear_scratch = nullptr;  // For the linear needing the most.
  size_t linear_scratch_bytes = 0;
  ExternalValue* externals = nullptr;  // The payload's, inputs first.
  uint32_t num_externals = 0;
  ValueShape* shapes = nullptr;  // num_values entries.
  uint8_t* arena = nullptr;
  float* columns = nullptr;  // Unfolding scratch for the largest convolution.
  size_t columns_floats = 0;
  float* winograd_scratch = nullptr;  // For the largest Winograd convolution.
  size_t winograd_floats = 0;
  optimized::GemmWorkspace gemm;
  xnn_workspace_t workspace = nullptr;
  PackedWeightsCache* cache = nullptr;  // One runtime reference per XNNPACK stage.
  pthreadpool_t pool = nullptr;
};

class StagedExecutor : public XnnDelegate {
 public:
  StagedExecutor(StagedParts parts, FreeableBuffer payload);
  ~StagedExecutor() override;
  StagedExecutor(const StagedExecutor&) = delete;
  StagedExecutor& operator=(const StagedExecutor&) = delete;

  /// As XnnExecutor::execute; also kInvalidArgument when a convolution's
  /// input does not fit its window, a linear's input rows are not K long, or
  /// a crossing value outgrows its declared shape.
  Status execute(Span<EValue*> args, EventTracer* tracer) override;

 private:
  // Checks the call's tensors; reshapes every stage when an input's shape
  // changed, and sets up every stage whose pointers changed.
  Status bind_and_prepare(Span<EValue*> args);
  Status reshape_all(Span<EValue*> args);
  Status reshape_xnn_stage(Span<EValue*> args, XnnStage& stage);
  Status reshape_conv(Span<EValue*> args, const ConvStage& conv);
  Status reshape_linear(Span<EValue*> args, const LinearStage& linear);
  Status reshape_depthwise(Span<EValue*> args, const DepthwiseStage& dw);
  Status reshape_block(Span<EValue*> args, const InvertedResidualStage& block);
  // Records a stage output's new shape: resizes the argument or checks the
  // arena room.
  Status set_output_shape(Span<EValue*> args, uint32_t value, uint32_t rank, const size_t* dims);
  ValueShape shape_of(Span<EValue*> args, uint32_t value) const;
  void* data_of(Span<EValue*> args, uint32_t value) const;
  Status run_conv(Span<EValue*> args, const ConvStage& conv, EventTracer* tracer, uint32_t nth);
  // The rows of a linear's input: every dim but the last.
  size_t linear_rows(Span<EValue*> args, const LinearStage& linear) const;
  // Sets *on_xnnpack when the linear's one-row XNNPACK runtime ran it.
  Status run_linear(Span<EValue*> args, LinearStage& linear, size_t rows, EventTracer* tracer,
                    uint32_t nth, bool* on_xnnpack);
  // On pthreadpool's threads, as XNNPACK's operators run.
  void run_depthwise(Span<EValue*> args, const DepthwiseStage& dw, EventTracer* tracer,
                     uint32_t nth);
  // Bands of output rows on pthreadpool's threads, one scratch each.
  void run_block(Span<EValue*> args, const InvertedResidualStage& block, EventTracer* tracer,
                 uint32_t nth);
  void invalidate();

  StagedParts parts_;
  FreeableBuffer payload_;
  bool prepared_ = false;
};

}  // namespace xnnpack
}  // namespace torchlight
