// Builds a StagedExecutor from a payload whose whole graph was defined
// (and so checked) once: each XNNPACK stage is defined again on its own
// subgraph and gets its own runtime; each convolution stage takes its
// window, filter and bias from the payload.
#pragma once

#include <xnnpack.h>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/packed_weights_cache.h"
#include "backends/xnnpack/stage_plan.h"
#include "backends/xnnpack/xnn_delegate.h"
#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"

namespace torchlight {
namespace xnnpack {

struct StagedBuild {
  DefinitionContext* ctx;  // After the whole graph's definition; reused per stage.
  const ReadLog* reads;
  const StagePlan* plan;
  ExternalValue* externals;  // The payload's, inputs first; the executor keeps them.
  uint32_t num_externals;
  PackedWeightsCache* cache;  // May be null.
  pthreadpool_t pool;
  uint32_t runtime_flags;  // XNN_FLAG_BASIC_PROFILING when traced.
  bool profile;
};

/// Takes the payload on success. Errors: kDelegateMemoryAllocationFailed,
/// kInvalidProgram when XNNPACK refuses a stage's subgraph.
Result<XnnDelegate*> build_staged_delegate(const StagedBuild& build, FreeableBuffer* payload);

}  // namespace xnnpack
}  // namespace torchlight
