// Argument checks for kernels: count, presence and tags, against a
// declarative list of the operator schema's arguments.
//
// A kernel declares its schema once:
//
//   constexpr ArgSpec kArgs[] = {{"self", ArgType::kTensor}, {"other", ArgType::kTensor},
//                                {"alpha", ArgType::kScalar}, {"out", ArgType::kTensor},
//                                {"out", ArgType::kReturn}};
//
// and starts with TL_KERNEL_RETURN_IF_ERROR(ctx, check_args(args, kArgs)), after
// which every accessor on args[i] is safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/op_schema.h"

namespace torchlight::portable {

// The argument kinds and checks live with the kernel interface
// (runtime/kernel/op_schema.h); kernels name them unqualified.
using ::torchlight::ArgSpec;
using ::torchlight::ArgType;
using ::torchlight::check_args;
using ::torchlight::matches;
using ::torchlight::to_string;

/// A tensor argument with its schema name, so helpers can name it in errors.
/// `name` has static storage.
struct NamedTensor {
  Tensor tensor;
  const char* name;
};

/// For an out-variant whose schema returns nothing and ends with a Tensor[]
/// `out` (split_copy.Tensor_out, unbind_copy.int_out...). Our layout is the
/// schema's arguments alone; upstream's emitter appends a return slot, a
/// second TensorList naming the same tensors. Accepts both. Errors: as
/// check_args, and kInvalidArgument when the appended list names other
/// tensors than `out`.
Status check_void_out_list_args(Span<EValue* const> args, Span<const ArgSpec> specs);

/// Writes the kernel's return value into args[index] (a kReturn slot that
/// check_args has verified). Safe when the slot is the out argument itself.
inline void set_return(Span<EValue* const> args, size_t index, const EValue& value) {
  *args[index] = value;
}

}  // namespace torchlight::portable
