// The prepared paths of the ops on values: executorch_prim::<op>.Scalar
// (an eval per argument kind, picked at load), sym_size.int, sym_stride.int
// and _local_scalar_dense. For each, what prepare installs returns exactly
// what the reference eval returns (same kind, same bits, same error) over
// Int / Double / Bool arguments and their edge values, also when an earlier
// instruction changed an argument's kind or a tensor's shape after load;
// what the program fixes (a 0-d self, a dim out of range, a dtype item()
// cannot read) is rejected at load naming the argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/portable/test/prepared_vs_reference.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using kernel_test::BuildCall;
using kernel_test::BuiltCall;
using kernel_test::expect_prepared_matches_reference;
using kernel_test::kAllDtypes;
using kernel_test::KernelArgs;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::prepare_status;
using kernel_test::Prepared;
using kernel_test::same_value;
using kernel_test::TestTensor;
using ::torchlight::testing::ErrorIs;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// Scalars of every kind, with the values the ops treat specially.
std::vector<EValue> scalars() {
  return {EValue(int64_t{7}),   EValue(int64_t{-3}), EValue(int64_t{0}), EValue(kMax),
          EValue(kMin),         EValue(int64_t{-1}), EValue(2.5),        EValue(-0.0),
          EValue(0.0),          EValue(-7.25),       EValue(NAN),        EValue(INFINITY),
          EValue(true),         EValue(false)};
}

BuildCall call_of(std::vector<EValue> inputs) {
  return [inputs] {
    BuiltCall call;
    std::vector<EValue> list = inputs;
    list.push_back(EValue());
    call.args = std::make_unique<KernelArgs>(std::move(list));
    return call;
  };
}

struct BinaryOp {
  const char* name;
  bool compare;  // A comparison: its own eval for two Ints or two Doubles.
};
const BinaryOp kBinaryOps[] = {
    {"executorch_prim::add.Scalar", false},      {"executorch_prim::sub.Scalar", false},
    {"executorch_prim::mul.Scalar", false},      {"executorch_prim::floordiv.Scalar", false},
    {"executorch_prim::mod.Scalar", false},      {"executorch_prim::sym_max.Scalar", false},
    {"executorch_prim::sym_min.Scalar", false},  {"executorch_prim::eq.Scalar", true},
    {"executorch_prim::ne.Scalar", true},        {"executorch_prim::lt.Scalar", true},
    {"executorch_prim::le.Scalar", true},        {"executorch_prim::gt.Scalar", true},
    {"executorch_prim::ge.Scalar", true},
};

TEST(ValueOpsPreparedTest, BinaryPrimOpsMatchTheReferenceForEveryPairOfKinds) {
  for (const BinaryOp& op : kBinaryOps) {
    for (const EValue& a : scalars()) {
      for (const EValue& b : scalars()) {
        SCOPED_TRACE(std::string(op.name) + " " + to_string(a.tag()) + " " + to_string(b.tag()));
        const bool installed = expect_prepared_matches_reference(op.name, call_of({a, b}));
        // Int with Int, and any Double (arithmetic) or Double with Double
        // (comparisons), get their own eval; a Bool keeps the reference.
        const bool ints = a.is_int() && b.is_int();
        const bool doubles = op.compare ? a.is_double() && b.is_double()
                                        : a.is_double() || b.is_double();
        EXPECT_EQ(installed, ints || doubles);
      }
    }
  }
  for (int64_t a : {int64_t{7}, int64_t{-7}, kMin}) {
    for (int64_t b : {int64_t{2}, int64_t{-2}, int64_t{0}, int64_t{-1}}) {
      EXPECT_TRUE(expect_prepared_matches_reference("executorch_prim::floordiv.int",
                                                    call_of({EValue(a), EValue(b)})));
    }
  }
}

TEST(ValueOpsPreparedTest, UnaryPrimOpsMatchTheReference) {
  for (const EValue& a : scalars()) {
    SCOPED_TRACE(to_string(a.tag()));
    EXPECT_EQ(expect_prepared_matches_reference("executorch_prim::neg.Scalar", call_of({a})),
              a.is_int() || a.is_double());
    EXPECT_EQ(expect_prepared_matches_reference("executorch_prim::sym_int.Scalar", call_of({a})),
              a.is_int());
  }
}

