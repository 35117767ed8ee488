// Kernels from plain ("unboxed") C++ functions.
//
// A custom operator is written as the function it computes:
//
//   Tensor& my_op_out(KernelContext& ctx, const Tensor& a, double alpha, Tensor& out);
//
// and UnboxedKernel makes the runtime's Kernel from it: the schema (what
// each argument must hold, which ones it writes) is derived from the
// parameter types, and the eval reads each EValue as its parameter's type and
// calls the function. The runtime checks every call against the schema at
// method load, so a program passing the wrong number or kind of arguments is
// refused there, naming the operator and the argument, never at run time.
//
// Parameter types (the KernelContext& first is optional):
//   const Tensor& / Tensor           Tensor
//   Tensor&                          Tensor(a!): written (never a constant)
//   std::optional<Tensor>            Tensor?
//   Scalar, std::optional<Scalar>    Scalar, Scalar?
//   int64_t, double, bool            int, float, bool (and their optionals)
//   Span<const int64_t>              int[] (and std::optional of it: int[]?)
//   Span<const double>, Span<const bool>   float[], bool[]
//   Span<const Tensor>               Tensor[]
//   std::string_view                 str (and str?)
// The return type is void (`-> ()`), Tensor& or Tensor (the return slot).
//
// Two ways to register:
//   - explicitly, as every Torchlight library does: a namespace-scope
//     `constexpr UnboxedKernel k{"my_ops::my_op.out", unboxed<&my_op_out>};`
//     (constant-initialised) whose k.kernel() goes to
//     KernelRegistry::register_kernel or into a constexpr table;
//   - TL_REGISTER_KERNEL(my_ops, "my_op.out", my_op_out), upstream's
//     EXECUTORCH_LIBRARY: a static object linking itself into the list of
//     linked kernels (linked_kernels.h) that the default registry
//     (all_kernels()) includes. This is the one static initialiser in the
//     runtime, opted into by the code that uses the macro.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "extension/kernel_util/scalar.h"
#include "runtime/core/evalue.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/op_schema.h"

