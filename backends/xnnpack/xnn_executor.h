// XnnExecutor: one initialised XNNPACK delegate. Owns the XNNPACK runtime
// and the payload (XNNPACK reads non-packed constants, such as a PReLU
// slope or a constant add operand, by pointer for the runtime's life), and
// binds the DelegateCall's tensors on every execute.
#pragma once

#include <xnnpack.h>

#include <cstdint>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/packed_weights_cache.h"
#include "backends/xnnpack/xnn_delegate.h"
#include "backends/xnnpack/xnn_profiler.h"
#include "runtime/core/evalue.h"
#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {
namespace xnnpack {

/// The tensor dtype an external value of datatype `t` binds to; false for
/// datatypes that cannot be external (quantized weights, qdint8, ...).
bool external_scalar_type(xnn_datatype t, ScalarType* out);

/// args[e.external_id] as a tensor, checked against `e`: a tensor of its
/// datatype in contiguous dim order and, for an input, of its rank with no
/// dim above the declared one. Errors: kInvalidArgument (missing, rank,
/// size), kInvalidType (not a tensor, dtype, dim order), kInternal.
Result<Tensor> external_tensor(Span<EValue*> args, const ExternalValue& e);

/// A failed XNNPACK step at run time, as kInternal naming the step.
Status internal_error(xnn_status s, const char* step);

/// kInvalidState when the thread pool was resized since runtimes were made
/// with `pool` (the resize freed it); null (one thread) always passes.
Status check_pool_unchanged(pthreadpool_t pool);

class XnnExecutor : public XnnDelegate {
 public:
  /// Takes ownership of `runtime` and `payload`, and of one runtime
  /// reference on `cache` (released after the runtime is deleted; the cache
  /// must outlive this). `externals` (inputs first, then outputs, each by
  /// ascending external id) and `bindings` (as many entries) live in the
  /// delegate's allocator and must outlive this.
  XnnExecutor(xnn_runtime_t runtime, PackedWeightsCache* cache, pthreadpool_t pool,
              FreeableBuffer payload, ExternalValue* externals, xnn_external_value* bindings,
              uint32_t num_externals);
  ~XnnExecutor() override;
  XnnExecutor(const XnnExecutor&) = delete;
  XnnExecutor& operator=(const XnnExecutor&) = delete;

  /// Binds args[external_id] for each external value, reshapes the runtime
  /// to the inputs' shapes, resizes the outputs, and runs. Reshape and setup
  /// are skipped when shapes and data pointers match the previous call
  /// (the usual case for a planned Method). Errors:
  /// kInvalidArgument (missing argument, rank), kInvalidType (not a tensor,
  /// wrong dtype, not contiguous), kInvalidState (thread pool replaced since
  /// init), kInternal (XNNPACK refused a step).
  /// With a `tracer` (may be null) and a profiler set, each XNNPACK
  /// operator's time is reported to it as a delegate event.
  Status execute(Span<EValue*> args, EventTracer* tracer = nullptr) override;

  /// Per-operator profiling; the runtime was created with
  /// XNN_FLAG_BASIC_PROFILING.
  void set_profiler(const XnnProfiler& profiler) { profiler_ = profiler; }

 private:
  xnn_runtime_t runtime_;
  PackedWeightsCache* cache_;
  pthreadpool_t pool_;
  FreeableBuffer payload_;
  // Everything but invoke: bind, reshape and set up as needed.
  Status bind_and_prepare(Span<EValue*> args);
  // Forgets the bound shapes and pointers so the next call starts afresh.
  void invalidate();

  ExternalValue* externals_;
  xnn_external_value* bindings_;
  uint32_t num_externals_;
  bool prepared_ = false;  // Reshaped and set up for the bound shapes/pointers.
  XnnProfiler profiler_;
};

}  // namespace xnnpack
}  // namespace torchlight
