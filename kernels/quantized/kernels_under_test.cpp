// The quantized kernel tests run the quantized library's kernels (and
// portable ones beside them), so run_kernel() looks for prepare steps in
// both tables.
#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/quantized/quantized_kernels.h"

namespace torchlight::portable::kernel_test {

Span<const Span<const Kernel>> kernel_tables_under_test() {
  static const Span<const Kernel> tables[] = {quantized_kernels(), portable_kernels()};
  return Span<const Span<const Kernel>>(tables);
}

}  // namespace torchlight::portable::kernel_test