namespace torchlight {

/// Names a function for UnboxedKernel: unboxed<&my_op_out>.
template <auto Function>
struct UnboxedFunction {};
template <auto Function>
inline constexpr UnboxedFunction<Function> unboxed{};

namespace unboxed_detail {

template <typename T>
struct Always {
  static constexpr bool kFalse = false;
};

// How a parameter of (decayed) type T is described in the schema and read
// from its EValue. The primary template is the error for any other type.
template <typename T>
struct ArgKind {
  static_assert(Always<T>::kFalse,
                "unboxed kernel: unsupported parameter type; use Tensor, std::optional<Tensor>, "
                "Scalar, int64_t, double, bool, Span<const int64_t|double|bool|Tensor>, "
                "std::string_view, or std::optional of one of these (unboxed_kernel.h)");
};

// A type and its std::optional, read with `read_expr` from `v`.
#define TL_UNBOXED_ARG_KIND(CppType, kind, optional_kind, read_expr) \
  template <>                                                         \
  struct ArgKind<CppType> {                                           \
    static constexpr ArgType kType = ArgType::kind;                   \
    static CppType read(const EValue& v) { return read_expr; }        \
  };                                                                  \
  template <>                                                         \
  struct ArgKind<std::optional<CppType>> {                            \
    static constexpr ArgType kType = ArgType::optional_kind;          \
    static std::optional<CppType> read(const EValue& v) {             \
      if (v.is_none()) return std::nullopt;                           \
      return std::optional<CppType>(read_expr);                       \
    }                                                                 \
  };

TL_UNBOXED_ARG_KIND(Scalar, kScalar, kOptionalScalar, Scalar::from(v))
TL_UNBOXED_ARG_KIND(int64_t, kInt, kOptionalInt, v.to_int())
TL_UNBOXED_ARG_KIND(double, kDouble, kOptionalDouble, v.to_double())
TL_UNBOXED_ARG_KIND(bool, kBool, kOptionalBool, v.to_bool())
TL_UNBOXED_ARG_KIND(Span<const int64_t>, kIntList, kOptionalIntList, v.to_int_list())
TL_UNBOXED_ARG_KIND(Span<const double>, kDoubleList, kOptionalDoubleList, v.to_double_list())
TL_UNBOXED_ARG_KIND(std::string_view, kString, kOptionalString, v.to_string())
#undef TL_UNBOXED_ARG_KIND

template <>
struct ArgKind<Tensor> {
  static constexpr ArgType kType = ArgType::kTensor;
  static Tensor read(const EValue& v) { return v.to_tensor(); }
};
// None, or an undefined tensor (which also stands for None), is nullopt.
template <>
struct ArgKind<std::optional<Tensor>> {
  static constexpr ArgType kType = ArgType::kOptionalTensor;
  static std::optional<Tensor> read(const EValue& v) {
    const Tensor t = v.to_optional_tensor();
    return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
  }
};
template <>
struct ArgKind<Span<const bool>> {
  static constexpr ArgType kType = ArgType::kBoolList;
  static Span<const bool> read(const EValue& v) { return v.to_bool_list(); }
};
template <>
struct ArgKind<Span<const Tensor>> {
  static constexpr ArgType kType = ArgType::kTensorList;
  static Span<const Tensor> read(const EValue& v) { return v.to_tensor_list(); }
};

template <typename P>
using Decayed = std::remove_cv_t<std::remove_reference_t<P>>;

// `Tensor&`: the kernel writes it (the schema's `Tensor(a!)`).
template <typename P>
inline constexpr bool kWritten = std::is_same_v<Decayed<P>, Tensor> && std::is_lvalue_reference_v<P> &&
                                 !std::is_const_v<std::remove_reference_t<P>>;

template <typename P>
constexpr void check_param() {
  static_assert(!std::is_lvalue_reference_v<P> || std::is_const_v<std::remove_reference_t<P>> ||
                    std::is_same_v<Decayed<P>, Tensor>,
                "unboxed kernel: only Tensor may be a non-const reference (an output)");
  static_assert(!std::is_rvalue_reference_v<P>, "unboxed kernel: rvalue-reference parameter");
}

// Derived argument names: "out" for a written tensor, else "arg<i>".
inline constexpr const char* kArgNames[] = {
    "arg0",  "arg1",  "arg2",  "arg3",  "arg4",  "arg5",  "arg6",  "arg7",  "arg8",  "arg9",  "arg10",
    "arg11", "arg12", "arg13", "arg14", "arg15", "arg16", "arg17", "arg18", "arg19", "arg20", "arg21",
    "arg22", "arg23", "arg24", "arg25", "arg26", "arg27", "arg28", "arg29", "arg30", "arg31"};
inline constexpr size_t kMaxArgs = sizeof(kArgNames) / sizeof(kArgNames[0]);

template <typename P>
constexpr ArgSpec spec_of(size_t index) {
  check_param<P>();
  return ArgSpec{kWritten<P> ? "out" : kArgNames[index], ArgKind<Decayed<P>>::kType, kWritten<P>};
}

// The schema's spelling of an argument type, as op_schema's to_string (which
// is not constexpr).
constexpr const char* type_text(ArgType type) {
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
  return "?";
}

// "(Tensor arg0, float arg1, Tensor(a!) out) -> Tensor(a!)": the derived
// schema as messages show it, built at compile time.
template <size_t kCapacity, size_t kNumSpecs>
constexpr std::array<char, kCapacity> schema_text(const std::array<ArgSpec, kNumSpecs>& specs, size_t num_args,
                                                  bool returns_nothing) {
  std::array<char, kCapacity> out{};
  size_t n = 0;
  auto append = [&out, &n](const char* text) {
    for (; *text != '\0' && n + 1 < kCapacity; ++text) out[n++] = *text;
  };
  append("(");
  for (size_t i = 0; i < num_args; ++i) {
    if (i > 0) append(", ");
    append(type_text(specs[i].type));
    if (specs[i].written) append("(a!)");
    append(" ");
    append(specs[i].name);
  }
  append(returns_nothing ? ") -> ()" : ") -> Tensor");
  return out;
}

// The boxed side of `Function`, whose schema arguments are Args... (the
// KernelContext parameter, if any, removed) and whose result is R.
template <auto Function, bool kTakesContext, typename R, typename... Args>
struct Boxed {
  static constexpr size_t kNumArgs = sizeof...(Args);
  static_assert(kNumArgs <= kMaxArgs, "unboxed kernel: more than 32 arguments");
  static constexpr bool kReturnsNothing = std::is_void_v<R>;
  static_assert(kReturnsNothing || std::is_same_v<Decayed<R>, Tensor>,
                "unboxed kernel: the return type must be void, Tensor& or Tensor");

