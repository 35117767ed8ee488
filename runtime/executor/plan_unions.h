// Checks that every flatbuffer union in a program carries its value.
//
// The flatbuffer verifier accepts a union whose type field is set but whose
// value is absent (union values are optional on the wire), and the generated
// `val_as_Int()`-style accessors then return null. Program::load runs this
// check once, so Method loading, MethodMeta and inspection tools can read
// union values without a null test at every use. Internal header: includes
// the generated schema.
#pragma once

#include "runtime/core/result.h"
#include "runtime/core/status.h"
#include "schema/program_generated.h"

namespace torchlight {

/// Errors: kInvalidProgram naming the method, the value or instruction
/// index and the union type whose value is missing. `file_name` is used in
/// messages only.
Status check_union_values(const fb::Program* program, const char* file_name);

}  // namespace torchlight
