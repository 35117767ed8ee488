// Prepared dense paths for the elementwise families: the unary ops of
// unary_ops.h (math, activations, rounding, classification) and the binary
// ops of binary_ops.h (comparisons, bitwise and logical ops, maximum...).
//
// An op's prepare step (see runtime/kernel/kernel.h) runs once per
// instruction, at method load. It checks what cannot change between runs
// (the dtypes: type promotion, the op's dtype set, out's dtype) and rejects
// a bad call there, naming the argument. When every tensor is dense (the
// default dim order) with a dtype the path handles, it installs an eval
// specialised for that dtype: it checks only what can change at run time
// (sizes, data pointers, the kind of a Scalar a previous instruction
// computed), resizes out when a dynamic dim changed, and runs a tight loop.
// Anything outside that (broadcasting, a failed resize, a dtype conversion)
// goes to the reference eval, which checks everything and reports errors as
// before. The loop computes exactly what the reference does (opmath, the
// same conversions), so results are bit-identical.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/out_resize.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::dense_path {

inline bool is_dense(const Tensor& t) { return is_contiguous_dim_order(t.dim_order()); }

/// Whether `t`'s strides are the ones its dim order gives its sizes (no
/// gaps, no explicit strides): its elements fill its first numel() slots.
inline bool is_packed(const Tensor& t) {
  StridesType expected[kMaxTensorDim];
  if (!compute_strides(t.sizes(), t.dim_order(), expected)) return false;
  for (size_t d = 0; d < t.dim(); ++d) {
    if (t.sizes()[d] > 1 && t.strides()[d] != expected[d]) return false;
  }
  return true;
}

inline bool same_sizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (size_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) != b.size(d)) return false;
  }
  return true;
}

/// Gives `out` the shape of `like` when a dynamic dim changed it. False when
/// out cannot take it; the reference eval then reports why.
inline bool fit_out(const Tensor& like, const Tensor& out) {
  return same_sizes(like, out) || resize_tensor({out, "out"}, like.sizes()).ok();
}

/// Calls fn(TypeTag<T>{}) when `type` is a dtype the dense loops handle and
/// kSet holds: float32, float64, int32 or int64 (the types models compute
/// in; the others keep the reference eval).
template <DtypeSet kSet, typename Fn>
void visit_dense_dtype(ScalarType type, Fn&& fn) {
  auto visit = [&](auto tag) {
    if constexpr (in_dtype_set<typename decltype(tag)::type>(kSet)) fn(tag);
  };
  switch (type) {
    case ScalarType::kFloat: visit(TypeTag<float>{}); break;
    case ScalarType::kDouble: visit(TypeTag<double>{}); break;
    case ScalarType::kInt: visit(TypeTag<int32_t>{}); break;
    case ScalarType::kLong: visit(TypeTag<int64_t>{}); break;
    default: break;
  }
}

/// Whether an out rule lets a bool result go into a bool out of another
/// dtype than the compute one.
constexpr bool allows_bool_out(OutDtypeRule rule) {
  return rule == OutDtypeRule::kAny || rule == OutDtypeRule::kBool;
}

/// One result as the reference stores it: rounded to the compute type T,
/// then converted to out's type.
template <typename Out, typename T, typename R>
Out store(R result) {
  return convert<Out>(convert<T>(static_cast<opmath_t<T>>(result)));
}

// ---- Unary: op.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!) ----

template <typename T, typename Out, const auto& kOp, KernelFunction reference>
void unary_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[1]->to_tensor();
  const int64_t n = self.numel();
  const T* a = self.template const_data_ptr<T>();
  if (!fit_out(self, out)) return reference(ctx, args);
  Out* z = out.template mutable_data_ptr<Out>();
  if (n > 0 && (a == nullptr || z == nullptr)) return reference(ctx, args);
  set_return(args, 2, *args[1]);
  for (int64_t i = 0; i < n; ++i) z[i] = store<Out, T>(kOp(static_cast<opmath_t<T>>(a[i])));
}

/// The prepare step of a unary_kernel<kSpec>(ctx, args, kOp) op whose eval
/// is `reference`. Errors (at load): as prepare_unary's dtype checks,
/// naming 'self' or 'out'.
template <const ElementwiseSpec& kSpec, const auto& kOp, KernelFunction reference>
Status prepare_unary_op(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[1]->to_tensor(), "out"};
  ScalarType compute;
  TL_RETURN_IF_ERROR(check_unary_dtypes(self, out, kSpec, &compute));
  const ScalarType out_type = out.tensor.scalar_type();
  if (self.tensor.scalar_type() != compute || !is_dense(self.tensor) || !is_dense(out.tensor)) {
    return Error::kOk;
  }
  visit_dense_dtype<kSpec.dtypes>(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (out_type == compute) {
      call->eval = &unary_eval<T, T, kOp, reference>;
    } else if constexpr (allows_bool_out(kSpec.out_rule)) {
      if (out_type == ScalarType::kBool) call->eval = &unary_eval<T, bool, kOp, reference>;
    }
  });
  return Error::kOk;
}

