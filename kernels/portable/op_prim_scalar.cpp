// executorch_prim::<op>.Scalar: Python arithmetic and comparisons on the
// symbolic ints and floats that torch.export leaves in graphs with dynamic
// shapes (operator.add, operator.floordiv, torch.sym_float, ...). They
// take and return EValues, not tensors: args = [a, b, return] (or [a,
// return] for the unary ones), and the kernel overwrites the return slot.
//
// Python semantics: Int op Int stays Int (Bool counts as Int), anything
// with a Double gives Double; // and % round toward negative infinity;
// / always gives Double. Where Python has arbitrary-precision ints, an
// int64 overflow is an error here, as is division or modulo by zero
// (Python's ZeroDivisionError).
//
// Prepare (at load) picks the loop for the kinds the arguments have then
// (both Int, or any Double): the kind check the schema already did leaves
// nothing to reject. The installed eval re-reads the tags, since an earlier
// instruction may write a value of another kind, and hands every other case
// (a Bool, an overflow, a zero divisor) to the reference eval, which reports
// it.
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"

namespace torchlight::portable {

namespace {

bool is_integer(const EValue& v) { return v.is_int() || v.is_bool(); }

enum class Arith { kAdd, kSub, kMul, kFloorDiv, kMod, kMax, kMin };

constexpr bool divides(Arith op) { return op == Arith::kFloorDiv || op == Arith::kMod; }

// a op b for two Ints; false where the result is an error (an int64
// overflow, a zero divisor), which int_arith words.
bool int_arith_exact(Arith op, int64_t a, int64_t b, int64_t* out) {
  switch (op) {
    case Arith::kAdd: return !__builtin_add_overflow(a, b, out);
    case Arith::kSub: return !__builtin_sub_overflow(a, b, out);
    case Arith::kMul: return !__builtin_mul_overflow(a, b, out);
    case Arith::kFloorDiv:
    case Arith::kMod: {
      if (b == 0 || (a == INT64_MIN && b == -1)) return false;
      int64_t q = a / b;
      int64_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) {  // Round toward negative infinity.
        --q;
        r += b;
      }
      *out = op == Arith::kFloorDiv ? q : r;
      return true;
    }
    case Arith::kMax: *out = a > b ? a : b; return true;
    case Arith::kMin: *out = a < b ? a : b; return true;
  }
  return false;
}

Status int_arith(Arith op, int64_t a, int64_t b, int64_t* out) {
  if (int_arith_exact(op, a, b, out)) return Error::kOk;
  TL_CHECK_OR_RETURN(!divides(op) || b != 0, Error::kInvalidArgument,
                     "argument 'b' is 0: integer division or modulo by zero");
  return Status::error(Error::kInvalidArgument, "the result of %lld and %lld overflows int64",
                       static_cast<long long>(a), static_cast<long long>(b));
}

// a op b in doubles; b != 0 for floordiv and mod.
double double_arith_value(Arith op, double a, double b) {
  switch (op) {
    case Arith::kAdd: return a + b;
    case Arith::kSub: return a - b;
    case Arith::kMul: return a * b;
    case Arith::kFloorDiv:
    case Arith::kMod: {
      // As CPython's float floordiv/mod: the remainder takes b's sign.
      double mod = std::fmod(a, b);
      double div = (a - mod) / b;
      if (mod != 0) {
        if ((b < 0) != (mod < 0)) {
          mod += b;
          div -= 1.0;
        }
      } else {
        mod = std::copysign(0.0, b);
      }
      if (div != 0) {
        const double floor_div = std::floor(div);
        if (div - floor_div > 0.5) div = floor_div + 1.0; else div = floor_div;
      } else {
        div = std::copysign(0.0, a / b);
      }
      return op == Arith::kFloorDiv ? div : mod;
    }
    // As Python's max(a, b) / min(a, b): b only when it compares greater / less.
    case Arith::kMax: return b > a ? b : a;
    case Arith::kMin: return b < a ? b : a;
  }
  return 0;
}

Status double_arith(Arith op, double a, double b, double* out) {
  TL_CHECK_OR_RETURN(!divides(op) || b != 0, Error::kInvalidArgument,
                     "argument 'b' is 0: float division or modulo by zero");
  *out = double_arith_value(op, a, b);
  return Error::kOk;
}

void binary_arith(KernelContext& ctx, Span<EValue*> args, Arith op) {
  const EValue& a = *args[0];
  const EValue& b = *args[1];
  if (is_integer(a) && is_integer(b)) {
    int64_t result = 0;
    TL_KERNEL_RETURN_IF_ERROR(ctx, int_arith(op, a.scalar_as_int(), b.scalar_as_int(), &result));
    set_return(args, 2, EValue(result));
    return;
  }
  double result = 0;
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, double_arith(op, a.scalar_as_double(), b.scalar_as_double(), &result));
  set_return(args, 2, EValue(result));
}

