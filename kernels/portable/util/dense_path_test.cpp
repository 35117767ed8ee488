// The prepared dense paths of the elementwise families (dense_path.h): for
// every portable kernel whose prepare is a unary, binary or binary-Scalar
// dense path, the eval prepare installs gives bit-identical results to the
// reference eval, on the fast cases and on the ones it hands back
// (broadcasting, conversions, a Scalar that promotes); a dtype the op
// refuses is rejected at prepare (load) with the argument named and the same
// message the reference eval gives.
#include "kernels/portable/util/dense_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::Prepared;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

enum class Shape { kUnary, kBinary, kBinaryScalar, kOther };

// Which dense path a kernel's schema fits: (self, out), (self, other, out)
// or (self, Scalar other, out), each followed by the return slot.
Shape shape_of(const Kernel& kernel) {
  // The matrix products share the (self, other, out) schema but are not
  // elementwise (their prepared evals: util/copy_sort_prepared_test.cpp).
  const std::string name = kernel.name;
  if (name == "aten::mm.out" || name == "aten::bmm.out") return Shape::kOther;
  const Span<const ArgSpec> a = kernel.schema->arg_specs();
  auto is = [&](size_t i, ArgType t) { return i < a.size() && a[i].type == t; };
  if (a.size() == 3 && is(0, ArgType::kTensor) && is(1, ArgType::kTensor) &&
      is(2, ArgType::kReturn)) {
    return Shape::kUnary;
  }
  if (a.size() == 4 && is(0, ArgType::kTensor) && is(2, ArgType::kTensor)) {
    if (is(1, ArgType::kTensor)) return Shape::kBinary;
    if (is(1, ArgType::kScalar)) return Shape::kBinaryScalar;
  }
  return Shape::kOther;
}

// The portable kernels with a prepare step of the given shape.
std::vector<const Kernel*> prepared_kernels(Shape shape) {
  std::vector<const Kernel*> found;
  for (const Kernel& k : portable_kernels()) {
    if (k.prepare != nullptr && shape_of(k) == shape) found.push_back(&k);
  }
  return found;
}

std::vector<double> values_for(ScalarType dtype, size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<double> v(n);
  if (is_floating_point(dtype)) {
    std::uniform_real_distribution<double> dist(-4.0, 4.0);
    const double specials[] = {std::numeric_limits<double>::quiet_NaN(), INFINITY, -INFINITY,
                               0.0, -0.0, 0.5, -2.0};
    for (size_t i = 0; i < n; ++i) v[i] = i < 7 ? specials[(i + seed) % 7] : dist(rng);
  } else {
    std::uniform_int_distribution<int> dist(-40, 40);
    for (size_t i = 0; i < n; ++i) v[i] = dist(rng);
  }
  return v;
}

bool same_bits(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  return x.nbytes() == y.nbytes() &&
         std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0;
}

// Runs one call through what prepare installs and through the reference on
// fresh outs and compares; returns whether prepare took a dense path.
// `make_args(out)` builds the call around `out`.
template <typename MakeArgs>
bool expect_identical(const Kernel& kernel, ScalarType out_dtype,
                      std::vector<SizesType> out_sizes, const MakeArgs& make_args) {
  TestTensor fast_out(out_dtype, out_sizes);
  TestTensor reference_out(out_dtype, out_sizes);
  KernelArgs& fast_args = make_args(fast_out);
  const Prepared p = prepare_like_loader(kernel, fast_args);
  KernelArgs& reference_args = make_args(reference_out);
  KernelContext reference_ctx(nullptr, nullptr, kernel.name);
  kernel.eval(reference_ctx, reference_args.span());
  if (!p.status.ok()) {
    // Rejected at load: the reference eval refuses the call the same way.
    EXPECT_TRUE(reference_ctx.failed()) << p.status.message();
    EXPECT_THAT(reference_ctx.status().message(), HasSubstr(p.status.message()));
    return false;
  }
  KernelContext fast_ctx(nullptr, nullptr, kernel.name);
  p.eval(fast_ctx, fast_args.span());
  EXPECT_EQ(fast_ctx.failed(), reference_ctx.failed()) << reference_ctx.status().message();
  if (reference_ctx.failed()) {
    EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
  } else {
    EXPECT_TRUE(same_bits(fast_out, reference_out));
    EXPECT_EQ(fast_out.sizes(), reference_out.sizes());
  }
  return p.eval != kernel.eval;
}