// ---- Unary with parameters: op.out(Tensor self, <parameters>, *, Tensor(a!)
// ---- out), out at args[kOut] (gelu, leaky_relu, elu, softplus, round.decimals)
//
// kMakeOp(TypeTag<T>{}, args) returns the element function for compute type
// T, with the parameters read from `args` as the reference reads them. The
// reference builds its function with the same kMakeOp, so the two agree bit
// for bit. The eval calls it on every run: an earlier instruction may
// compute a Scalar parameter.

template <typename T, size_t kOut, const auto& kMakeOp, KernelFunction reference>
void unary_params_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  const int64_t n = self.numel();
  const T* a = self.template const_data_ptr<T>();
  if (!fit_out(self, out)) return reference(ctx, args);
  T* z = out.template mutable_data_ptr<T>();
  if (n > 0 && (a == nullptr || z == nullptr)) return reference(ctx, args);
  set_return(args, kOut + 1, *args[kOut]);
  const auto op = kMakeOp(TypeTag<T>{}, args);
  for (int64_t i = 0; i < n; ++i) z[i] = store<T, T>(op(static_cast<opmath_t<T>>(a[i])));
}

/// The prepare step of a unary op with parameters whose reference eval is
/// `reference`: the dtype checks of check_unary_dtypes under kSpec (errors at
/// load naming 'self' or 'out'), then unary_params_eval when self and out
/// are dense and of the compute dtype. Parameters that never change (a
/// string, the presence of an optional) are the caller's to check.
template <const ElementwiseSpec& kSpec, size_t kOut, const auto& kMakeOp,
          KernelFunction reference>
Status prepare_unary_params_op(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[kOut]->to_tensor(), "out"};
  ScalarType compute;
  TL_RETURN_IF_ERROR(check_unary_dtypes(self, out, kSpec, &compute));
  if (self.tensor.scalar_type() != compute || out.tensor.scalar_type() != compute ||
      !is_dense(self.tensor) || !is_dense(out.tensor)) {
    return Error::kOk;
  }
  visit_dense_dtype<kSpec.dtypes>(compute, [&](auto tag) {
    call->eval = &unary_params_eval<typename decltype(tag)::type, kOut, kMakeOp, reference>;
  });
  return Error::kOk;
}

// ---- Binary: op.out(Tensor self, Tensor other, *, Tensor(a!) out) and
// ---- op.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out) ----

template <typename T, typename Out, const auto& kOp, KernelFunction reference, size_t kOut>
void binary_eval(KernelContext& ctx, Span<EValue*> args) {
  using Compute = opmath_t<T>;
  const Tensor self = args[0]->to_tensor();
  const Tensor other = args[1]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  const int64_t n = self.numel();
  const T* a = self.template const_data_ptr<T>();
  const T* b = other.template const_data_ptr<T>();
  // `other` of self's shape, or one element broadcast without changing it.
  const bool same = same_sizes(self, other);
  if (!same && !(other.numel() == 1 && other.dim() <= self.dim())) return reference(ctx, args);
  if (!fit_out(self, out)) return reference(ctx, args);
  Out* z = out.template mutable_data_ptr<Out>();
  if (n > 0 && (a == nullptr || b == nullptr || z == nullptr)) return reference(ctx, args);
  set_return(args, kOut + 1, *args[kOut]);
  if (same) {
    for (int64_t i = 0; i < n; ++i) {
      z[i] = store<Out, T>(kOp(static_cast<Compute>(a[i]), static_cast<Compute>(b[i])));
    }
  } else {
    const Compute scalar = static_cast<Compute>(b[0]);
    for (int64_t i = 0; i < n; ++i) z[i] = store<Out, T>(kOp(static_cast<Compute>(a[i]), scalar));
  }
}

/// The prepare step of a binary_kernel<kSpec>(ctx, args, kOp) op whose eval
/// is `reference`, with out at args[kOut] (after any further arguments, such
/// as div's rounding mode, which prepare handles itself) and the second
/// operand named `other_name`. Errors (at load): as prepare_binary's dtype
/// checks, naming the argument. Specs that check integer divisors keep the
/// reference eval for integers.
template <const ElementwiseSpec& kSpec, const auto& kOp, KernelFunction reference,
          size_t kOut = 2>
