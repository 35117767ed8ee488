// The LLM kernel tests run the LLM table's kernels (run_kernel() finds each
// kernel's prepare step here).
#include "kernels/llm/llm_kernels.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable::kernel_test {

Span<const Span<const Kernel>> kernel_tables_under_test() {
  static const Span<const Kernel> tables[] = {llm_kernels()};
  return Span<const Span<const Kernel>>(tables);
}

}  // namespace torchlight::portable::kernel_test
