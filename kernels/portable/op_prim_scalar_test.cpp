// executorch_prim::*.Scalar: Python arithmetic on symbolic ints and floats.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <utility>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using ::testing::HasSubstr;

EValue Int(int64_t v) { return EValue(v); }
EValue Dbl(double v) { return EValue(v); }

// Runs a binary prim op; the result is the third slot.
EValue binary(KernelFunction fn, const char* name, EValue a, EValue b, Status* status = nullptr) {
  KernelArgs args{a, b, EValue()};
  Status s = run_kernel(fn, name, args);
  if (status != nullptr) *status = s;
  EXPECT_TRUE(status != nullptr || s.ok()) << s.message();
  return args[2];
}

EValue unary(KernelFunction fn, const char* name, EValue a, Status* status = nullptr) {
  KernelArgs args{a, EValue()};
  Status s = run_kernel(fn, name, args);
  if (status != nullptr) *status = s;
  EXPECT_TRUE(status != nullptr || s.ok()) << s.message();
  return args[1];
}

TEST(OpPrimScalarTest, IntArithmeticStaysInt) {
  EValue r = binary(&prim_add_scalar, "executorch_prim::add.Scalar", Int(7), Int(5));
  ASSERT_TRUE(r.is_int());
  EXPECT_EQ(r.to_int(), 12);
  EXPECT_EQ(binary(&prim_sub_scalar, "executorch_prim::sub.Scalar", Int(7), Int(5)).to_int(), 2);
  EXPECT_EQ(binary(&prim_mul_scalar, "executorch_prim::mul.Scalar", Int(-7), Int(5)).to_int(), -35);
  EXPECT_EQ(binary(&prim_add_scalar, "executorch_prim::add.Scalar", EValue(true), Int(1)).to_int(), 2);  // bool is int
}

TEST(OpPrimScalarTest, FloorDivIntIsPythonFloorDivisionOnInts) {
  // Upstream's runtime registers executorch_prim::floordiv.int beside .Scalar.
  const char* name = "executorch_prim::floordiv.int";
  EXPECT_EQ(binary(&prim_floordiv_int, name, Int(7), Int(2)).to_int(), 7 / 2);
  EXPECT_EQ(binary(&prim_floordiv_int, name, Int(-7), Int(2)).to_int(), -4);  // Python: -7 // 2
  EXPECT_EQ(binary(&prim_floordiv_int, name, Int(7), Int(-2)).to_int(), -4);
  Status s;
  binary(&prim_floordiv_int, name, Int(1), Int(0), &s);
  EXPECT_THAT(s.message(), HasSubstr("by zero"));
  binary(&prim_floordiv_int, name, Dbl(1.0), Int(2), &s);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "executorch_prim::floordiv.int (schema floordiv.int(int a,"));
}

TEST(OpPrimScalarTest, MixedArithmeticIsDouble) {
  EValue r = binary(&prim_mul_scalar, "executorch_prim::mul.Scalar", Int(3), Dbl(0.5));
  ASSERT_TRUE(r.is_double());
  EXPECT_DOUBLE_EQ(r.to_double(), 1.5);
  EXPECT_DOUBLE_EQ(binary(&prim_sub_scalar, "executorch_prim::sub.Scalar", Dbl(1.0), Int(3)).to_double(), -2.0);
}

TEST(OpPrimScalarTest, FloorDivAndModRoundTowardNegativeInfinity) {
  // Python: 7 // 2 == 3, -7 // 2 == -4, 7 // -2 == -4, -7 % 2 == 1, 7 % -2 == -1.
  EXPECT_EQ(binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Int(7), Int(2)).to_int(), 3);
  EXPECT_EQ(binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Int(-7), Int(2)).to_int(), -4);
  EXPECT_EQ(binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Int(7), Int(-2)).to_int(), -4);
  EXPECT_EQ(binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Int(-8), Int(2)).to_int(), -4);
  EXPECT_EQ(binary(&prim_mod_scalar, "executorch_prim::mod.Scalar", Int(-7), Int(2)).to_int(), 1);
  EXPECT_EQ(binary(&prim_mod_scalar, "executorch_prim::mod.Scalar", Int(7), Int(-2)).to_int(), -1);
  EXPECT_EQ(binary(&prim_mod_scalar, "executorch_prim::mod.Scalar", Int(6), Int(3)).to_int(), 0);
  // Floats: -7.5 // 2 == -4.0, -7.5 % 2 == 0.5, 7.5 % -2 == -0.5.
  EXPECT_DOUBLE_EQ(binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Dbl(-7.5), Int(2)).to_double(), -4.0);
  EXPECT_DOUBLE_EQ(binary(&prim_mod_scalar, "executorch_prim::mod.Scalar", Dbl(-7.5), Int(2)).to_double(), 0.5);
  EXPECT_DOUBLE_EQ(binary(&prim_mod_scalar, "executorch_prim::mod.Scalar", Dbl(7.5), Dbl(-2)).to_double(), -0.5);
}

TEST(OpPrimScalarTest, TrueDivIsAlwaysDouble) {
  EValue r = binary(&prim_truediv_scalar, "executorch_prim::truediv.Scalar", Int(7), Int(2));
  ASSERT_TRUE(r.is_double());
  EXPECT_DOUBLE_EQ(r.to_double(), 3.5);
}

