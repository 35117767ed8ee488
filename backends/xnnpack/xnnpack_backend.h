// XnnpackBackend: runs ExecuTorch's XNNPACK-delegated subgraphs (backend id
// "XnnpackBackend") on the system XNNPACK library. Reads upstream's payload
// format: the XH00 header, the XN01/XN00 flatbuffer (schema/xnnpack.fbs) and
// the inline constant region; see shared/spec/xnnpack-format.md.
//
// init() validates the untrusted payload, builds the XNNPACK subgraph and
// runtime once (on the process-wide pthreadpool of extension/threadpool) and
// keeps the payload; execute() binds the DelegateCall's tensors, reshapes for
// the inputs' current shapes and runs.
#pragma once

#include <cstdint>

#include "runtime/backend/backend_interface.h"
#include "runtime/backend/backend_registry.h"

namespace torchlight {
namespace xnnpack {
class PackedWeightsCache;
}

/// The id programs name this backend by (BackendDelegate.id).
inline constexpr const char* kXnnpackBackendId = "XnnpackBackend";

/// Default bound on the bytes one delegate's non-constant values declare
/// (summed over their declared shapes), far above any real model's.
inline constexpr uint64_t kXnnpackDefaultMaxValueBytes = uint64_t{8} << 30;

/// Default bound on the multiply-adds one execute of a delegate does at its
/// declared shapes (2^46, 7e13: an 8B-parameter LLM's prefill of 2,048
/// tokens is 1.6e13), so a payload cannot ask for hours of work.
inline constexpr uint64_t kXnnpackDefaultMaxMultiplyAdds = uint64_t{1} << 46;

class XnnpackBackend final : public BackendInterface {
 public:
  /// `max_value_bytes`: init refuses payloads whose non-constant values
  /// declare more bytes in total (XNNPACK sizes its workspace from them),
  /// or whose convolutions' indirection buffers and attention scores would
  /// (node_bounds.h). `max_multiply_adds`: init refuses payloads asking for
  /// more per execute at their declared shapes.
  /// Delegates this backend loads share one packed-weights cache
  /// (packed_weights_cache.h): identical weights are packed and kept once.
  explicit XnnpackBackend(uint64_t max_value_bytes = kXnnpackDefaultMaxValueBytes,
                          uint64_t max_multiply_adds = kXnnpackDefaultMaxMultiplyAdds);
  /// Frees the weights cache unless a delegate it loaded is still alive
  /// (then the cache is left for that delegate to release into).
  ~XnnpackBackend() override;
  XnnpackBackend(const XnnpackBackend&) = delete;
  XnnpackBackend& operator=(const XnnpackBackend&) = delete;

  /// The shared weights cache (for tests: entries(), hits()); null when it
  /// could not be allocated, in which case delegates pack privately.
  xnnpack::PackedWeightsCache* weights_cache() const { return weights_cache_; }

  /// Whether XNNPACK initialises on this CPU.
  bool is_available() const override;

  /// Errors: kDelegateInvalidCompatibility (payload too short, unknown
  /// flatbuffer identifier), kInvalidProgram (anything inconsistent in the
  /// payload, or a graph XNNPACK refuses, naming the value or node; values
  /// declaring more than max_value_bytes in total; a node whose output
  /// outgrows its declared value, or the budgets of node_bounds.h),
  /// kNotSupported (features this runtime lacks, such as named-data
  /// constants), kDelegateMemoryAllocationFailed.
  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpec> compile_specs) const override;

  /// Errors: see XnnExecutor::execute (xnn_executor.h).
  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override;

  void destroy(DelegateHandle* handle) const override;

 private:
  // init() without the tracer's init event.
  Result<DelegateHandle*> init_delegate(BackendInitContext& context,
                                        FreeableBuffer* processed) const;

  uint64_t max_value_bytes_;
  uint64_t max_multiply_adds_;
  xnnpack::PackedWeightsCache* weights_cache_;
};

/// The process-wide XnnpackBackend instance.
const XnnpackBackend& xnnpack_backend();

/// Registers xnnpack_backend() under kXnnpackBackendId. Errors: as
/// BackendRegistry::register_backend (duplicate, full).
Status register_xnnpack_backend(BackendRegistry& registry);

}  // namespace torchlight