constexpr ScalarType kDenseTypes[] = {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kInt,
                                      ScalarType::kLong};

TEST(DensePathTest, EveryPreparedFamilyIsCovered) {
  EXPECT_GE(prepared_kernels(Shape::kUnary).size(), 35u);
  EXPECT_GE(prepared_kernels(Shape::kBinary).size(), 14u);
  EXPECT_GE(prepared_kernels(Shape::kBinaryScalar).size(), 9u);
}

TEST(DensePathTest, UnaryFastPathIsBitIdenticalToTheReference) {
  for (const Kernel* kernel : prepared_kernels(Shape::kUnary)) {
    size_t fast = 0;
    for (ScalarType dtype : kDenseTypes) {
      for (ScalarType out_dtype : {dtype, ScalarType::kBool, ScalarType::kFloat}) {
        SCOPED_TRACE(std::string(kernel->name) + " " + to_string(dtype) + " -> " +
                     to_string(out_dtype));
        TestTensor self(dtype, {3, 7}, values_for(dtype, 21, 1));
        std::vector<std::unique_ptr<KernelArgs>> keep;
        auto make = [&](TestTensor& out) -> KernelArgs& {
          keep.push_back(std::make_unique<KernelArgs>(
              std::initializer_list<EValue>{self.evalue(), out.evalue(), EValue()}));
          return *keep.back();
        };
        fast += expect_identical(*kernel, out_dtype, {3, 7}, make) ? 1 : 0;
      }
    }
    EXPECT_GT(fast, 0u) << kernel->name << " never took its dense path";
  }
}

TEST(DensePathTest, BinaryFastPathIsBitIdenticalToTheReference) {
  for (const Kernel* kernel : prepared_kernels(Shape::kBinary)) {
    size_t fast = 0;
    for (ScalarType dtype : kDenseTypes) {
      for (ScalarType out_dtype : {dtype, ScalarType::kBool}) {
        // Same shape, a one-element other (fast), and a real broadcast and
        // mixed dtypes (the reference's).
        const std::vector<std::vector<SizesType>> others = {{4, 5}, {1}, {}, {5}};
        for (const std::vector<SizesType>& other_sizes : others) {
          for (ScalarType other_dtype : {dtype, ScalarType::kDouble}) {
            SCOPED_TRACE(std::string(kernel->name) + " " + to_string(dtype) + " with " +
                         to_string(other_dtype) + " -> " + to_string(out_dtype));
            int64_t other_n = 1;
            for (SizesType s : other_sizes) other_n *= s;
            TestTensor self(dtype, {4, 5}, values_for(dtype, 20, 2));
            TestTensor other(other_dtype, other_sizes,
                             values_for(other_dtype, static_cast<size_t>(other_n), 3));
            std::vector<std::unique_ptr<KernelArgs>> keep;
            auto make = [&](TestTensor& out) -> KernelArgs& {
              keep.push_back(std::make_unique<KernelArgs>(std::initializer_list<EValue>{
                  self.evalue(), other.evalue(), out.evalue(), EValue()}));
              return *keep.back();
            };
            fast += expect_identical(*kernel, out_dtype, {4, 5}, make) ? 1 : 0;
          }
        }
      }
    }
    EXPECT_GT(fast, 0u) << kernel->name << " never took its dense path";
  }
}

