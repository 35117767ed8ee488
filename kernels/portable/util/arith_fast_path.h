// Prepared fast paths for add / sub / mul / div (.out and .Scalar_out);
// each op_<name>.cpp defines its prepare functions with prepare_arith.
//
// These four carry most small-operator chains, where the per-call checks of
// the reference kernels (argument kinds, type promotion, broadcast shapes)
// cost more than the arithmetic. At load, prepare looks at what cannot
// change between runs: when self, other and out are one floating dtype in
// the default dim order, it picks a loop specialised for that dtype and
// operator. That eval checks only what can change at run time (sizes, data
// pointers, the tags of Scalar arguments a previous instruction may have
// computed), resizes a dynamic out to self's shape when it differs, and
// hands any call outside its fast cases (shapes that do not broadcast, an
// out that cannot be resized or that overlaps a broadcast operand, a Bool
// scalar) to the reference kernel, which checks everything and reports
// errors as before. Broadcasting walks runs of the innermost merged
// dimension (BroadcastIndexer::for_each_run): upstream's Llama export
// multiplies [B, T, H, D/2] activations by [1, T, 1, D/2] RoPE tables, 54
// calls a prefill, which the element-by-element reference took 1.4 ns an
// element for. The arithmetic is the reference kernels'
// (opmath, alpha applied the same way), so results are identical.
// The loop runs through a Split policy (loop_split.h): SerialSplit here;
// the optimized library's float32 kernels (kernels/optimized/op_arith.cpp)
// pass one that spreads large calls over the thread pool. Each element is
// computed alone, so any split gives the same bytes.
// Header-only: each operator instantiates only its own paths, so a
// selective build links only the operators it lists.
#pragma once

#include <cmath>
#include <limits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/loop_split.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/portable/util/opmath.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel.h"

namespace torchlight::portable::arith_fast_path {

enum class Arith { kAdd, kSub, kMul, kDiv };

// Where an operator's arguments sit: every variant has self at 0.
struct ArithLayout {
  Arith op;
  bool scalar_other;  // .Scalar_out: `other` is a Scalar, not a Tensor.
  int alpha;          // Position of alpha, or -1 (mul, div).
  int out;            // Position of out; the return slot follows it.
};

inline constexpr ArithLayout kAddOut{Arith::kAdd, false, 2, 3};
inline constexpr ArithLayout kAddScalarOut{Arith::kAdd, true, 2, 3};
inline constexpr ArithLayout kSubOut{Arith::kSub, false, 2, 3};
inline constexpr ArithLayout kSubScalarOut{Arith::kSub, true, 2, 3};
inline constexpr ArithLayout kMulOut{Arith::kMul, false, -1, 2};
inline constexpr ArithLayout kMulScalarOut{Arith::kMul, true, -1, 2};
inline constexpr ArithLayout kDivOut{Arith::kDiv, false, -1, 2};
inline constexpr ArithLayout kDivScalarOut{Arith::kDiv, true, -1, 2};

// A Scalar argument as T, when it is an Int or a Double that T holds; the
// reference kernel decides everything else (Bool, overflow).
template <typename T>
bool scalar_as(const EValue& value, T* out) {
  if (value.is_double()) {
    const double v = value.to_double();
    if (std::isfinite(v) && std::fabs(v) > static_cast<double>(std::numeric_limits<T>::max())) {
      return false;
    }
    *out = static_cast<T>(v);
    return true;
  }
  if (value.is_int()) {
    *out = static_cast<T>(value.to_int());
    return true;
  }
  return false;
}

template <typename T, Arith kOp>
T apply(T a, T b, T alpha) {
  if constexpr (kOp == Arith::kAdd) return opmath_add(a, opmath_mul(alpha, b));
  if constexpr (kOp == Arith::kSub) return opmath_sub(a, opmath_mul(alpha, b));
  if constexpr (kOp == Arith::kMul) return a * b;
  return a / b;
}

inline bool same_sizes(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (size_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) != b.size(d)) return false;
  }
  return true;
}

