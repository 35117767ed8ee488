// A kernel's prepare step run in a test as method load runs it: on a call
// the schema accepts (the loader checks that first), starting from the
// kernel's own eval, so a test sees what prepare installs or rejects.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/kernel/kernel.h"
#include "runtime/kernel/op_schema.h"

namespace torchlight::portable::kernel_test {

/// The portable kernel registered as `name` (a test failure, and the first
/// kernel, when there is none).
inline const Kernel& portable_kernel_named(const char* name) {
  for (const Kernel& k : portable_kernels()) {
    if (std::string(k.name) == name) return k;
  }
  ADD_FAILURE() << "no portable kernel " << name;
  return portable_kernels()[0];
}

struct Prepared {
  Status status;
  KernelFunction eval;  // The kernel's eval unless prepare installed another.
};

inline Prepared prepare_like_loader(const Kernel& kernel, KernelArgs& args) {
  EXPECT_TRUE(check_call(args.span(), *kernel.schema).ok()) << kernel.name;
  PreparedCall call;
  call.eval = kernel.eval;
  if (kernel.prepare == nullptr) return {Status(), call.eval};
  PrepareContext context(nullptr, kernel.name);
  Status status = kernel.prepare(context, args.span(), &call);
  return {status, call.eval};
}

}  // namespace torchlight::portable::kernel_test
