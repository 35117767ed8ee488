// Defines every XValue of a verified payload in the XNNPACK subgraph, in
// list order, after checking what graph_validation.h does not: datatype
// known and matching its quantization, dims within XNNPACK's limit,
// quantization parameters consistent with the dims, and constant bytes
// present and large enough.
#pragma once

#include "backends/xnnpack/definition_context.h"

namespace torchlight {
namespace xnnpack {

/// Fills ctx.id_map and ctx.datatypes and writes the external values to
/// `externals` (room for num_externs entries; may be null for a stage of a
/// split graph), setting `num_externals`.
/// Errors: kInvalidProgram naming the value and the reason; kNotSupported
/// for constants kept in the program's named data.
Status define_values(DefinitionContext& ctx, ExternalValue* externals, uint32_t* num_externals);

/// The XNNPACK datatype a payload datatype names (numbered differently).
xnn_datatype to_xnn_datatype(int16_t payload_datatype);

}  // namespace xnnpack
}  // namespace torchlight
