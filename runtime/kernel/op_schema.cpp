#include "runtime/kernel/op_schema.h"

#include <cstdio>

#include "runtime/core/result.h"

namespace torchlight {

const char* to_string(ArgType type) {
  switch (type) {
    case ArgType::kTensor: return "Tensor";
    case ArgType::kOptionalTensor: return "Tensor?";
    case ArgType::kScalar: return "Scalar";
    case ArgType::kOptionalScalar: return "Scalar?";
    case ArgType::kInt: return "int";
    case ArgType::kOptionalInt: return "int?";
    case ArgType::kDouble: return "float";
    case ArgType::kOptionalDouble: return "float?";
    case ArgType::kBool: return "bool";
    case ArgType::kOptionalBool: return "bool?";
    case ArgType::kIntList: return "int[]";
    case ArgType::kOptionalIntList: return "int[]?";
    case ArgType::kDoubleList: return "float[]";
    case ArgType::kOptionalDoubleList: return "float[]?";
    case ArgType::kBoolList: return "bool[]";
    case ArgType::kTensorList: return "Tensor[]";
    case ArgType::kOptionalTensorList: return "Tensor?[]";
    case ArgType::kString: return "str";
    case ArgType::kOptionalString: return "str?";
    case ArgType::kReturn: return "return";
  }
  return "unknown";
}

bool matches(const EValue& value, ArgType type) {
  switch (type) {
    case ArgType::kTensor: return value.is_tensor();
    case ArgType::kOptionalTensor: return value.is_tensor() || value.is_none();
    case ArgType::kScalar: return value.is_scalar();
    case ArgType::kOptionalScalar: return value.is_scalar() || value.is_none();
    case ArgType::kInt: return value.is_int();
    case ArgType::kOptionalInt: return value.is_int() || value.is_none();
    case ArgType::kDouble: return value.is_double();
    case ArgType::kOptionalDouble: return value.is_double() || value.is_none();
    case ArgType::kBool: return value.is_bool();
    case ArgType::kOptionalBool: return value.is_bool() || value.is_none();
    case ArgType::kIntList: return value.is_int_list();
    case ArgType::kOptionalIntList: return value.is_int_list() || value.is_none();
    case ArgType::kDoubleList: return value.is_double_list();
    case ArgType::kOptionalDoubleList: return value.is_double_list() || value.is_none();
    case ArgType::kBoolList: return value.is_bool_list();
    case ArgType::kTensorList: return value.is_tensor_list();
    case ArgType::kOptionalTensorList: return value.is_optional_tensor_list();
    case ArgType::kString: return value.is_string();
    case ArgType::kOptionalString: return value.is_string() || value.is_none();
    case ArgType::kReturn: return true;
  }
  return false;
}

void format_arg_names(Span<const ArgSpec> specs, char* out, size_t out_size) {
  size_t used = 0;
  out[0] = '\0';
  for (size_t i = 0; i < specs.size() && used < out_size; ++i) {
    int n = snprintf(out + used, out_size - used, "%s%s", i == 0 ? "" : ", ", specs[i].name);
    if (n < 0) break;
    used += static_cast<size_t>(n);
  }
  if (used >= out_size && out_size >= 4) snprintf(out + out_size - 4, 4, "...");
}

Status check_args(Span<EValue* const> args, Span<const ArgSpec> specs) {
  if (args.size() != specs.size()) {
    char names[160];
    format_arg_names(specs, names, sizeof(names));
    return Status::error(Error::kInvalidArgument, "expected %zu arguments (%s), got %zu",
                         specs.size(), names, args.size());
  }
  for (size_t i = 0; i < specs.size(); ++i) {
    const ArgSpec& spec = specs[i];
    TL_CHECK_OR_RETURN(args[i] != nullptr, Error::kInvalidArgument,
                       "argument %zu ('%s') is missing (null)", i, spec.name);
    const EValue& value = *args[i];
    TL_CHECK_OR_RETURN(matches(value, spec.type), Error::kInvalidType,
                       "argument '%s' must be a %s, got %s", spec.name, to_string(spec.type),
                       to_string(value.tag()));
    if (spec.type == ArgType::kTensor) {
      TL_CHECK_OR_RETURN(value.to_tensor().defined(), Error::kInvalidType,
                         "argument '%s' is an undefined tensor", spec.name);
    }
  }
  return Error::kOk;
}

Status check_call(Span<EValue* const> args, const OpSchema& schema) {
  if (schema.returns_nothing && args.size() != schema.num_args &&
      args.size() != schema.num_args + 1) {
    char names[160];
    format_arg_names(schema.arg_specs(), names, sizeof(names));
    return Status::error(Error::kInvalidArgument,
                         "expected %zu arguments (%s), or %zu with the return slot upstream's "
                         "emitter appends, got %zu",
                         schema.num_args, names, schema.num_args + 1, args.size());
  }
  if (schema.returns_nothing && args.size() == schema.num_args + 1) {
    TL_CHECK_OR_RETURN(args[schema.num_args] != nullptr, Error::kInvalidArgument,
                       "argument %zu (the return slot) is missing (null)", schema.num_args);
    return check_args(args.subspan(0, schema.num_args), schema.arg_specs());
  }
  return check_args(args, schema.arg_specs());
}

}  // namespace torchlight
