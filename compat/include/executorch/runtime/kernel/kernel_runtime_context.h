// Upstream path; see compat/README.md.
#pragma once

#include "runtime/kernel/kernel_context.h"

namespace executorch::runtime {
using KernelRuntimeContext = ::torchlight::KernelContext;
}  // namespace executorch::runtime

namespace torch::executor {
using ::executorch::runtime::KernelRuntimeContext;
using RuntimeContext = KernelRuntimeContext;
}  // namespace torch::executor

/// In a kernel: when `cond` is false, fail with Error::`error_code` (the message
/// names the operator and the condition) and return `retval` (may be empty).
/// `error_code` is an Error name such as InvalidArgument.
#define ET_KERNEL_CHECK(ctx, cond, error_code, retval)                                              \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      (ctx).fail(::torchlight::Status::error(::torchlight::Error::error_code, "%s: check failed (%s)", \
                                             (ctx).operator_name(), #cond));                   \
      return retval;                                                                           \
    }                                                                                          \
  } while (0)

/// ET_KERNEL_CHECK with a printf-style message.
#define ET_KERNEL_CHECK_MSG(ctx, cond, error_code, retval, message, ...)                       \
  do {                                                                                    \
    if (!(cond)) {                                                                        \
      (ctx).fail(::torchlight::Status::error(::torchlight::Error::error_code, "%s: " message, \
                                             (ctx).operator_name(), ##__VA_ARGS__));      \
      return retval;                                                                      \
    }                                                                                     \
  } while (0)