enum class Compare { kEq, kNe, kLt, kLe, kGt, kGe };

// a <=> b: -1, 0, 1, or 2 when unordered (a NaN). Int against Double in
// long double, which holds every int64 exactly on the supported targets.
int three_way(const EValue& a, const EValue& b) {
  if (is_integer(a) && is_integer(b)) {
    const int64_t x = a.scalar_as_int();
    const int64_t y = b.scalar_as_int();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const long double x = a.is_double() ? a.to_double() : static_cast<long double>(a.scalar_as_int());
  const long double y = b.is_double() ? b.to_double() : static_cast<long double>(b.scalar_as_int());
  if (x != x || y != y) return 2;
  return x < y ? -1 : (x > y ? 1 : 0);
}

void compare(KernelContext& ctx, Span<EValue*> args, Compare op) {
  const int c = three_way(*args[0], *args[1]);
  bool result = false;
  switch (op) {
    case Compare::kEq: result = c == 0; break;
    case Compare::kNe: result = c != 0; break;
    case Compare::kLt: result = c == -1; break;
    case Compare::kLe: result = c == -1 || c == 0; break;
    case Compare::kGt: result = c == 1; break;
    case Compare::kGe: result = c == 1 || c == 0; break;
  }
  set_return(args, 2, EValue(result));
}

}  // namespace

void prim_add_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kAdd);
}
void prim_sub_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kSub);
}
void prim_mul_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kMul);
}
void prim_floordiv_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kFloorDiv);
}
// executorch_prim::floordiv.int(int a, int b) -> int: upstream's runtime
// registers this int-only form beside floordiv.Scalar; Python's // here too.
void prim_floordiv_int(KernelContext& ctx, Span<EValue*> args) {
  int64_t result = 0;
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, int_arith(Arith::kFloorDiv, args[0]->to_int(), args[1]->to_int(), &result));
  set_return(args, 2, EValue(result));
}
void prim_mod_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kMod);
}
void prim_sym_max_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kMax);
}
void prim_sym_min_scalar(KernelContext& ctx, Span<EValue*> args) {
  binary_arith(ctx, args, Arith::kMin);
}

void prim_truediv_scalar(KernelContext& ctx, Span<EValue*> args) {
  const double b = args[1]->scalar_as_double();
  TL_KERNEL_CHECK(ctx, b != 0, Error::kInvalidArgument, "argument 'b' is 0: division by zero");
  set_return(args, 2, EValue(args[0]->scalar_as_double() / b));
}

void prim_eq_scalar(KernelContext& ctx, Span<EValue*> args) { compare(ctx, args, Compare::kEq); }
void prim_ne_scalar(KernelContext& ctx, Span<EValue*> args) { compare(ctx, args, Compare::kNe); }
void prim_lt_scalar(KernelContext& ctx, Span<EValue*> args) { compare(ctx, args, Compare::kLt); }
void prim_le_scalar(KernelContext& ctx, Span<EValue*> args) { compare(ctx, args, Compare::kLe); }
void prim_gt_scalar(KernelContext& ctx, Span<EValue*> args) { compare(ctx, args, Compare::kGt); }
void prim_ge_scalar(KernelContext& ctx, Span<EValue*> args) { compare(ctx, args, Compare::kGe); }

