// Linked kernels: unboxed kernels that register themselves when their object
// file is linked, as upstream's EXECUTORCH_LIBRARY does.
//
//   TL_REGISTER_KERNEL(my_ops, "my_op.out", my_op_out);
//
// at namespace scope defines a static LinkedKernel that, before main, puts
// itself on a process-wide list (no heap: the list threads through the
// statics). The default registry (kernels/all_kernels.h, so Module's default
// form) registers the list after the built-in libraries, at priority
// kCustom; an explicit registry takes it with register_linked_kernels().
//
// A static library's object is linked only when something else references
// it: link a custom-kernel library with WHOLE_ARCHIVE (CMake's
// $<LINK_LIBRARY:WHOLE_ARCHIVE,lib>) or as an object library, as upstream
// requires too.
#pragma once

#include <cstddef>

#include "extension/kernel_util/unboxed_kernel.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight {

class LinkedKernel : public UnboxedKernel {
 public:
  template <auto Function>
  LinkedKernel(const char* name, UnboxedFunction<Function> function) : UnboxedKernel(name, function) {
    link();
  }

  /// The first of the list (the last linked), then next().
  static const LinkedKernel* first();
  const LinkedKernel* next() const { return next_; }

 private:
  void link();
  const LinkedKernel* next_ = nullptr;
};

/// Number of kernels on the list.
size_t linked_kernel_count();

/// Registers every linked kernel, in link order. Errors: as
/// KernelRegistry::register_kernel (a duplicate, a full registry).
Status register_linked_kernels(KernelRegistry& registry);

}  // namespace torchlight

#define TL_LINKED_KERNEL_CONCAT_(a, b) a##b
#define TL_LINKED_KERNEL_CONCAT(a, b) TL_LINKED_KERNEL_CONCAT_(a, b)

/// Registers `function` as the kernel of "ns::op_name" in the default
/// registry. At namespace scope; `op_name` is a string literal ("op.out").
#define TL_REGISTER_KERNEL(ns, op_name, function)                                        \
  static ::torchlight::LinkedKernel TL_LINKED_KERNEL_CONCAT(tl_linked_kernel_##ns##_, __LINE__)( \
      #ns "::" op_name, ::torchlight::unboxed<&function>)