  template <size_t... I>
  static constexpr auto make_specs(std::index_sequence<I...>) {
    // One extra entry: the return slot (left out of num_args for `-> ()`).
    return std::array<ArgSpec, kNumArgs + 1>{spec_of<Args>(I)..., ArgSpec{"return", ArgType::kReturn, true}};
  }
  static constexpr std::array<ArgSpec, kNumArgs + 1> kSpecs = make_specs(std::index_sequence_for<Args...>{});
  static constexpr size_t kNumSpecs = kReturnsNothing ? kNumArgs : kNumArgs + 1;
  // Longest piece per argument: "Tensor?[]" + "(a!)" + " arg31" + ", ".
  static constexpr std::array<char, 32 + 24 * kNumArgs> kText =
      schema_text<32 + 24 * kNumArgs>(kSpecs, kNumArgs, kReturnsNothing);

  template <size_t... I>
  static void call(KernelContext& ctx, Span<EValue*> args, std::index_sequence<I...>) {
    // Each value in a local of its parameter's type, so a Tensor& binds to a
    // handle sharing the program's TensorImpl (a resize is seen by all).
    std::tuple<Decayed<Args>...> values{ArgKind<Decayed<Args>>::read(*args[I])...};
    if constexpr (kReturnsNothing) {
      if constexpr (kTakesContext) {
        Function(ctx, std::get<I>(values)...);
      } else {
        Function(std::get<I>(values)...);
      }
    } else {
      Tensor result;
      if constexpr (kTakesContext) {
        result = Function(ctx, std::get<I>(values)...);
      } else {
        result = Function(std::get<I>(values)...);
      }
      *args[kNumArgs] = EValue(result);
    }
  }

  // The runtime checked args against kSpecs at load (count and kinds).
  static void eval(KernelContext& ctx, Span<EValue*> args) {
    call(ctx, args, std::index_sequence_for<Args...>{});
  }
};

template <auto Function, typename Signature = decltype(Function)>
struct BoxedOf {
  static_assert(Always<Signature>::kFalse, "unboxed kernel: pass a function pointer, unboxed<&f>");
};
template <auto Function, typename R, typename... Params>
struct BoxedOf<Function, R (*)(Params...)> {
  using type = Boxed<Function, false, R, Params...>;
};
template <auto Function, typename R, typename... Params>
struct BoxedOf<Function, R (*)(KernelContext&, Params...)> {
  using type = Boxed<Function, true, R, Params...>;
};

}  // namespace unboxed_detail

/// A Kernel made from a function, with its derived schema. Not copyable: the
/// Kernel points at the schema inside, so keep it where it lives as long as
/// any registry holding kernel(). Declared `constexpr` at namespace scope it
/// is constant-initialised (no code runs before main), e.g.
///   constexpr UnboxedKernel kMyOp{"my_ops::my_op.out", unboxed<&my_op_out>};
///   constexpr Kernel kMyKernels[] = {kMyOp.kernel()};  // a table, as libraries have
class UnboxedKernel {
 public:
  /// `name` is "namespace::op.overload" in static storage.
  template <auto Function>
  constexpr UnboxedKernel(const char* name, UnboxedFunction<Function>)
      : schema_{name, unboxed_detail::BoxedOf<Function>::type::kText.data(),
                unboxed_detail::BoxedOf<Function>::type::kSpecs.data(),
                unboxed_detail::BoxedOf<Function>::type::kNumSpecs,
                unboxed_detail::BoxedOf<Function>::type::kReturnsNothing},
        kernel_{name, &unboxed_detail::BoxedOf<Function>::type::eval, KernelPriority::kCustom, KernelKey{},
                &schema_, nullptr} {}
  UnboxedKernel(const UnboxedKernel&) = delete;
  UnboxedKernel& operator=(const UnboxedKernel&) = delete;

  constexpr const Kernel& kernel() const { return kernel_; }
  constexpr const OpSchema& schema() const { return schema_; }

 private:
  OpSchema schema_;
  Kernel kernel_;
};

}  // namespace torchlight
