// The LLM kernel table: its entries, registration and duplicates.
#include <gtest/gtest.h>

#include "kernels/llm/llm_kernels.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

constexpr const char* kSdpa = "torchlight::sdpa_with_kv_cache.out";

TEST(LlmKernelsTest, TableHoldsTheFusedAttentionAndUpstreamsLlamaOpsAtCustomPriority) {
  const Span<const Kernel> kernels = llm_kernels();
  ASSERT_EQ(kernels.size(), 10u);
  EXPECT_STREQ(kernels[0].name, kSdpa);
  EXPECT_EQ(kernels[0].eval, &llm::sdpa_with_kv_cache_out);
  EXPECT_STREQ(kernels[1].name, "torchlight::rope_sdpa_with_kv_cache.out");
  EXPECT_EQ(kernels[1].eval, &llm::rope_sdpa_with_kv_cache_out);
  EXPECT_STREQ(kernels[2].name, "llama::update_cache.out");
  EXPECT_EQ(kernels[2].eval, &llm::llama_update_cache_out);
  EXPECT_STREQ(kernels[3].name, "llama::custom_sdpa.out");
  EXPECT_EQ(kernels[3].eval, &llm::llama_custom_sdpa_out);
  EXPECT_STREQ(kernels[4].name, "llama::sdpa_with_kv_cache.out");
  EXPECT_EQ(kernels[4].eval, &llm::llama_sdpa_with_kv_cache_out);
  EXPECT_STREQ(kernels[5].name, "torchlight::silu.out");
  EXPECT_EQ(kernels[5].eval, &llm::silu_out);
  EXPECT_STREQ(kernels[6].name, "torchlight::rms_norm.out");
  EXPECT_EQ(kernels[6].eval, &llm::rms_norm_out);
  EXPECT_STREQ(kernels[7].name, "torchlight::rope.out");
  EXPECT_EQ(kernels[7].eval, &llm::rope_out);
  EXPECT_STREQ(kernels[8].name, "torchlight::add_rms_norm.out");
  EXPECT_EQ(kernels[8].eval, &llm::add_rms_norm_out);
  EXPECT_STREQ(kernels[9].name, "torchlight::swiglu.out");
  EXPECT_EQ(kernels[9].eval, &llm::swiglu_out);
  for (const Kernel& kernel : kernels) {
    EXPECT_EQ(kernel.priority, KernelPriority::kCustom) << kernel.name;
    EXPECT_EQ(kernel.key.num_tensors, 0u) << kernel.name;
    ASSERT_NE(kernel.schema, nullptr) << kernel.name;
    EXPECT_STREQ(kernel.schema->name, kernel.name);
  }
}

TEST(LlmKernelsTest, RegistersOnceAndRejectsDuplicates) {
  StaticKernelRegistry<10> registry;
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