Status prepare_binary_op(PrepareContext&, Span<EValue*> args, PreparedCall* call,
                         const char* other_name = "other") {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor other{args[1]->to_tensor(), other_name};
  const NamedTensor out{args[kOut]->to_tensor(), "out"};
  ScalarType compute;
  TL_RETURN_IF_ERROR(check_binary_dtypes(self, other, out, kSpec, &compute));
  const ScalarType out_type = out.tensor.scalar_type();
  if (self.tensor.scalar_type() != compute || other.tensor.scalar_type() != compute ||
      !is_dense(self.tensor) || !is_dense(other.tensor) || !is_dense(out.tensor)) {
    return Error::kOk;
  }
  visit_dense_dtype<kSpec.dtypes>(compute, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!(kSpec.nonzero_int_divisor && std::is_integral_v<T>)) {
      if (out_type == compute) {
        call->eval = &binary_eval<T, T, kOp, reference, kOut>;
      } else if constexpr (allows_bool_out(kSpec.out_rule)) {
        if (out_type == ScalarType::kBool) {
          call->eval = &binary_eval<T, bool, kOp, reference, kOut>;
        }
      }
    }
  });
  return Error::kOk;
}

/// Whether a Scalar of this kind leaves the compute dtype T unchanged (so
/// the loop prepare chose still applies): an Int or a Double for a floating
/// T, an Int for an integral one.
template <typename T>
bool keeps_compute_dtype(const EValue& scalar) {
  return scalar.is_int() || (std::is_floating_point_v<T> && scalar.is_double());
}

template <typename T, typename Out, const ElementwiseSpec& kSpec, const auto& kOp,
          KernelFunction reference, size_t kOut>
void binary_scalar_eval(KernelContext& ctx, Span<EValue*> args) {
  using Compute = opmath_t<T>;
  const Tensor self = args[0]->to_tensor();
  const EValue& other = *args[1];
  const Tensor out = args[kOut]->to_tensor();
  const int64_t n = self.numel();
  const T* a = self.template const_data_ptr<T>();
  if (!keeps_compute_dtype<T>(other) || !fit_out(self, out)) return reference(ctx, args);
  Out* z = out.template mutable_data_ptr<Out>();
  if (n > 0 && (a == nullptr || z == nullptr)) return reference(ctx, args);
  set_return(args, kOut + 1, *args[kOut]);
  // The Scalar as the reference converts it (binary_scalar_kernel).
  const Compute b = kSpec.scalar_in_opmath ? scalar_to<Compute>(other)
                                           : convert<Compute>(scalar_to<T>(other));
  for (int64_t i = 0; i < n; ++i) z[i] = store<Out, T>(kOp(static_cast<Compute>(a[i]), b));
}

/// The prepare step of a binary_scalar_kernel<kSpec>(ctx, args, kOp) op
/// whose eval is `reference`, with out at args[kOut]. The Scalar may be
/// computed by an earlier instruction, so only what no Scalar can change is
/// checked at load: a floating self (which a Scalar never promotes) must be
/// in the spec (errors: kInvalidType naming 'self'). An integer or bool self
/// may still be promoted into it (bool by an Int, integers by a Double), so
/// the eval decides.
template <const ElementwiseSpec& kSpec, const auto& kOp, KernelFunction reference,
          size_t kOut = 2>
Status prepare_binary_scalar_op(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[kOut]->to_tensor();
  const ScalarType self_type = self.scalar_type();
  if (is_floating_point(self_type) && !in_dtype_set(self_type, kSpec.dtypes)) {
    return unsupported_dtype("self", self_type, dtype_set_names(kSpec.dtypes));
  }
  if (!in_dtype_set(self_type, kSpec.dtypes)) return Error::kOk;
  if (!is_dense(self) || !is_dense(out)) return Error::kOk;
  const ScalarType out_type = out.scalar_type();
  visit_dense_dtype<kSpec.dtypes>(self_type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (!keeps_compute_dtype<T>(*args[1])) return;  // Promotes: the reference decides.
    if constexpr (!(kSpec.nonzero_int_divisor && std::is_integral_v<T>)) {
      if (out_type == self_type) {
        call->eval = &binary_scalar_eval<T, T, kSpec, kOp, reference, kOut>;
      } else if constexpr (allows_bool_out(kSpec.out_rule)) {
        if (out_type == ScalarType::kBool) {
          call->eval = &binary_scalar_eval<T, bool, kSpec, kOp, reference, kOut>;
        }
      }
    }
  });
  return Error::kOk;
}

}  // namespace torchlight::portable::dense_path
