// DefinitionContext: what turning one payload into an XNNPACK subgraph
// shares between value definition and node definition.
#pragma once

#include <xnnpack.h>

#include <cstdint>

#include "backends/xnnpack/named_constants.h"
#include "backends/xnnpack/packed_weights_cache.h"
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
  // The payload's value id (id_out), for the execute-time shape check.
  uint32_t value_id;
};

/// ExternalValue::bound_rank before the first reshape.
inline constexpr uint32_t kNoShape = 0xFFFFFFFFu;

/// What a payload value is, for the checks on which nodes may write it.
enum class ValueKind : uint8_t { kInternal, kConstant, kExternalInput, kExternalOutput };

/// DefinitionContext::producers slot of a value no node writes (yet).
inline constexpr uint32_t kNoProducer = 0xFFFFFFFFu;

/// A value's dims as the payload declares them (dynamic dims: upper bound).
struct DeclaredShape {
  uint32_t rank;
  size_t dims[XNN_MAX_TENSOR_DIMS];
};

/// A qbint4 value's scales (bf16, [out][in / group], as XNNPACK reads them)
/// and group size.
struct BlockwiseWeights {
  const uint16_t* bf16_scales = nullptr;
  uint32_t group = 0;
};

/// One read of a value by a node, as define_nodes sees it.
struct NodeRead {
  uint32_t node;
  uint32_t value;  // Payload id.
};

/// Where define_nodes records every read (stage_plan.h splits the graph
/// with it); reads beyond `capacity` set `overflow`.
struct ReadLog {
  NodeRead* entries = nullptr;
  uint32_t size = 0;
  uint32_t capacity = 0;
  bool overflow = false;
};

/// DefinitionContext::value_flags slot of a value a stage's subgraph leaves
/// out.
inline constexpr uint32_t kNotInStage = 0xFFFFFFFFu;

struct DefinitionContext {
  xnn_subgraph_t subgraph = nullptr;
  const fb_xnnpack::XNNGraph* graph = nullptr;  // Verified (graph_validation.h).
  PayloadSections sections;
  /// Constants kept in the program's named data (none in upstream 0.5's
  /// payloads); may be null when the payload names none.
  const NamedConstants* named = nullptr;
  /// For data XNNPACK reads by pointer for the runtime's whole life (bf16
  /// scales converted from fp32); lives as long as the delegate.
  MemoryAllocator* allocator = nullptr;
  /// id_out -> XNNPACK value id, kUndefinedValue until defined; num_values long.
  uint32_t* id_map = nullptr;
  uint32_t num_values = 0;
  /// Datatype and declared shape of each defined value, indexed like id_map.
  xnn_datatype* datatypes = nullptr;
  DeclaredShape* shapes = nullptr;
  /// Per value, indexed like id_map: its kind, the node writing it
  /// (kNoProducer: none) and whether a node reads it. XNNPACK prunes nodes
  /// whose outputs nobody reads but keeps counting their reads, then aborts
  /// on the stale count, so define_nodes refuses such nodes itself.
  ValueKind* kinds = nullptr;
  uint32_t* producers = nullptr;
  uint8_t* consumed = nullptr;
  /// Bound on the summed bytes of all non-constant values (declared shapes):
  /// XNNPACK plans its workspace from them.
  uint64_t max_value_bytes = 0;
  /// Bound on the multiply-adds of one execute at the declared shapes
  /// (node_bounds.h).
  uint64_t max_multiply_adds = 0;
  /// When set (room for num_values entries), define_values lists the
  /// constants the weights cache may key by content, salted with hash_key.
  ConstantRegion* constants = nullptr;
  uint32_t num_constants = 0;
  const uint64_t* hash_key = nullptr;
  /// Constant data of each defined value (null: not a constant), indexed
  /// like id_map; filled by define_values when set.
  const void** constant_data = nullptr;
  /// The payload's external id of each external value, indexed like id_map;
  /// filled by define_values when set.
  uint32_t* payload_external_ids = nullptr;
  /// Block-wise 4-bit weights (qbint4) as XNNPACK was given them, indexed
  /// like id_map; filled by define_values when set (else left alone), for
  /// stages that run such a linear off XNNPACK (stage_plan.h).
  BlockwiseWeights* blockwise = nullptr;
  /// Per value, indexed like id_map: num_nonbatch_dims of a dynamically
  /// quantized (qdint8) value, 0 for any other; filled when set.
  uint8_t* nonbatch_dims = nullptr;
  /// When set, value() logs every read here.
  ReadLog* reads = nullptr;
  /// When set (one stage of a split graph, stage_plan.h), define_values
  /// defines only values whose slot is not kNotInStage, with that slot's
  /// external flags and external_ids' id instead of the payload's.
  const uint32_t* value_flags = nullptr;
  const uint32_t* external_ids = nullptr;

  /// The XNNPACK id for payload id `id`, read as `role` by node `node`.
  /// Errors: kInvalidProgram when `id` is out of range or not yet defined
  /// (nodes may only use values defined before them).
  Result<uint32_t> value(uint32_t id, uint32_t node, const char* role) const;
  /// As value(), for a value node `node` writes. Errors also when the value
  /// is a constant or graph input, or another node already writes it.
  Result<uint32_t> output(uint32_t id, uint32_t node, const char* role) const;
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
