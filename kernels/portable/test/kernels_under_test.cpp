// The portable kernel tests run the portable table's kernels (run_kernel()
// finds each kernel's prepare step here).
#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable::kernel_test {

Span<const Span<const Kernel>> kernel_tables_under_test() {
  static const Span<const Kernel> tables[] = {portable_kernels()};
  return Span<const Span<const Kernel>>(tables);
}

}  // namespace torchlight::portable::kernel_test