// A tensor `other` of another shape: self and other broadcast to out's
// shape, the loop walking runs of the innermost merged dimension.
template <typename T, const ArithLayout& L, KernelFunction reference, typename Split>
void broadcast_eval(KernelContext& ctx, Span<EValue*> args, const Tensor& self,
                    const Tensor& other, T alpha) {
  const Tensor out = args[L.out]->to_tensor();
  BroadcastShape shape;
  if (!compute_broadcast_shape({self, "self"}, {other, "other"}, &shape).ok()) {
    return reference(ctx, args);  // It names the shapes.
  }
  if (!dense_copy::fit_sizes(shape.span(), out)) return reference(ctx, args);
  const int64_t n = out.numel();
  const T* a = self.template const_data_ptr<T>();
  const T* b = other.template const_data_ptr<T>();
  T* z = out.template mutable_data_ptr<T>();
  if (n > 0 && (a == nullptr || b == nullptr || z == nullptr)) return reference(ctx, args);
  // Writing out over an operand read at other positions would change later
  // reads; an operand of out's own shape is read at each position first.
  if ((self.numel() != n && storage_overlaps(out, self)) ||
      (other.numel() != n && storage_overlaps(out, other))) {
    return reference(ctx, args);
  }
  BroadcastIndexer walk;
  const NamedTensor operands[] = {{self, "self"}, {other, "other"}, {out, "out"}};
  if (!walk.init(shape.span(), operands).ok() || (n > 1 && walk.run_stride(2) != 1)) {
    return reference(ctx, args);
  }
  *args[L.out + 1] = *args[L.out];
  const int64_t sa = walk.run_stride(0);
  const int64_t sb = walk.run_stride(1);
  Split::run(n, sizeof(T), [&](int64_t begin, int64_t end) {
    walk.for_each_run(begin, end, [&](const int64_t* at, int64_t length) {
      const T* x = a + at[0];
      const T* y = b + at[1];
      T* o = z + at[2];  // out is dense: its run stride is 1.
      if (sa == 1 && sb == 1) {
        for (int64_t k = 0; k < length; ++k) o[k] = apply<T, L.op>(x[k], y[k], alpha);
      } else if (sa == 1 && sb == 0) {
        const T v = *y;
        for (int64_t k = 0; k < length; ++k) o[k] = apply<T, L.op>(x[k], v, alpha);
      } else if (sa == 0 && sb == 1) {
        const T v = *x;
        for (int64_t k = 0; k < length; ++k) o[k] = apply<T, L.op>(v, y[k], alpha);
      } else {
        for (int64_t k = 0; k < length; ++k) o[k] = apply<T, L.op>(x[k * sa], y[k * sb], alpha);
      }
    });
  });
}

// The eval prepare installs. `reference` is the self-checking kernel;
// Split::run(n, sizeof(T), loop) runs the element loop over [0, n).
template <typename T, const ArithLayout& L, KernelFunction reference, typename Split = SerialSplit>
void fast_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor out = args[L.out]->to_tensor();
  T alpha = 1;
  if constexpr (L.alpha >= 0) {
    if (!scalar_as(*args[L.alpha], &alpha)) return reference(ctx, args);
  }
  const int64_t n = self.numel();
  const T* a = self.template const_data_ptr<T>();
  T* z = out.template mutable_data_ptr<T>();
  if (n > 0 && (a == nullptr || z == nullptr)) return reference(ctx, args);

  T scalar_b = 0;
  const T* b = nullptr;
  if constexpr (L.scalar_other) {
    if (!scalar_as(*args[1], &scalar_b)) return reference(ctx, args);
  } else {
    const Tensor other = args[1]->to_tensor();
    if (same_sizes(self, other)) {
      b = other.template const_data_ptr<T>();
      if (n > 0 && b == nullptr) return reference(ctx, args);
    } else if (other.numel() == 1 && other.dim() <= self.dim() && other.const_data_ptr() != nullptr) {
      scalar_b = *other.template const_data_ptr<T>();  // Broadcasts without changing the shape.
    } else {
      return broadcast_eval<T, L, reference, Split>(ctx, args, self, other, alpha);
    }
  }
  // The result has self's shape here. A dynamic out left at another call's
  // shape (an LLM's prefill after its decode steps, or the first of either)
  // is resized as the reference would; one that cannot be goes to the
  // reference, which reports it.
  if (!same_sizes(self, out) && !out.resize(self.sizes()).ok()) return reference(ctx, args);
  *args[L.out + 1] = *args[L.out];
  if (b != nullptr) {
    Split::run(n, sizeof(T), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = apply<T, L.op>(a[i], b[i], alpha);
    });
  } else {
    Split::run(n, sizeof(T), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) z[i] = apply<T, L.op>(a[i], scalar_b, alpha);
    });
  }
}

inline bool is_dense(const Tensor& t, ScalarType dtype) {
  return t.scalar_type() == dtype && is_contiguous_dim_order(t.dim_order());
}

// Picks fast_eval when every tensor is `float` or `double` in the default dim
// order; otherwise leaves the reference kernel in place.
template <const ArithLayout& L, KernelFunction reference, typename Split = SerialSplit>
Status prepare_arith(Span<EValue*> args, PreparedCall* call) {
  const Tensor self = args[0]->to_tensor();
  const ScalarType dtype = self.scalar_type();
  if (dtype != ScalarType::kFloat && dtype != ScalarType::kDouble) return Error::kOk;
  if (!is_dense(self, dtype) || !is_dense(args[L.out]->to_tensor(), dtype)) return Error::kOk;
  if (!L.scalar_other && !is_dense(args[1]->to_tensor(), dtype)) return Error::kOk;
  call->eval = dtype == ScalarType::kFloat ? &fast_eval<float, L, reference, Split>
                                           : &fast_eval<double, L, reference, Split>;
  return Error::kOk;
}

}  // namespace torchlight::portable::arith_fast_path