void prim_neg_scalar(KernelContext& ctx, Span<EValue*> args) {
  const EValue& a = *args[0];
  if (is_integer(a)) {
    const int64_t v = a.scalar_as_int();
    TL_KERNEL_CHECK(ctx, v != INT64_MIN, Error::kInvalidArgument,
                    "argument 'a' is %lld, whose negation overflows int64",
                    static_cast<long long>(v));
    set_return(args, 1, EValue(-v));
    return;
  }
  set_return(args, 1, EValue(-a.to_double()));
}

void prim_sym_float_scalar(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 1, EValue(args[0]->scalar_as_double()));
}

void prim_sym_int_scalar(KernelContext& ctx, Span<EValue*> args) {
  const EValue& a = *args[0];
  if (a.is_double()) {
    const double v = a.to_double();
    // Truncation toward zero, as Python's int(); NaN and out-of-range fail.
    TL_KERNEL_CHECK(ctx, v >= -9223372036854775808.0 && v < 9223372036854775808.0,
                    Error::kInvalidArgument, "argument 'a' is %g, which does not fit int64", v);
  }
  set_return(args, 1, EValue(a.scalar_as_int()));
}

namespace {

// Two Ints at load: Int arithmetic while both stay Ints.
template <Arith kOp, KernelFunction reference>
void int_arith_eval(KernelContext& ctx, Span<EValue*> args) {
  int64_t result = 0;
  if (!args[0]->is_int() || !args[1]->is_int() ||
      !int_arith_exact(kOp, args[0]->to_int(), args[1]->to_int(), &result)) {
    return reference(ctx, args);
  }
  set_return(args, 2, EValue(result));
}

// A Double at load: double arithmetic while one stays a Double.
template <Arith kOp, KernelFunction reference>
void double_arith_eval(KernelContext& ctx, Span<EValue*> args) {
  const EValue& a = *args[0];
  const EValue& b = *args[1];
  if (!a.is_double() && !b.is_double()) return reference(ctx, args);
  const double y = b.scalar_as_double();
  if (divides(kOp) && y == 0) return reference(ctx, args);
  set_return(args, 2, EValue(double_arith_value(kOp, a.scalar_as_double(), y)));
}

template <Arith kOp, KernelFunction reference>
Status prepare_arith(Span<EValue*> args, PreparedCall* call) {
  if (args[0]->is_int() && args[1]->is_int()) {
    call->eval = &int_arith_eval<kOp, reference>;
  } else if (args[0]->is_double() || args[1]->is_double()) {
    call->eval = &double_arith_eval<kOp, reference>;
  }
  return Error::kOk;
}

template <Compare kOp>
bool compare_values(int c) {
  switch (kOp) {
    case Compare::kEq: return c == 0;
    case Compare::kNe: return c != 0;
    case Compare::kLt: return c == -1;
    case Compare::kLe: return c == -1 || c == 0;
    case Compare::kGt: return c == 1;
    case Compare::kGe: return c == 1 || c == 0;
  }
  return false;
}

// Two values of kind T (int64_t or double) at load; while both keep it.
template <typename T, Compare kOp, KernelFunction reference>
void same_kind_compare_eval(KernelContext& ctx, Span<EValue*> args) {
  const EValue& a = *args[0];
  const EValue& b = *args[1];
  T x;
  T y;
  if constexpr (std::is_same_v<T, int64_t>) {
    if (!a.is_int() || !b.is_int()) return reference(ctx, args);
    x = a.to_int();
    y = b.to_int();
  } else {
    if (!a.is_double() || !b.is_double()) return reference(ctx, args);
    x = a.to_double();
    y = b.to_double();
  }
  const int c = x < y ? -1 : (x > y ? 1 : (x == y ? 0 : 2));  // 2: a NaN.
  set_return(args, 2, EValue(compare_values<kOp>(c)));
}

template <Compare kOp, KernelFunction reference>
Status prepare_compare(Span<EValue*> args, PreparedCall* call) {
  if (args[0]->is_int() && args[1]->is_int()) {
    call->eval = &same_kind_compare_eval<int64_t, kOp, reference>;
  } else if (args[0]->is_double() && args[1]->is_double()) {
    call->eval = &same_kind_compare_eval<double, kOp, reference>;
  }
  return Error::kOk;
}

// neg and sym_int of an Int: the Int case without the kind dispatch.
void neg_int_eval(KernelContext& ctx, Span<EValue*> args) {
  if (!args[0]->is_int() || args[0]->to_int() == INT64_MIN) return prim_neg_scalar(ctx, args);
  set_return(args, 1, EValue(-args[0]->to_int()));
}

void neg_double_eval(KernelContext& ctx, Span<EValue*> args) {
  if (!args[0]->is_double()) return prim_neg_scalar(ctx, args);
  set_return(args, 1, EValue(-args[0]->to_double()));
}

void sym_int_of_int_eval(KernelContext& ctx, Span<EValue*> args) {
  if (!args[0]->is_int()) return prim_sym_int_scalar(ctx, args);
  set_return(args, 1, *args[0]);
}

}  // namespace

