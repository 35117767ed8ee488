// The optimized table: registration, and resolution against the portable
// library (float32 picks optimized, every other dtype portable), alone and
// through all_kernels().
#include "kernels/optimized/optimized_kernels.h"

#include <gtest/gtest.h>

#include <string_view>

#include "kernels/all_kernels.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

TensorArgMeta meta(ScalarType dtype, DimOrderKind order = DimOrderKind::kContiguous) {
  return TensorArgMeta{dtype, order};
}

TEST(OptimizedKernelsTest, TableListsTheMatmulFamilyAtOptimizedPriority) {
  const Span<const Kernel> kernels = optimized_kernels();
  ASSERT_EQ(kernels.size(), 4u);
  for (const Kernel& k : kernels) {
    EXPECT_EQ(k.priority, KernelPriority::kOptimized) << k.name;
    EXPECT_GE(k.key.num_tensors, 2u) << k.name;
    for (size_t i = 0; i < k.key.num_tensors; ++i) {
      EXPECT_FALSE(k.key.tensors[i].any_dtype) << k.name;
      EXPECT_EQ(k.key.tensors[i].dtype, ScalarType::kFloat) << k.name;
      EXPECT_EQ(k.key.tensors[i].dim_order, DimOrderKind::kAny) << k.name;
    }
  }
}

TEST(OptimizedKernelsTest, RegisteringTwiceIsADuplicate) {
  StaticKernelRegistry<16> registry;
  ASSERT_TRUE(register_optimized_kernels(registry).ok());
  const Status again = register_optimized_kernels(registry);
  EXPECT_THAT(again, ErrorIs(Error::kInvalidArgument,
                             "kernel 'aten::addmm.out' is registered twice with the same"));
  StaticKernelRegistry<2> small;
  EXPECT_THAT(register_optimized_kernels(small),
              ErrorIs(Error::kOutOfResources,
                      "kernel registry is full (2 entries) registering"));
}

TEST(OptimizedKernelsTest, FloatResolvesToOptimizedOtherDtypesToPortable) {
  StaticKernelRegistry<1024> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  ASSERT_TRUE(register_optimized_kernels(registry).ok());
  const TensorArgMeta f32[] = {meta(ScalarType::kFloat), meta(ScalarType::kFloat),
                               meta(ScalarType::kFloat), meta(ScalarType::kFloat)};
  const TensorArgMeta f16[] = {meta(ScalarType::kHalf), meta(ScalarType::kHalf),
                               meta(ScalarType::kHalf), meta(ScalarType::kHalf)};
  // Any layout stays on the optimized kernel, which reads strides.
  const TensorArgMeta f32_permuted[] = {meta(ScalarType::kFloat, DimOrderKind::kAny),
                                        meta(ScalarType::kFloat, DimOrderKind::kAny),
                                        meta(ScalarType::kFloat), meta(ScalarType::kFloat)};
  Result<const Kernel*> mm = registry.resolve("aten::mm.out", {f32, 3});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm.get()->eval, &optimized::mm_out);
  mm = registry.resolve("aten::mm.out", {f32_permuted, 3});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm.get()->eval, &optimized::mm_out);
  mm = registry.resolve("aten::mm.out", {f16, 3});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm.get()->eval, &portable::mm_out);

  // Metas follow schema positions: addmm's beta and alpha are not tensors.
  const TensorArgMeta scalar = {ScalarType::kFloat, DimOrderKind::kAny, false};
  const TensorArgMeta f32_addmm[] = {f32[0], f32[0], f32[0], scalar, scalar, f32[0]};
  const TensorArgMeta f32_linear_no_bias[] = {f32[0], f32[0], scalar, f32[0]};
  const TensorArgMeta f32_linear_f16_out[] = {f32[0], f32[0], scalar, f16[0]};
  Result<const Kernel*> addmm = registry.resolve("aten::addmm.out", f32_addmm);
  ASSERT_TRUE(addmm.ok());
  EXPECT_EQ(addmm.get()->eval, &optimized::addmm_out);
  Result<const Kernel*> bmm = registry.resolve("aten::bmm.out", {f16, 3});
  ASSERT_TRUE(bmm.ok());
  EXPECT_EQ(bmm.get()->eval, &portable::bmm_out);
  // linear without bias: the key skips the absent bias and checks out.
  Result<const Kernel*> linear = registry.resolve("aten::linear.out", f32_linear_no_bias);
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ(linear.get()->eval, &optimized::linear_out);
  linear = registry.resolve("aten::linear.out", f32_linear_f16_out);
  ASSERT_TRUE(linear.ok());
  EXPECT_EQ(linear.get()->eval, &portable::linear_out);
}

TEST(OptimizedKernelsTest, AllKernelsPicksOptimizedForFloat) {
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  // By schema position: linear(input, weight, bias, out) with a float bias.
  const TensorArgMeta f32[] = {meta(ScalarType::kFloat), meta(ScalarType::kFloat),
                               meta(ScalarType::kFloat), meta(ScalarType::kFloat)};
  for (std::string_view name : {"aten::mm.out", "aten::bmm.out", "aten::linear.out"}) {
    Result<const Kernel*> kernel = registry.get()->resolve(name, {f32, 4});
    ASSERT_TRUE(kernel.ok()) << name;
    EXPECT_EQ(kernel.get()->priority, KernelPriority::kOptimized) << name;
  }
}

}  // namespace
}  // namespace torchlight
