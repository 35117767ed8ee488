// DefinitionContext: what turning one payload into an XNNPACK subgraph
// shares between value definition and node definition.
#pragma once

#include <xnnpack.h>

#include <cstdint>

#include "backends/xnnpack/payload_header.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"

namespace fb_xnnpack {
struct XNNGraph;
}

namespace torchlight {
namespace xnnpack {

/// Marks an id_map slot whose value has not been defined yet.
inline constexpr uint32_t kUndefinedValue = XNN_INVALID_VALUE_ID;

/// One external value, in the order the executor binds them.
struct ExternalValue {
  uint32_t external_id;    // Index into the DelegateCall args.
  xnn_datatype datatype;   // What the bound tensor must hold.
  bool is_input;
  // The payload's shape: dynamic dims hold their upper bound.
  uint32_t rank;
  size_t dims[XNN_MAX_TENSOR_DIMS];
  // Inputs: the shape XNNPACK was last reshaped to (kNoShape: none yet).
  uint32_t bound_rank;
  size_t bound_dims[XNN_MAX_TENSOR_DIMS];
};

/// ExternalValue::bound_rank before the first reshape.
inline constexpr uint32_t kNoShape = 0xFFFFFFFFu;

/// A value's dims as the payload declares them (dynamic dims: upper bound).
struct DeclaredShape {
  uint32_t rank;
  size_t dims[XNN_MAX_TENSOR_DIMS];
};

struct DefinitionContext {
  xnn_subgraph_t subgraph = nullptr;
  const fb_xnnpack::XNNGraph* graph = nullptr;  // Verified (graph_validation.h).
  PayloadSections sections;
  /// For data XNNPACK reads by pointer for the runtime's whole life (bf16
  /// scales converted from fp32); lives as long as the delegate.
  MemoryAllocator* allocator = nullptr;
  /// id_out -> XNNPACK value id, kUndefinedValue until defined; num_values long.
  uint32_t* id_map = nullptr;
  uint32_t num_values = 0;
  /// Datatype and declared shape of each defined value, indexed like id_map.
  xnn_datatype* datatypes = nullptr;
  DeclaredShape* shapes = nullptr;

  /// The XNNPACK id for payload id `id`, used as `role` by node `node`.
  /// Errors: kInvalidProgram when `id` is out of range or not yet defined
  /// (nodes may only use values defined before them).
  Result<uint32_t> value(uint32_t id, uint32_t node, const char* role) const;
  /// As value(), but XNN_INVALID_VALUE_ID ("none", e.g. no bias) passes through.
  Result<uint32_t> optional_value(uint32_t id, uint32_t node, const char* role) const;
};

/// A failing XNNPACK call as a Status naming `what` and XNNPACK's status.
Status xnn_error(xnn_status status, const char* what, uint32_t index);

/// The Status of defining node `index` (kOk, or the named XNNPACK failure).
inline Status node_result(xnn_status status, uint32_t index) {
  return status == xnn_status_success ? Status(Error::kOk) : xnn_error(status, "node", index);
}

}  // namespace xnnpack
}  // namespace torchlight
