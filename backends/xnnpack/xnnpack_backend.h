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

#include "runtime/backend/backend_interface.h"
#include "runtime/backend/backend_registry.h"

namespace torchlight {

/// The id programs name this backend by (BackendDelegate.id).
inline constexpr const char* kXnnpackBackendId = "XnnpackBackend";

class XnnpackBackend final : public BackendInterface {
 public:
  /// Whether XNNPACK initialises on this CPU.
  bool is_available() const override;

  /// Errors: kDelegateInvalidCompatibility (payload too short, unknown
  /// flatbuffer identifier), kInvalidProgram (anything inconsistent in the
  /// payload, or a graph XNNPACK refuses, naming the value or node),
  /// kNotSupported (features this runtime lacks, such as named-data
  /// constants), kDelegateMemoryAllocationFailed.
  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpec> compile_specs) const override;

  /// Errors: see XnnExecutor::execute (xnn_executor.h).
  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override;

  void destroy(DelegateHandle* handle) const override;
};

/// The process-wide XnnpackBackend instance.
const XnnpackBackend& xnnpack_backend();

/// Registers xnnpack_backend() under kXnnpackBackendId. Errors: as
/// BackendRegistry::register_backend (duplicate, full).
Status register_xnnpack_backend(BackendRegistry& registry);

}  // namespace torchlight
