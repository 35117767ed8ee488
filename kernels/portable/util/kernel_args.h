// Helpers for a kernel's argument list.
//
// The runtime checks every call against the operator's generated schema
// (kernels/schemas/op_schemas.h) before the kernel sees it: at method load,
// and in call_kernel() for a kernel called outside a program. So a kernel
// trusts the count and the kinds of its arguments (a Tensor argument is a
// defined tensor, an optional one is a Tensor or None...) and every
// accessor on args[i] that its schema allows is safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/op_schema.h"

namespace torchlight::portable {

// The argument kinds live with the kernel interface
// (runtime/kernel/op_schema.h); kernels name them unqualified.
using ::torchlight::matches;
using ::torchlight::to_string;

/// A tensor argument with its schema name, so helpers can name it in errors.
/// `name` has static storage.
struct NamedTensor {
  Tensor tensor;
  const char* name;
};

/// For an out-variant whose schema returns nothing and ends with a Tensor[]
/// `out` at args[out_index] (split_copy.Tensor_out, unbind_copy.int_out...).
/// Our layout is the schema's arguments alone; upstream's emitter appends a
/// return slot, a second TensorList naming the same tensors (check_call
/// accepts the extra slot). Errors: kInvalidType when the appended slot is
/// not a Tensor[], kInvalidArgument when it names other tensors than `out`.
Status check_void_out_return_list(Span<EValue* const> args, size_t out_index);

/// Writes the kernel's return value into args[index] (a kReturn slot the
/// schema check has verified). Safe when the slot is the out argument itself.
inline void set_return(Span<EValue* const> args, size_t index, const EValue& value) {
  *args[index] = value;
}

}  // namespace torchlight::portable
