// OpSchema: an operator's argument list as a program passes it, with the
// kind of value each argument holds and which ones the kernel writes (the
// schema's `(a!)` marks and the return slot).
//
// Generated for every operator a kernel library registers
// (kernels/schemas/op_schemas.h), so the runtime checks a call's arguments,
// and refuses a constant where a kernel writes, once at method load.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"

namespace torchlight {

/// What one schema argument must hold.
enum class ArgType : uint8_t {
  kTensor,          // A defined Tensor.
  kOptionalTensor,  // A Tensor or None (an undefined Tensor also stands for None).
  kScalar,          // Int, Double or Bool.
  kOptionalScalar,  // A Scalar or None.
  kInt,
  kOptionalInt,     // Int or None.
  kDouble,
  kOptionalDouble,  // Double or None.
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
  kReturn,  // A return slot: any value; the kernel overwrites it.
};

/// "Tensor", "Scalar", "int[]?"...: the schema's spelling, for messages.
const char* to_string(ArgType type);

struct ArgSpec {
  const char* name;  // As in the schema ("self", "alpha"); static storage.
  ArgType type;
  bool written = false;  // `Tensor(a!)` in the schema, or a return slot.
};

struct OpSchema {
  const char* name;     // "aten::add.out"; static storage.
  const char* text;     // The schema as torch spells it, for messages.
  const ArgSpec* args;  // The arguments, then one return slot unless `-> ()`.
  size_t num_args;
  /// `-> ()`: upstream's emitter still appends a return slot after the
  /// arguments, ours does not, so a call may carry one extra (written) value.
  bool returns_nothing;

  Span<const ArgSpec> arg_specs() const { return {args, num_args}; }
};

/// "self, other, alpha, out, out" into `out`, cut (with "...") when too long.
void format_arg_names(Span<const ArgSpec> specs, char* out, size_t out_size);

/// Whether `value` satisfies `type`.
bool matches(const EValue& value, ArgType type);

/// Checks `args` against `specs`. Errors (the caller adds the operator name):
/// kInvalidArgument when the count differs ("expected 5 arguments (self,
/// other, alpha, out, out), got 4") or an entry is null; kInvalidType when
/// a value's tag does not match ("argument 'alpha' must be a Scalar, got
/// Tensor") or a Tensor argument is an undefined tensor.
Status check_args(Span<EValue* const> args, Span<const ArgSpec> specs);

/// check_args against a schema, allowing the extra return slot of a
/// schema that returns nothing.
Status check_call(Span<EValue* const> args, const OpSchema& schema);

/// Whether argument `index` of a call with `num_args` arguments is written.
inline bool writes_arg(const OpSchema& schema, size_t index) {
  return index < schema.num_args ? schema.args[index].written : schema.returns_nothing;
}

}  // namespace torchlight