TEST(DensePathTest, BinaryScalarFastPathIsBitIdenticalToTheReference) {
  for (const Kernel* kernel : prepared_kernels(Shape::kBinaryScalar)) {
    size_t fast = 0;
    for (ScalarType dtype : kDenseTypes) {
      for (ScalarType out_dtype : {dtype, ScalarType::kBool}) {
        for (const EValue& scalar : {EValue(int64_t{3}), EValue(-1.5), EValue(true)}) {
          SCOPED_TRACE(std::string(kernel->name) + " " + to_string(dtype) + " with " +
                       to_string(scalar.tag()) + " -> " + to_string(out_dtype));
          TestTensor self(dtype, {2, 6}, values_for(dtype, 12, 4));
          std::vector<std::unique_ptr<KernelArgs>> keep;
          auto make = [&](TestTensor& out) -> KernelArgs& {
            keep.push_back(std::make_unique<KernelArgs>(
                std::initializer_list<EValue>{self.evalue(), scalar, out.evalue(), EValue()}));
            return *keep.back();
          };
          fast += expect_identical(*kernel, out_dtype, {2, 6}, make) ? 1 : 0;
        }
      }
    }
    EXPECT_GT(fast, 0u) << kernel->name << " never took its dense path";
  }
}

TEST(DensePathTest, ScalarKindChangedSinceLoadGoesToTheReference) {
  // eq.Scalar_out on int32 prepared with an Int; a later Double promotes to
  // float, which the int32 loop cannot do.
  TestTensor self(ScalarType::kInt, {3}, {1, 2, 3});
  TestTensor out(ScalarType::kBool, {3});
  KernelArgs args{self.evalue(), EValue(int64_t{2}), out.evalue(), EValue()};
  const Kernel* eq = nullptr;
  for (const Kernel& k : portable_kernels()) {
    if (std::string(k.name) == "aten::eq.Scalar_out") eq = &k;
  }
  ASSERT_NE(eq, nullptr);
  const Prepared p = prepare_like_loader(*eq, args);
  ASSERT_TRUE(p.status.ok());
  ASSERT_NE(p.eval, eq->eval);
  args[1] = EValue(2.5);
  KernelContext ctx(nullptr, nullptr, eq->name);
  p.eval(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(out.values(), std::vector<double>({0, 0, 0}));
}

TEST(DensePathTest, DynamicShapeResizesOutOnTheFastPath) {
  TestTensor self(ScalarType::kFloat, {4}, {-1, 2, -3, 4}, kernel_test::dynamic_bound());
  TestTensor out(ScalarType::kFloat, {4}, {}, kernel_test::dynamic_bound());
  KernelArgs args{self.evalue(), out.evalue(), EValue()};
  EXPECT_TRUE(kernel_test::run_kernel(&relu_out, "aten::relu.out", args).ok());
  const SizesType two[] = {2};
  ASSERT_TRUE(self.impl().resize({two, 1}).ok());
  EXPECT_TRUE(kernel_test::run_kernel(&relu_out, "aten::relu.out", args).ok());
  EXPECT_EQ(out.sizes(), std::vector<SizesType>({2}));
  EXPECT_EQ(out.values(), std::vector<double>({0, 2}));
}

TEST(DensePathTest, WrongDtypesAreRejectedAtPrepareNamingTheArgument) {
  // Through call_kernel, which runs prepare as method load does: the error
  // names the operator and the argument before any eval runs.
  TestTensor b(ScalarType::kBool, {2}, {1, 0});
  TestTensor b_out(ScalarType::kBool, {2});
  KernelArgs neg{b.evalue(), b_out.evalue(), EValue()};
  Status s = kernel_test::run_kernel(&neg_out, "aten::neg.out", neg);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "aten::neg.out"));
  EXPECT_THAT(s.message(), HasSubstr("'self' has dtype bool"));

  TestTensor f(ScalarType::kFloat, {2}, {1, 4});
  TestTensor i_out(ScalarType::kInt, {2});
  KernelArgs sqrt{f.evalue(), i_out.evalue(), EValue()};
  s = kernel_test::run_kernel(&sqrt_out, "aten::sqrt.out", sqrt);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'out'"));

  TestTensor f_out(ScalarType::kFloat, {2});
  KernelArgs bitwise{f.evalue(), f.evalue(), f_out.evalue(), EValue()};
  s = kernel_test::run_kernel(&bitwise_and_tensor_out, "aten::bitwise_and.Tensor_out", bitwise);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'self'"));

  KernelArgs bitwise_scalar{f.evalue(), EValue(int64_t{1}), f_out.evalue(), EValue()};
  s = kernel_test::run_kernel(&bitwise_or_scalar_out, "aten::bitwise_or.Scalar_out",
                              bitwise_scalar);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'self' has dtype float32"));
}