// Prepared for the kinds at load, run after an earlier instruction wrote
// another kind (or an edge value) into an argument: the result is still
// the reference's.
TEST(ValueOpsPreparedTest, AKindChangedAfterLoadGetsTheReferenceResult) {
  const EValue later[] = {EValue(2.5), EValue(true), EValue(int64_t{0}), EValue(kMin), EValue(NAN)};
  for (const BinaryOp& op : kBinaryOps) {
    const char* name = op.name;
    for (const EValue& at_load : {EValue(int64_t{5}), EValue(1.5)}) {
      for (const EValue& now : later) {
        SCOPED_TRACE(std::string(name) + " " + to_string(at_load.tag()) + " -> " +
                     to_string(now.tag()));
        KernelArgs fast{at_load, at_load, EValue()};
        const Prepared p = prepare_like_loader(portable_kernel_named(name), fast);
        ASSERT_TRUE(p.status.ok());
        KernelArgs reference{EValue(int64_t{-9}), now, EValue()};
        fast[0] = EValue(int64_t{-9});
        fast[1] = now;
        KernelContext fast_ctx(nullptr, nullptr, name);
        KernelContext reference_ctx(nullptr, nullptr, name);
        p.eval(fast_ctx, fast.span());
        portable_kernel_named(name).eval(reference_ctx, reference.span());
        EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
        EXPECT_TRUE(same_value(fast[2], reference[2]));
      }
    }
  }
}

TEST(ValueOpsPreparedTest, SizeAndStrideMatchTheReferenceAndFollowDynamicShapes) {
  TestTensor self(ScalarType::kFloat, {2, 3, 4, 5}, {}, kernel_test::dim_order({0, 2, 3, 1}));
  TestTensor dynamic(ScalarType::kFloat, {6, 4}, {}, kernel_test::dynamic_bound());
  for (const char* name : {"aten::sym_size.int", "aten::sym_stride.int"}) {
    for (int64_t dim = -4; dim < 4; ++dim) {
      SCOPED_TRACE(std::string(name) + " " + std::to_string(dim));
      EXPECT_TRUE(
          expect_prepared_matches_reference(name, call_of({self.evalue(), EValue(dim)})));
    }
    // Prepared at the upper bound, run at each size a dynamic dim takes.
    KernelArgs args{dynamic.evalue(), EValue(int64_t{0}), EValue()};
    const Prepared p = prepare_like_loader(portable_kernel_named(name), args);
    ASSERT_TRUE(p.status.ok());
    for (SizesType rows : {6, 2, 0, 5}) {
      const SizesType now[] = {rows, 4};
      ASSERT_TRUE(dynamic.impl().resize({now, 2}).ok());
      for (int64_t dim : {0, 1, -1}) {
        args[1] = EValue(dim);
        KernelContext ctx(nullptr, nullptr, name);
        p.eval(ctx, args.span());
        ASSERT_FALSE(ctx.failed());
        const Tensor t = dynamic.tensor();
        const size_t d = static_cast<size_t>(dim < 0 ? dim + 2 : dim);
        EXPECT_EQ(args[2].to_int(), std::string(name) == "aten::sym_size.int" ? t.size(d)
                                                                              : t.strides()[d]);
      }
    }
  }
}

TEST(ValueOpsPreparedTest, SizeAndStrideRejectAtLoadWhatTheProgramFixes) {
  TestTensor scalar(ScalarType::kFloat, {});
  TestTensor matrix(ScalarType::kFloat, {2, 3});
  EXPECT_THAT(prepare_status("aten::sym_size.int", call_of({scalar.evalue(), EValue(int64_t{0})})),
              ErrorIs(Error::kInvalidArgument, "argument 'self' is 0-d; it has no dimension to "
                                               "take the size of"));
  EXPECT_THAT(
      prepare_status("aten::sym_stride.int", call_of({scalar.evalue(), EValue(int64_t{0})})),
      ErrorIs(Error::kInvalidArgument, "take the stride of"));
  for (int64_t dim : {int64_t{2}, int64_t{-3}}) {
    for (const char* name : {"aten::sym_size.int", "aten::sym_stride.int"}) {
      EXPECT_THAT(prepare_status(name, call_of({matrix.evalue(), EValue(dim)})),
                  ErrorIs(Error::kInvalidArgument, "argument 'dim' is " + std::to_string(dim) +
                                                       ", out of range for a 2-d tensor"));
    }
  }
}

TEST(ValueOpsPreparedTest, ItemMatchesTheReferenceOverDtypes) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (double v : {0.0, 1.0, -3.5, 100.25, -0.0}) {
      TestTensor one(dtype, {1, 1}, {v});
      TestTensor zero_d(dtype, {}, {v});
      EXPECT_TRUE(expect_prepared_matches_reference("aten::_local_scalar_dense",
                                                    call_of({one.evalue()})));
      EXPECT_TRUE(expect_prepared_matches_reference("aten::_local_scalar_dense.default",
                                                    call_of({zero_d.evalue()})));
    }
    // Two elements: the reference's error, from the installed eval too.
    TestTensor two(dtype, {2}, {1, 2});
    EXPECT_TRUE(
        expect_prepared_matches_reference("aten::_local_scalar_dense", call_of({two.evalue()})));
  }
}

}  // namespace
}  // namespace torchlight::portable