#define TL_PRIM_ARITH_PREPARE(prepare, op, reference)                                 \
  Status prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {          \
    return prepare_arith<op, &reference>(args, call);                                \
  }
TL_PRIM_ARITH_PREPARE(prim_add_scalar_prepare, Arith::kAdd, prim_add_scalar)
TL_PRIM_ARITH_PREPARE(prim_sub_scalar_prepare, Arith::kSub, prim_sub_scalar)
TL_PRIM_ARITH_PREPARE(prim_mul_scalar_prepare, Arith::kMul, prim_mul_scalar)
TL_PRIM_ARITH_PREPARE(prim_floordiv_scalar_prepare, Arith::kFloorDiv, prim_floordiv_scalar)
TL_PRIM_ARITH_PREPARE(prim_floordiv_int_prepare, Arith::kFloorDiv, prim_floordiv_int)
TL_PRIM_ARITH_PREPARE(prim_mod_scalar_prepare, Arith::kMod, prim_mod_scalar)
TL_PRIM_ARITH_PREPARE(prim_sym_max_scalar_prepare, Arith::kMax, prim_sym_max_scalar)
TL_PRIM_ARITH_PREPARE(prim_sym_min_scalar_prepare, Arith::kMin, prim_sym_min_scalar)
#undef TL_PRIM_ARITH_PREPARE

#define TL_PRIM_COMPARE_PREPARE(prepare, op, reference)                               \
  Status prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {          \
    return prepare_compare<op, &reference>(args, call);                              \
  }
TL_PRIM_COMPARE_PREPARE(prim_eq_scalar_prepare, Compare::kEq, prim_eq_scalar)
TL_PRIM_COMPARE_PREPARE(prim_ne_scalar_prepare, Compare::kNe, prim_ne_scalar)
TL_PRIM_COMPARE_PREPARE(prim_lt_scalar_prepare, Compare::kLt, prim_lt_scalar)
TL_PRIM_COMPARE_PREPARE(prim_le_scalar_prepare, Compare::kLe, prim_le_scalar)
TL_PRIM_COMPARE_PREPARE(prim_gt_scalar_prepare, Compare::kGt, prim_gt_scalar)
TL_PRIM_COMPARE_PREPARE(prim_ge_scalar_prepare, Compare::kGe, prim_ge_scalar)
#undef TL_PRIM_COMPARE_PREPARE

Status prim_neg_scalar_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  if (args[0]->is_int()) call->eval = &neg_int_eval;
  if (args[0]->is_double()) call->eval = &neg_double_eval;
  return Error::kOk;
}

Status prim_sym_int_scalar_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  if (args[0]->is_int()) call->eval = &sym_int_of_int_eval;
  return Error::kOk;
}

}  // namespace torchlight::portable
