// Linked against torchlight_portable_kernels_add_only, made by
// torchlight_selective_kernel_library(... TABLE add_only OPS aten::add.out),
// beside the full portable library and Module without its defaults: every
// table has its own functions, so they link together without duplicates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "extension/module/module.h"
#include "kernels/portable/portable_kernels.h"
#include "runtime/core/testing/error_matchers.h"
#include "torchlight_portable_kernels_add_only.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

std::string fixture(const char* name) { return std::string(TORCHLIGHT_FIXTURES_DIR) + "/" + name; }

TEST(SelectiveBuildTest, TableHoldsOnlyTheSelectedOperator) {
  Span<const Kernel> kernels = add_only_kernels();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(std::string_view(kernels[0].name), "aten::add.out");
  EXPECT_EQ(kernels[0].priority, KernelPriority::kPortable);
  EXPECT_GT(portable_kernels().size(), 200u);  // The full table, linked beside it.
}

TEST(SelectiveBuildTest, RegistryHasAddButNotMul) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(register_add_only_kernels(registry).ok());
  EXPECT_TRUE(registry.has_kernel("aten::add.out"));
  EXPECT_FALSE(registry.has_kernel("aten::mul.out"));
  EXPECT_FALSE(registry.has_kernel("aten::add.Scalar_out"));
  Result<const Kernel*> mul = registry.resolve("aten::mul.out", {});
  EXPECT_THAT(mul.status(), ErrorIs(Error::kOperatorMissing, "aten::mul.out"));
}

TEST(SelectiveBuildTest, ModuleRunsAProgramOnTheSelectedTable) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(register_add_only_kernels(registry).ok());
  Module m(fixture("add.pte"), Module::LoadMode::kFile, registry);
  float a = 2.5f, b = -4.0f;
  SizesType sizes[] = {1};
  DimOrderType dim_order[] = {0};
  StridesType strides[] = {1};
  TensorImpl a_impl(ScalarType::kFloat, 1, sizes, &a, dim_order, strides);
  TensorImpl b_impl(ScalarType::kFloat, 1, sizes, &b, dim_order, strides);
  Result<std::vector<EValue>> out = m.forward({EValue(Tensor(&a_impl)), EValue(Tensor(&b_impl))});
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ(out->at(0).to_tensor().const_data_ptr<float>()[0], -1.5f);
}

TEST(SelectiveBuildTest, ProgramNeedingAnUnselectedOperatorNamesIt) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(register_add_only_kernels(registry).ok());
  Module m(fixture("linear_constant_buffer.pte"), Module::LoadMode::kFile, registry);
  EXPECT_THAT(m.load_method("forward"), ErrorIs(Error::kOperatorMissing, "aten::mul.out"));
}

}  // namespace
}  // namespace torchlight
