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
#include <cmath>
#include <cstdint>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/result.h"

namespace torchlight::portable {

namespace {

bool is_integer(const EValue& v) { return v.is_int() || v.is_bool(); }

enum class Arith { kAdd, kSub, kMul, kFloorDiv, kMod, kMax, kMin };

Status int_arith(Arith op, int64_t a, int64_t b, int64_t* out) {
  bool overflow = false;
  switch (op) {
    case Arith::kAdd: overflow = __builtin_add_overflow(a, b, out); break;
    case Arith::kSub: overflow = __builtin_sub_overflow(a, b, out); break;
    case Arith::kMul: overflow = __builtin_mul_overflow(a, b, out); break;
    case Arith::kFloorDiv:
    case Arith::kMod: {
      TL_CHECK_OR_RETURN(b != 0, Error::kInvalidArgument,
                         "argument 'b' is 0: integer division or modulo by zero");
      overflow = a == INT64_MIN && b == -1;
      if (overflow) break;
      int64_t q = a / b;
      int64_t r = a % b;
      if (r != 0 && ((r < 0) != (b < 0))) {  // Round toward negative infinity.
        --q;
        r += b;
      }
      *out = op == Arith::kFloorDiv ? q : r;
      break;
    }
    case Arith::kMax: *out = a > b ? a : b; break;
    case Arith::kMin: *out = a < b ? a : b; break;
  }
  TL_CHECK_OR_RETURN(!overflow, Error::kInvalidArgument,
                     "the result of %lld and %lld overflows int64", static_cast<long long>(a),
                     static_cast<long long>(b));
  return Error::kOk;
}

Status double_arith(Arith op, double a, double b, double* out) {
  switch (op) {
    case Arith::kAdd: *out = a + b; break;
    case Arith::kSub: *out = a - b; break;
    case Arith::kMul: *out = a * b; break;
    case Arith::kFloorDiv:
    case Arith::kMod: {
      TL_CHECK_OR_RETURN(b != 0, Error::kInvalidArgument,
                         "argument 'b' is 0: float division or modulo by zero");
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
      *out = op == Arith::kFloorDiv ? div : mod;
      break;
    }
    // As Python's max(a, b) / min(a, b): b only when it compares greater / less.
    case Arith::kMax: *out = b > a ? b : a; break;
    case Arith::kMin: *out = b < a ? b : a; break;
  }
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

}  // namespace torchlight::portable
