// Linked against torchlight_portable_kernels_add_only, made by
// torchlight_selective_kernel_library(... OPS aten::add.out).
#include <gtest/gtest.h>

#include <string_view>

#include "kernels/portable/portable_kernels.h"

namespace torchlight {
namespace {

TEST(SelectiveBuildTest, TableHoldsOnlyTheSelectedOperator) {
  Span<const Kernel> kernels = portable_kernels();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(std::string_view(kernels[0].name), "aten::add.out");
  EXPECT_EQ(kernels[0].priority, KernelPriority::kPortable);
}

TEST(SelectiveBuildTest, RegistryHasAddButNotMul) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  EXPECT_TRUE(registry.has_kernel("aten::add.out"));
  EXPECT_FALSE(registry.has_kernel("aten::mul.out"));
  EXPECT_FALSE(registry.has_kernel("aten::add.Scalar_out"));
  Result<const Kernel*> mul = registry.resolve("aten::mul.out", {});
  EXPECT_EQ(mul.error(), Error::kOperatorMissing);
}

}  // namespace
}  // namespace torchlight
