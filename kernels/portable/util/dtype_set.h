// Named sets of dtypes that an operator supports, with dispatch over a set
// chosen at compile time, so an op's arithmetic is instantiated only for the
// types it accepts (std::floor is never compiled for int8).
//
//   TL_SWITCH_DTYPE_SET(DtypeSet::kIntOrBool, common, ctx, "self", CTYPE, [&] { ... });
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/dtype_dispatch.h"
#include "runtime/core/half.h"
#include "runtime/core/scalar_type.h"

namespace torchlight::portable {

/// The sets of real dtypes ATen's elementwise operators accept.
enum class DtypeSet : uint8_t {
  kReal,        // All ten: integers, floats, bool.
  kRealNoBool,  // Integers and floats.
  kFloat,       // float16, bfloat16, float32, float64.
  kIntOrBool,   // The five integers and bool (the bitwise operators).
};

/// Whether the C++ element type T belongs to `set`.
template <typename T>
constexpr bool in_dtype_set(DtypeSet set) {
  constexpr bool kIsBool = std::is_same_v<T, bool>;
  constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                            std::is_same_v<T, BFloat16>;
  switch (set) {
    case DtypeSet::kReal: return true;
    case DtypeSet::kRealNoBool: return !kIsBool;
    case DtypeSet::kFloat: return kIsFloat;
    case DtypeSet::kIntOrBool: return !kIsFloat;
  }
  return false;
}

/// Whether the runtime dtype `type` belongs to `set` (false for non-real types).
inline bool in_dtype_set(ScalarType type, DtypeSet set) {
  bool result = false;
  visit_real_type(type, [&](auto tag) {
    result = in_dtype_set<typename decltype(tag)::type>(set);
  });
  return result;
}

/// The members of `set`, for error messages.
inline const char* dtype_set_names(DtypeSet set) {
  switch (set) {
    case DtypeSet::kReal: return kRealTypeNames;
    case DtypeSet::kRealNoBool: return kRealTypeNoBoolNames;
    case DtypeSet::kFloat: return kFloatTypeNames;
    case DtypeSet::kIntOrBool: return "uint8, int8, int16, int32, int64, bool";
  }
  return "";
}

/// Calls fn(TypeTag<T>{}) for the C++ type T of `type` and returns true when
/// `type` is in kSet; returns false without calling fn otherwise. fn is only
/// instantiated for the members of kSet.
template <DtypeSet kSet, typename Fn>
bool visit_dtype_set(ScalarType type, Fn&& fn) {
  bool called = false;
  visit_real_type(type, [&](auto tag) {
    if constexpr (in_dtype_set<typename decltype(tag)::type>(kSet)) {
      fn(tag);
      called = true;
    }
  });
  return called;
}

}  // namespace torchlight::portable

/// As TL_SWITCH_REAL_TYPES, over the members of the DtypeSet `set` (a
/// constant expression): runs the lambda with CTYPE bound, or fails `ctx`
/// naming `arg_name` and its dtype, and returns.
#define TL_SWITCH_DTYPE_SET(set, dtype, ctx, arg_name, CTYPE, ...)                             \
  do {                                                                                         \
    const ::torchlight::ScalarType tl_switch_dtype_ = (dtype);                                 \
    if (!::torchlight::portable::visit_dtype_set<(set)>(tl_switch_dtype_, [&](auto tl_tag_) {  \
          using CTYPE [[maybe_unused]] = typename decltype(tl_tag_)::type;                     \
          (__VA_ARGS__)();                                                                     \
        })) {                                                                                  \
      (ctx).fail(::torchlight::portable::unsupported_dtype(                                    \
                     (arg_name), tl_switch_dtype_, ::torchlight::portable::dtype_set_names(set)) \
                     .with_context("%s", (ctx).operator_name()));                              \
      return;                                                                                  \
    }                                                                                          \
  } while (0)
