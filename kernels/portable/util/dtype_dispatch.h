// Dtype dispatch: run one piece of templated code with the C++ type that
// matches a runtime ScalarType.
//
// In a kernel body:
//
//   TL_SWITCH_REAL_TYPES(common, ctx, "self", CTYPE, [&] {
//     const CTYPE* data = self.const_data_ptr<CTYPE>();
//     ...
//   });
//
// The lambda body is compiled once per type of the set (inside a generic
// lambda, so `if constexpr` on CTYPE discards the branches that do not apply).
// A dtype outside the set records a kInvalidType failure on `ctx` naming the
// operator, the argument and the dtype, and returns from the enclosing
// function, as TL_KERNEL_CHECK does. Code that needs a Status instead calls
// visit_real_type() and friends directly.
#pragma once

#include <cstdint>

#include "runtime/core/half.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::portable {

/// Carries a type through a generic lambda's `auto` parameter.
template <typename T>
struct TypeTag {
  using type = T;
};

// (ScalarType enumerator, C++ type) pairs, as X-macros. The "real" types are
// the integers, the floats and bool: everything ATen's type promotion covers.
#define TL_FORALL_INT_TYPES(_) \
  _(kByte, uint8_t)            \
  _(kChar, int8_t)             \
  _(kShort, int16_t)           \
  _(kInt, int32_t)             \
  _(kLong, int64_t)
#define TL_FORALL_FLOAT_TYPES(_)      \
  _(kHalf, ::torchlight::Half)         \
  _(kBFloat16, ::torchlight::BFloat16) \
  _(kFloat, float)                     \
  _(kDouble, double)
#define TL_FORALL_REAL_TYPES_NO_BOOL(_) TL_FORALL_INT_TYPES(_) TL_FORALL_FLOAT_TYPES(_)
#define TL_FORALL_REAL_TYPES(_) TL_FORALL_REAL_TYPES_NO_BOOL(_) _(kBool, bool)

/// The C++ type of a real ScalarType: cpp_type_t<ScalarType::kInt> is int32_t.
template <ScalarType kType>
struct CppTypeOf;
/// The ScalarType of a C++ type: kScalarTypeOf<int32_t> is ScalarType::kInt.
template <typename T>
struct ScalarTypeOf;

#define TL_INTERNAL_TYPE_MAPS(enum_name, ctype)                           \
  template <>                                                            \
  struct CppTypeOf<ScalarType::enum_name> {                              \
    using type = ctype;                                                  \
  };                                                                     \
  template <>                                                            \
  struct ScalarTypeOf<ctype> {                                           \
    static constexpr ScalarType value = ScalarType::enum_name;           \
  };
TL_FORALL_REAL_TYPES(TL_INTERNAL_TYPE_MAPS)
#undef TL_INTERNAL_TYPE_MAPS

template <ScalarType kType>
using cpp_type_t = typename CppTypeOf<kType>::type;
template <typename T>
inline constexpr ScalarType kScalarTypeOf = ScalarTypeOf<T>::value;

// The visitors call fn(TypeTag<T>{}) for the C++ type T of `type` and return
// true, or return false without calling fn when `type` is not in their set.
#define TL_INTERNAL_VISIT_CASE(enum_name, ctype) \
  case ScalarType::enum_name:                    \
    fn(TypeTag<ctype>{});                        \
    return true;

/// uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, bool.
template <typename Fn>
bool visit_real_type(ScalarType type, Fn&& fn) {
  switch (type) {
    TL_FORALL_REAL_TYPES(TL_INTERNAL_VISIT_CASE)
    default:
      return false;
  }
}

/// The real types without bool.
template <typename Fn>
bool visit_real_type_no_bool(ScalarType type, Fn&& fn) {
  switch (type) {
    TL_FORALL_REAL_TYPES_NO_BOOL(TL_INTERNAL_VISIT_CASE)
    default:
      return false;
  }
}

/// uint8, int8, int16, int32, int64.
template <typename Fn>
bool visit_int_type(ScalarType type, Fn&& fn) {
  switch (type) {
    TL_FORALL_INT_TYPES(TL_INTERNAL_VISIT_CASE)
    default:
      return false;
  }
}

/// float16, bfloat16, float32, float64.
template <typename Fn>
bool visit_float_type(ScalarType type, Fn&& fn) {
  switch (type) {
    TL_FORALL_FLOAT_TYPES(TL_INTERNAL_VISIT_CASE)
    default:
      return false;
  }
}

#undef TL_INTERNAL_VISIT_CASE

// Names of each set, for error messages.
inline constexpr const char kRealTypeNames[] =
    "uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, bool";
inline constexpr const char kRealTypeNoBoolNames[] =
    "uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64";
inline constexpr const char kIntTypeNames[] = "uint8, int8, int16, int32, int64";
inline constexpr const char kFloatTypeNames[] = "float16, bfloat16, float32, float64";

/// The Status every dispatch failure carries: kInvalidType, naming the
/// argument, its dtype and the supported set (the caller adds the operator).
inline Status unsupported_dtype(const char* arg_name, ScalarType type, const char* supported) {
  return Status::error(Error::kInvalidType,
                       "argument '%s' has dtype %s, which is not supported (supported: %s)",
                       arg_name, to_string(type), supported);
}

}  // namespace torchlight::portable

#define TL_INTERNAL_SWITCH(visitor, names, dtype, ctx, arg_name, CTYPE, ...)              \
  do {                                                                                   \
    const ::torchlight::ScalarType tl_switch_dtype_ = (dtype);                           \
    if (!::torchlight::portable::visitor(tl_switch_dtype_, [&](auto tl_type_tag_) {      \
          using CTYPE [[maybe_unused]] = typename decltype(tl_type_tag_)::type;          \
          (__VA_ARGS__)();                                                               \
        })) {                                                                            \
      (ctx).fail(::torchlight::portable::unsupported_dtype((arg_name), tl_switch_dtype_, \
                                                           ::torchlight::portable::names) \
                     .with_context("%s", (ctx).operator_name()));                        \
      return;                                                                            \
    }                                                                                    \
  } while (0)

/// Runs the lambda (last argument) with CTYPE bound to the C++ type of
/// `dtype`, one of the ten real types; otherwise fails `ctx` naming
/// `arg_name` (the argument whose dtype decided `dtype`) and returns.
#define TL_SWITCH_REAL_TYPES(dtype, ctx, arg_name, CTYPE, ...) \
  TL_INTERNAL_SWITCH(visit_real_type, kRealTypeNames, dtype, ctx, arg_name, CTYPE, __VA_ARGS__)
/// As TL_SWITCH_REAL_TYPES, without bool.
#define TL_SWITCH_REAL_TYPES_NO_BOOL(dtype, ctx, arg_name, CTYPE, ...)                        \
  TL_INTERNAL_SWITCH(visit_real_type_no_bool, kRealTypeNoBoolNames, dtype, ctx, arg_name, CTYPE, \
                     __VA_ARGS__)
/// The five integer types (no bool).
#define TL_SWITCH_INT_TYPES(dtype, ctx, arg_name, CTYPE, ...) \
  TL_INTERNAL_SWITCH(visit_int_type, kIntTypeNames, dtype, ctx, arg_name, CTYPE, __VA_ARGS__)
/// The four floating-point types.
#define TL_SWITCH_FLOAT_TYPES(dtype, ctx, arg_name, CTYPE, ...) \
  TL_INTERNAL_SWITCH(visit_float_type, kFloatTypeNames, dtype, ctx, arg_name, CTYPE, __VA_ARGS__)
