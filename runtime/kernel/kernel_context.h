// KernelContext: what a kernel's eval may use besides its arguments: the
// state its prepare left, the method's scratch workspace, temporary memory
// (reset after every kernel) and a place to report failure.
#pragma once

#include <cstddef>

#include "runtime/core/memory_allocator.h"
#include "runtime/core/status.h"

namespace torchlight {

class EventTracer;

class KernelContext {
 public:
  /// `temp_allocator` and `event_tracer` may be null and must outlive the
  /// context. `operator_name` is a static or program-owned string.
  KernelContext(MemoryAllocator* temp_allocator, EventTracer* event_tracer,
                const char* operator_name)
      : temp_allocator_(temp_allocator), event_tracer_(event_tracer), operator_name_(operator_name) {}

  /// Set by the runtime before each eval (see PreparedCall).
  void set_call(const char* operator_name, const void* state) {
    operator_name_ = operator_name;
    state_ = state;
  }
  void set_scratch(void* scratch, size_t bytes) {
    scratch_ = scratch;
    scratch_bytes_ = bytes;
  }

  /// What this instruction's prepare stored; null for kernels without one.
  template <typename T>
  const T* state() const {
    return static_cast<const T*>(state_);
  }

  /// The method's workspace: at least the scratch_bytes this instruction's
  /// prepare asked for, aligned to 64, shared by every instruction (its
  /// contents do not survive the kernel).
  void* scratch() const { return scratch_; }
  size_t scratch_bytes() const { return scratch_bytes_; }

  /// Scratch memory valid until the kernel returns; null when none is left
  /// (the kernel then fails with kMemoryAllocationFailed).
  void* allocate_temp(size_t size, size_t alignment = MemoryAllocator::kDefaultAlignment) {
    return temp_allocator_ == nullptr ? nullptr : temp_allocator_->allocate(size, alignment);
  }

  /// Records the kernel's failure. The first failure wins.
  void fail(const Status& status) {
    if (status_.ok()) status_ = status;
  }
  bool failed() const { return !status_.ok(); }
  const Status& status() const { return status_; }

  const char* operator_name() const { return operator_name_; }
  EventTracer* event_tracer() const { return event_tracer_; }

 private:
  MemoryAllocator* temp_allocator_;
  EventTracer* event_tracer_;
  const char* operator_name_;
  const void* state_ = nullptr;
  void* scratch_ = nullptr;
  size_t scratch_bytes_ = 0;
  Status status_;
};

}  // namespace torchlight

/// In a kernel: when `cond` is false, fail with a message that starts with
/// the operator's name, and return.
#define TL_KERNEL_CHECK(ctx, cond, code, format, ...)                                    \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      (ctx).fail(::torchlight::Status::error((code), "%s: " format, (ctx).operator_name(), \
                                             ##__VA_ARGS__));                            \
      return;                                                                            \
    }                                                                                    \
  } while (0)

/// In a kernel: propagate a failed Status, prefixed by the operator's name.
#define TL_KERNEL_RETURN_IF_ERROR(ctx, expr)                       \
  do {                                                             \
    ::torchlight::Status tl_kernel_status_ = (expr);               \
    if (!tl_kernel_status_.ok()) {                                 \
      (ctx).fail(tl_kernel_status_.with_context("%s", (ctx).operator_name())); \
      return;                                                      \
    }                                                              \
  } while (0)
