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

namespace torchlight::portable {

/// What one schema argument must hold.
enum class ArgType : uint8_t {
  kTensor,          // A defined Tensor.
  kOptionalTensor,  // A Tensor or None (an undefined Tensor also stands for None).
  kScalar,          // Int, Double or Bool.
  kOptionalScalar,  // A Scalar or None.
  kInt,
  kOptionalInt,     // Int or None.
  kDouble,
  kBool,
  kOptionalBool,  // Bool or None.
  kIntList,
  kOptionalIntList,  // IntList or None.
  kDoubleList,
  kOptionalDoubleList,  // DoubleList or None.
  kBoolList,
  kTensorList,
  kOptionalTensorList,
  kString,
  kOptionalString,  // String or None.
  kReturn,  // A return slot: any value; the kernel overwrites it (set_return).
};

/// "Tensor", "Scalar", "int[]?"...: the schema's spelling, for messages.
const char* to_string(ArgType type);

struct ArgSpec {
  const char* name;  // As in the schema ("self", "alpha"); static storage.
  ArgType type;
};

/// A tensor argument with its schema name, so helpers can name it in errors.
/// `name` has static storage.
struct NamedTensor {
  Tensor tensor;
  const char* name;
};

/// Whether `value` satisfies `type`.
bool matches(const EValue& value, ArgType type);

/// Checks `args` against `specs`. Errors (the caller adds the operator name):
/// kInvalidArgument when the count differs ("expected 5 arguments (self,
/// other, alpha, out, out), got 4") or an entry is null; kInvalidType when
/// a value's tag does not match ("argument 'alpha' must be a Scalar, got
/// Tensor") or a Tensor argument is an undefined tensor.
Status check_args(Span<EValue* const> args, Span<const ArgSpec> specs);

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