TEST(OpPrimScalarTest, DivisionByZeroAndOverflowAreErrors) {
  Status s;
  binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Int(1), Int(0), &s);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "executorch_prim::floordiv.Scalar"));
  EXPECT_THAT(s.message(), HasSubstr("'b'"));
  binary(&prim_mod_scalar, "executorch_prim::mod.Scalar", Dbl(1), Dbl(0), &s);
  EXPECT_FALSE(s.ok());
  binary(&prim_truediv_scalar, "executorch_prim::truediv.Scalar", Int(1), Int(0), &s);
  EXPECT_FALSE(s.ok());
  binary(&prim_mul_scalar, "executorch_prim::mul.Scalar", Int(INT64_MAX), Int(2), &s);
  EXPECT_THAT(s.message(), HasSubstr("overflows"));
  binary(&prim_add_scalar, "executorch_prim::add.Scalar", Int(INT64_MAX), Int(1), &s);
  EXPECT_FALSE(s.ok());
  binary(&prim_floordiv_scalar, "executorch_prim::floordiv.Scalar", Int(INT64_MIN), Int(-1), &s);
  EXPECT_FALSE(s.ok());
  unary(&prim_neg_scalar, "executorch_prim::neg.Scalar", Int(INT64_MIN), &s);
  EXPECT_FALSE(s.ok());
}

TEST(OpPrimScalarTest, Comparisons) {
  auto cmp = [](KernelFunction fn, EValue a, EValue b) {
    const std::pair<KernelFunction, const char*> names[] = {
        {&prim_eq_scalar, "executorch_prim::eq.Scalar"}, {&prim_ne_scalar, "executorch_prim::ne.Scalar"},
        {&prim_lt_scalar, "executorch_prim::lt.Scalar"}, {&prim_le_scalar, "executorch_prim::le.Scalar"},
        {&prim_gt_scalar, "executorch_prim::gt.Scalar"}, {&prim_ge_scalar, "executorch_prim::ge.Scalar"}};
    const char* name = "";
    for (const auto& [f, n] : names) {
      if (f == fn) name = n;
    }
    EValue r = binary(fn, name, a, b);
    EXPECT_TRUE(r.is_bool());
    return r.to_bool();
  };
  EXPECT_TRUE(cmp(&prim_eq_scalar, Int(3), Dbl(3.0)));
  EXPECT_FALSE(cmp(&prim_ne_scalar, Int(3), Int(3)));
  EXPECT_TRUE(cmp(&prim_lt_scalar, Int(2), Dbl(2.5)));
  EXPECT_TRUE(cmp(&prim_le_scalar, Int(2), Int(2)));
  EXPECT_TRUE(cmp(&prim_gt_scalar, Dbl(2.5), Int(2)));
  EXPECT_FALSE(cmp(&prim_ge_scalar, Int(1), Int(2)));
  // Exact for int64 values that double cannot hold.
  EXPECT_FALSE(cmp(&prim_eq_scalar, Int((int64_t{1} << 53) + 1), Dbl(9007199254740992.0)));
  // NaN compares unordered: only != holds.
  EXPECT_FALSE(cmp(&prim_eq_scalar, Dbl(NAN), Dbl(NAN)));
  EXPECT_TRUE(cmp(&prim_ne_scalar, Dbl(NAN), Int(1)));
  EXPECT_FALSE(cmp(&prim_lt_scalar, Dbl(NAN), Int(1)));
  EXPECT_FALSE(cmp(&prim_ge_scalar, Dbl(NAN), Int(1)));
}

TEST(OpPrimScalarTest, UnaryOps) {
  EXPECT_EQ(unary(&prim_neg_scalar, "executorch_prim::neg.Scalar", Int(4)).to_int(), -4);
  EXPECT_DOUBLE_EQ(unary(&prim_neg_scalar, "executorch_prim::neg.Scalar", Dbl(1.5)).to_double(), -1.5);
  EValue f = unary(&prim_sym_float_scalar, "executorch_prim::sym_float.Scalar", Int(3));
  ASSERT_TRUE(f.is_double());
  EXPECT_DOUBLE_EQ(f.to_double(), 3.0);
  EValue i = unary(&prim_sym_int_scalar, "executorch_prim::sym_int.Scalar", Dbl(-2.7));
  ASSERT_TRUE(i.is_int());
  EXPECT_EQ(i.to_int(), -2);
  Status s;
  unary(&prim_sym_int_scalar, "executorch_prim::sym_int.Scalar", Dbl(NAN), &s);
  EXPECT_FALSE(s.ok());
  unary(&prim_sym_int_scalar, "executorch_prim::sym_int.Scalar", Dbl(1e30), &s);
  EXPECT_FALSE(s.ok());
}

TEST(OpPrimScalarTest, MaxMin) {
  EValue m = binary(&prim_sym_max_scalar, "executorch_prim::sym_max.Scalar", Int(3), Int(8));
  ASSERT_TRUE(m.is_int());
  EXPECT_EQ(m.to_int(), 8);
  EXPECT_EQ(binary(&prim_sym_min_scalar, "executorch_prim::sym_min.Scalar", Int(3), Int(8)).to_int(), 3);
  EXPECT_DOUBLE_EQ(binary(&prim_sym_max_scalar, "executorch_prim::sym_max.Scalar", Int(3), Dbl(2.5)).to_double(), 3.0);
}

TEST(OpPrimScalarTest, RejectsNonScalars) {
  kernel_test::TestTensor t(ScalarType::kFloat, {1});
  KernelArgs args{t.evalue(), Int(1), EValue()};
  Status s = run_kernel(&prim_add_scalar, "executorch_prim::add.Scalar", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'a'"));
  KernelArgs too_few{Int(1), EValue()};
  EXPECT_THAT(run_kernel(&prim_add_scalar, "executorch_prim::add.Scalar", too_few),
              ErrorIs(Error::kInvalidArgument,
                      "executorch_prim::add.Scalar (schema add.Scalar(Scalar a,"));
}

}  // namespace
}  // namespace torchlight::portable
