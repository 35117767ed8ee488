// The process-wide registry holds the LLM kernels beside the portable ones.
#include <gtest/gtest.h>

#include "kernels/all_kernels.h"

namespace torchlight {
namespace {

TEST(LlmKernelsTest, AllKernelsIncludesThemBesidePortable) {
  Result<const KernelRegistry*> registry = all_kernels();
  ASSERT_TRUE(registry.ok()) << registry.status().message();
  EXPECT_TRUE((*registry)->has_kernel("torchlight::sdpa_with_kv_cache.out"));
  EXPECT_TRUE((*registry)->has_kernel("aten::add.out"));
}

}  // namespace
}  // namespace torchlight