// ---- Elementwise ops with further arguments (gelu, leaky_relu, elu,
// ---- softplus, round.decimals, div with a rounding mode, pow.Scalar_out,
// ---- clamp.Tensor_out, masked_fill.Scalar_out) ----

// One call of `name` whose out is `out_dtype` of `out_sizes`, built by
// `args_around(out)` (which returns the full argument list as a
// std::vector<EValue>, return slot last): checks the dense path against the reference, counting in *fast
// the calls prepare gave a dense eval.
template <typename ArgsAround>
void expect_dense_matches(const char* name, ScalarType out_dtype,
                          std::vector<SizesType> out_sizes, const ArgsAround& args_around,
                          size_t* fast) {
  const Kernel& kernel = portable_kernel_named(name);
  ASSERT_NE(kernel.prepare, nullptr) << name;
  std::vector<std::unique_ptr<KernelArgs>> keep;
  auto make = [&](TestTensor& out) -> KernelArgs& {
    keep.push_back(std::make_unique<KernelArgs>(args_around(out)));
    return *keep.back();
  };
  *fast += expect_identical(kernel, out_dtype, out_sizes, make) ? 1 : 0;
}

TEST(DensePathTest, UnaryOpsWithParametersAreBitIdenticalToTheReference) {
  struct Case {
    const char* name;
    std::vector<EValue> parameters;  // Between self and out.
  };
  const Case cases[] = {
      {"aten::gelu.out", {EValue("none")}},
      {"aten::gelu.out", {EValue("tanh")}},
      {"aten::leaky_relu.out", {EValue(0.01)}},
      {"aten::leaky_relu.out", {EValue(int64_t{2})}},
      {"aten::elu.out", {EValue(1.0), EValue(int64_t{1}), EValue(1.0)}},
      {"aten::elu.out", {EValue(0.5), EValue(2.0), EValue(1.5)}},
      {"aten::softplus.out", {EValue(int64_t{1}), EValue(int64_t{20})}},
      {"aten::softplus.out", {EValue(2.0), EValue(0.5)}},
      {"aten::round.decimals_out", {EValue(int64_t{2})}},
      {"aten::round.decimals_out", {EValue(int64_t{-1})}},
  };
  for (const Case& c : cases) {
    size_t fast = 0;
    for (ScalarType dtype : kDenseTypes) {
      for (ScalarType out_dtype : {dtype, ScalarType::kFloat}) {
        SCOPED_TRACE(std::string(c.name) + " " + to_string(dtype) + " -> " +
                     to_string(out_dtype));
        TestTensor self(dtype, {3, 5}, values_for(dtype, 15, 5));
        expect_dense_matches(c.name, out_dtype, {3, 5}, [&](TestTensor& out) {
          std::vector<EValue> list{self.evalue()};
          list.insert(list.end(), c.parameters.begin(), c.parameters.end());
          list.push_back(out.evalue());
          list.push_back(EValue());
          return list;
        }, &fast);
      }
    }
    EXPECT_GT(fast, 0u) << c.name << " never took its dense path";
  }
}

