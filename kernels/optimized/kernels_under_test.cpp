// The optimized kernel tests compare optimized kernels with the portable
// ones, so run_kernel() looks for prepare steps in both tables.
#include "kernels/optimized/optimized_kernels.h"
#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable::kernel_test {

Span<const Span<const Kernel>> kernel_tables_under_test() {
  static const Span<const Kernel> tables[] = {optimized_kernels(), portable_kernels()};
  return Span<const Span<const Kernel>>(tables);
}

}  // namespace torchlight::portable::kernel_test
