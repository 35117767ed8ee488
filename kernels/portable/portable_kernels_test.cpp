#include "kernels/portable/portable_kernels.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/portable/test/test_tensor.h"

namespace torchlight {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

TEST(PortableKernelsTest, TableListsEveryOperatorOfTheDefFile) {
  std::vector<std::string> names;
  for (const Kernel& k : portable_kernels()) {
    names.push_back(k.name);
    EXPECT_NE(k.function, nullptr);
    EXPECT_EQ(k.priority, KernelPriority::kPortable);
    EXPECT_EQ(k.key.num_tensors, 0u);
  }
  EXPECT_THAT(names, UnorderedElementsAre("aten::add.out", "aten::add.Scalar_out",
                                          "aten::mul.out", "aten::mul.Scalar_out"));
}

TEST(PortableKernelsTest, RegistersAndResolves) {
  StaticKernelRegistry<16> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  EXPECT_EQ(registry.kernels().size(), portable_kernels().size());
  const TensorArgMeta meta[] = {{ScalarType::kFloat, DimOrderKind::kContiguous}};
  Result<const Kernel*> add = registry.resolve("aten::add.out", meta);
  ASSERT_TRUE(add.ok());

  // Run it through the resolved pointer, as the executor would.
  TestTensor a(ScalarType::kFloat, {2}, {1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs args{a.evalue(), a.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  KernelContext ctx(nullptr, nullptr, (*add)->name);
  (*add)->function(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_THAT(out.values(), ElementsAre(2, 4));
}

TEST(PortableKernelsTest, RegisteringTwiceIsADuplicate) {
  StaticKernelRegistry<16> registry;
  ASSERT_TRUE(register_portable_kernels(registry).ok());
  EXPECT_EQ(register_portable_kernels(registry).code(), Error::kInvalidArgument);
}

TEST(PortableKernelsTest, FullRegistryIsOutOfResources) {
  StaticKernelRegistry<2> registry;
  EXPECT_EQ(register_portable_kernels(registry).code(), Error::kOutOfResources);
}

}  // namespace
}  // namespace torchlight