TEST(DensePathTest, DivWithRoundingModeIsBitIdenticalToTheReference) {
  for (const char* mode : {"", "trunc", "floor"}) {
    const EValue rounding = *mode == 0 ? EValue() : EValue(mode);
    size_t fast = 0;
    size_t fast_scalar = 0;
    for (ScalarType dtype : kDenseTypes) {
      for (const std::vector<SizesType>& other_sizes :
           std::vector<std::vector<SizesType>>{{2, 4}, {1}, {4}}) {
        SCOPED_TRACE(std::string("mode '") + mode + "' " + to_string(dtype));
        int64_t other_n = 1;
        for (SizesType s : other_sizes) other_n *= s;
        TestTensor self(dtype, {2, 4}, values_for(dtype, 8, 6));
        TestTensor other(dtype, other_sizes, values_for(dtype, static_cast<size_t>(other_n), 7));
        expect_dense_matches("aten::div.out_mode", dtype, {2, 4}, [&](TestTensor& out) {
          return std::vector<EValue>{self.evalue(), other.evalue(), rounding, out.evalue(),
                                     EValue()};
        }, &fast);
        for (const EValue& scalar : {EValue(int64_t{3}), EValue(-1.5), EValue(int64_t{0})}) {
          auto args_around = [&](TestTensor& out) {
            return std::vector<EValue>{self.evalue(), scalar, rounding, out.evalue(), EValue()};
          };
          expect_dense_matches("aten::div.Scalar_mode_out", dtype, {2, 4}, args_around,
                               &fast_scalar);
        }
      }
    }
    EXPECT_GT(fast, 0u) << "div.out_mode '" << mode << "' never took its dense path";
    EXPECT_GT(fast_scalar, 0u) << "div.Scalar_mode_out '" << mode << "' never took it";
  }
  // A rounding mode no eval could take is rejected at load.
  TestTensor a(ScalarType::kFloat, {2}, {1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs args{a.evalue(), a.evalue(), EValue("round"), out.evalue(), EValue()};
  const Prepared p = prepare_like_loader(portable_kernel_named("aten::div.out_mode"), args);
  EXPECT_THAT(p.status, ErrorIs(Error::kInvalidArgument, "argument 'rounding_mode' is 'round'"));
}

TEST(DensePathTest, PowWithScalarBaseIsBitIdenticalToTheReference) {
  size_t fast = 0;
  for (ScalarType dtype : kDenseTypes) {
    for (ScalarType out_dtype : {dtype, ScalarType::kInt}) {
      for (const EValue& base : {EValue(int64_t{1}), EValue(2.5), EValue(int64_t{-3}),
                                 EValue(true)}) {
        SCOPED_TRACE(std::string(to_string(dtype)) + " with " + to_string(base.tag()) + " -> " +
                     to_string(out_dtype));
        TestTensor exponent(dtype, {7}, values_for(dtype, 7, 8));
        expect_dense_matches("aten::pow.Scalar_out", out_dtype, {7}, [&](TestTensor& out) {
          return std::vector<EValue>{base, exponent.evalue(), out.evalue(), EValue()};
        }, &fast);
      }
    }
  }
  EXPECT_GT(fast, 0u);
}

TEST(DensePathTest, ClampTensorIsBitIdenticalToTheReference) {
  size_t fast = 0;
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kInt,
                           ScalarType::kLong, ScalarType::kBool}) {
    for (int bounds : {1, 2, 3}) {  // min only, max only, both.
      for (const std::vector<SizesType>& bound_sizes :
           std::vector<std::vector<SizesType>>{{3, 4}, {4}}) {
        SCOPED_TRACE(std::string(to_string(dtype)) + " bounds " + std::to_string(bounds) +
                     " of rank " + std::to_string(bound_sizes.size()));
        const size_t bound_n = bound_sizes.size() == 2 ? 12 : 4;
        TestTensor self(dtype, {3, 4}, values_for(dtype, 12, 9));
        TestTensor lo(dtype, bound_sizes, values_for(dtype, bound_n, 10));
        TestTensor hi(dtype, bound_sizes, values_for(dtype, bound_n, 11));
        expect_dense_matches("aten::clamp.Tensor_out", dtype, {3, 4}, [&](TestTensor& out) {
          return std::vector<EValue>{self.evalue(), (bounds & 1) != 0 ? lo.evalue() : EValue(),
                            (bounds & 2) != 0 ? hi.evalue() : EValue(), out.evalue(), EValue()};
        }, &fast);
      }
    }
  }
  EXPECT_GT(fast, 0u);
  // Without a bound, the call is rejected at load.
  TestTensor a(ScalarType::kFloat, {2}, {1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs args{a.evalue(), EValue(), EValue(), out.evalue(), EValue()};
  const Prepared p = prepare_like_loader(portable_kernel_named("aten::clamp.Tensor_out"), args);
  EXPECT_THAT(p.status, ErrorIs(Error::kInvalidArgument, "'min' and 'max' must not be None"));
}

TEST(DensePathTest, MaskedFillIsBitIdenticalToTheReference) {
  size_t fast = 0;
  for (ScalarType dtype : kDenseTypes) {
    for (ScalarType mask_dtype : {ScalarType::kBool, ScalarType::kByte}) {
      for (const std::vector<SizesType>& mask_sizes :
           std::vector<std::vector<SizesType>>{{2, 5}, {5}}) {
        for (const EValue& value : {EValue(-1.5), EValue(int64_t{7}), EValue(1e300),
                                    EValue(int64_t{1} << 40), EValue(true)}) {
          SCOPED_TRACE(std::string(to_string(dtype)) + " mask " + to_string(mask_dtype) +
                       " value " + to_string(value.tag()));
          const size_t mask_n = mask_sizes.size() == 2 ? 10 : 5;
          std::vector<double> bits(mask_n);
          for (size_t i = 0; i < mask_n; ++i) bits[i] = (i * 7 + 3) % 3 == 0 ? 1 : 0;
          TestTensor self(dtype, {2, 5}, values_for(dtype, 10, 12));
          TestTensor mask(mask_dtype, mask_sizes, bits);
          auto args_around = [&](TestTensor& out) {
            return std::vector<EValue>{self.evalue(), mask.evalue(), value, out.evalue(),
                                       EValue()};
          };
          expect_dense_matches("aten::masked_fill.Scalar_out", dtype, {2, 5}, args_around,
                               &fast);
        }
      }
    }
  }
  EXPECT_GT(fast, 0u);
}

TEST(DensePathTest, ScalarThatPromotesSelfIsLeftToTheEval) {
  // bool fmod Int is int64 and int32 / Double is float32: prepare cannot
  // tell from self alone, so it accepts and the reference computes.
  TestTensor b(ScalarType::kBool, {3}, {1, 0, 1});
  TestTensor long_out(ScalarType::kLong, {3});
  KernelArgs fmod{b.evalue(), EValue(int64_t{2}), long_out.evalue(), EValue()};
  Status s = kernel_test::run_kernel(&fmod_scalar_out, "aten::fmod.Scalar_out", fmod);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(long_out.values(), std::vector<double>({1, 0, 1}));

  TestTensor i(ScalarType::kInt, {2}, {3, -3});
  TestTensor f_out(ScalarType::kFloat, {2});
  KernelArgs div{i.evalue(), EValue(2.0), EValue(), f_out.evalue(), EValue()};
  s = kernel_test::run_kernel(&div_scalar_mode_out, "aten::div.Scalar_mode_out", div);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(f_out.values(), std::vector<double>({1.5, -1.5}));
}

TEST(DensePathTest, ParameterDtypesAreRejectedAtPrepareNamingTheArgument) {
  TestTensor i(ScalarType::kInt, {2}, {1, 2});
  TestTensor i_out(ScalarType::kInt, {2});
  KernelArgs gelu{i.evalue(), EValue("none"), i_out.evalue(), EValue()};
  Status s = kernel_test::run_kernel(&gelu_out, "aten::gelu.out", gelu);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'self' has dtype int32"));

  KernelArgs bad_gelu{i.evalue(), EValue("erf"), i_out.evalue(), EValue()};
  const Prepared p = prepare_like_loader(portable_kernel_named("aten::gelu.out"), bad_gelu);
  EXPECT_THAT(p.status, ErrorIs(Error::kInvalidArgument, "'approximate' is 'erf'"));

  TestTensor f(ScalarType::kFloat, {2}, {1, 2});
  KernelArgs pow{f.evalue(), EValue(2.0), i_out.evalue(), EValue()};
  const Prepared pow_p = prepare_like_loader(portable_kernel_named("aten::pow.Tensor_Scalar_out"), pow);
  EXPECT_THAT(pow_p.status, ErrorIs(Error::kInvalidType, "'out'"));

  TestTensor f_out(ScalarType::kFloat, {2});
  KernelArgs fill{f.evalue(), i.evalue(), EValue(0.0), f_out.evalue(), EValue()};
  const Prepared fill_p = prepare_like_loader(portable_kernel_named("aten::masked_fill.Scalar_out"), fill);
  EXPECT_THAT(fill_p.status, ErrorIs(Error::kInvalidType, "argument 'mask' has dtype int32"));
}

}  // namespace
}  // namespace torchlight::portable
