#include "kernels/portable/util/dtype_dispatch.h"
#include "runtime/core/testing/error_matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;

static_assert(std::is_same_v<cpp_type_t<ScalarType::kInt>, int32_t>);
static_assert(std::is_same_v<cpp_type_t<ScalarType::kBFloat16>, BFloat16>);
static_assert(kScalarTypeOf<uint8_t> == ScalarType::kByte);
static_assert(kScalarTypeOf<bool> == ScalarType::kBool);

const ScalarType kReal[] = {ScalarType::kByte,  ScalarType::kChar,     ScalarType::kShort,
                            ScalarType::kInt,   ScalarType::kLong,     ScalarType::kHalf,
                            ScalarType::kBFloat16, ScalarType::kFloat, ScalarType::kDouble,
                            ScalarType::kBool};

// A kernel-shaped function: records the C++ type's size and ScalarType.
void probe(KernelContext& ctx, ScalarType dtype, size_t* size, ScalarType* seen, bool* after) {
  TL_SWITCH_REAL_TYPES(dtype, ctx, "self", CTYPE, [&] {
    *size = sizeof(CTYPE);
    *seen = kScalarTypeOf<CTYPE>;
  });
  *after = true;
}

TEST(DtypeDispatchTest, RealSwitchBindsTheMatchingType) {
  for (ScalarType dtype : kReal) {
    KernelContext ctx(nullptr, nullptr, "test::probe");
    size_t size = 0;
    ScalarType seen = ScalarType::kQInt8;
    bool after = false;
    probe(ctx, dtype, &size, &seen, &after);
    EXPECT_FALSE(ctx.failed()) << to_string(dtype);
    EXPECT_EQ(size, element_size(dtype)) << to_string(dtype);
    EXPECT_EQ(seen, dtype);
    EXPECT_TRUE(after);
  }
}

TEST(DtypeDispatchTest, UnsupportedDtypeFailsAndReturns) {
  KernelContext ctx(nullptr, nullptr, "test::probe");
  size_t size = 0;
  ScalarType seen = ScalarType::kQInt8;
  bool after = false;
  probe(ctx, ScalarType::kQUInt8, &size, &seen, &after);
  ASSERT_TRUE(ctx.failed());
  EXPECT_THAT(ctx.status(),
              ErrorIs(Error::kInvalidType,
                      "test::probe: argument 'self' has dtype quint8, which is not supported"));
  EXPECT_FALSE(after);  // The enclosing function returned.
  EXPECT_EQ(size, 0u);
}

void float_only(KernelContext& ctx, ScalarType dtype, int* calls) {
  TL_SWITCH_FLOAT_TYPES(dtype, ctx, "input", CTYPE, [&] {
    // Discarded for the types it does not apply to: the lambda is generic.
    if constexpr (std::is_floating_point_v<CTYPE>) *calls += 1;
    else *calls += 100;
  });
}

void int_only(KernelContext& ctx, ScalarType dtype) {
  TL_SWITCH_INT_TYPES(dtype, ctx, "input", CTYPE, [&] {});
}

void no_bool(KernelContext& ctx, ScalarType dtype) {
  TL_SWITCH_REAL_TYPES_NO_BOOL(dtype, ctx, "input", CTYPE, [&] {});
}

TEST(DtypeDispatchTest, SubsetsAcceptOnlyTheirTypes) {
  int accepted_float = 0;
  int accepted_int = 0;
  int accepted_no_bool = 0;
  for (ScalarType dtype : kReal) {
    KernelContext f(nullptr, nullptr, "op");
    int calls = 0;
    float_only(f, dtype, &calls);
    accepted_float += f.failed() ? 0 : 1;
    EXPECT_EQ(f.failed(), !is_floating_point(dtype));
    KernelContext i(nullptr, nullptr, "op");
    int_only(i, dtype);
    accepted_int += i.failed() ? 0 : 1;
    EXPECT_EQ(i.failed(), !is_integral(dtype));
    KernelContext n(nullptr, nullptr, "op");
    no_bool(n, dtype);
    accepted_no_bool += n.failed() ? 0 : 1;
  }
  EXPECT_EQ(accepted_float, 4);
  EXPECT_EQ(accepted_int, 5);
  EXPECT_EQ(accepted_no_bool, 9);

  KernelContext ctx(nullptr, nullptr, "op");
  int calls = 0;
  float_only(ctx, ScalarType::kHalf, &calls);
  EXPECT_EQ(calls, 100);  // Half is a float dtype but not std::is_floating_point.
  float_only(ctx, ScalarType::kDouble, &calls);
  EXPECT_EQ(calls, 101);
  KernelContext bad(nullptr, nullptr, "op");
  int_only(bad, ScalarType::kBool);
  EXPECT_THAT(bad.status().message(), HasSubstr("supported: uint8, int8, int16, int32, int64)"));
}

TEST(DtypeDispatchTest, VisitorsReturnWhetherTheyRan) {
  std::vector<size_t> sizes;
  EXPECT_TRUE(visit_real_type(ScalarType::kShort, [&](auto tag) {
    sizes.push_back(sizeof(typename decltype(tag)::type));
  }));
  EXPECT_FALSE(visit_real_type(ScalarType::kUInt32, [&](auto) { sizes.push_back(0); }));
  EXPECT_FALSE(visit_real_type_no_bool(ScalarType::kBool, [&](auto) { sizes.push_back(0); }));
  EXPECT_EQ(sizes, std::vector<size_t>{2});
}

}  // namespace
}  // namespace torchlight::portable
