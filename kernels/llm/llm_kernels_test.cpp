// The LLM kernel table: its entry, registration and duplicates.
#include <gtest/gtest.h>

#include "kernels/llm/llm_kernels.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

constexpr const char* kSdpa = "torchlight::sdpa_with_kv_cache.out";

TEST(LlmKernelsTest, TableHoldsTheFusedAttentionAtCustomPriority) {
  const Span<const Kernel> kernels = llm_kernels();
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_STREQ(kernels[0].name, kSdpa);
  EXPECT_EQ(kernels[0].eval, &llm::sdpa_with_kv_cache_out);
  EXPECT_EQ(kernels[0].priority, KernelPriority::kCustom);
  EXPECT_EQ(kernels[0].key.num_tensors, 0u);
}

TEST(LlmKernelsTest, RegistersOnceAndRejectsDuplicates) {
  StaticKernelRegistry<4> registry;
  ASSERT_TRUE(register_llm_kernels(registry).ok());
  EXPECT_TRUE(registry.has_kernel(kSdpa));
  constexpr TensorArgMeta kF32{ScalarType::kFloat, DimOrderKind::kContiguous};
  constexpr TensorArgMeta kI64{ScalarType::kLong, DimOrderKind::kContiguous};
  const TensorArgMeta meta[] = {kF32, kF32, kF32, kF32, kF32, kI64, kF32};
  Result<const Kernel*> kernel = registry.resolve(kSdpa, Span<const TensorArgMeta>(meta));
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ((*kernel)->eval, &llm::sdpa_with_kv_cache_out);
  const Status again = register_llm_kernels(registry);
  EXPECT_THAT(again, ErrorIs(Error::kInvalidArgument,
                             "kernel 'torchlight::sdpa_with_kv_cache.out' is registered"));
}

}  // namespace
}  // namespace torchlight
