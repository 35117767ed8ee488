// Kernel: one implementation of an operator, as {name, schema, prepare, eval}.
//
// The runtime checks every call against the schema once, at method load
// (argument kinds; no constant where the kernel writes). Then `prepare`, if
// the kernel has one, runs once per instruction: it checks what does not
// change between runs (dtypes, dim orders, argument values that are
// constants), picks the implementation, sizes its scratch memory and keeps
// per-instruction state in method memory. `eval` runs on every execute and
// only computes, checking what depends on run-time shapes.
//
// A kernel without `prepare` is its own check: its `eval` validates the call
// on every run, as the portable reference kernels do.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/op_schema.h"

namespace torchlight {

/// `args` holds the schema arguments in order, then the return slot.
/// A kernel reports failure through ctx.fail() (see TL_KERNEL_CHECK).
using KernelFunction = void (*)(KernelContext& ctx, Span<EValue*> args);

/// What prepare decides for one instruction.
struct PreparedCall {
  KernelFunction eval = nullptr;  // The kernel's own eval unless prepare picks another.
  const void* state = nullptr;    // KernelContext::state() during eval.
  size_t scratch_bytes = 0;       // KernelContext::scratch() size eval needs.
};

/// What prepare may use: method memory that lives as long as the method,
/// the operator's name for messages, and which arguments are program
/// constants.
class PrepareContext {
 public:
  /// Arguments past this position always report "not constant".
  static constexpr size_t kMaxConstantArgs = 64;

  /// Bit k of `constant_args` set: argument k is a program constant.
  PrepareContext(MemoryAllocator* method_allocator, const char* operator_name,
                 uint64_t constant_args = 0)
      : allocator_(method_allocator), operator_name_(operator_name), constant_args_(constant_args) {}

  /// Memory for per-instruction state; null when the method allocator is
  /// exhausted (prepare then fails with kMemoryAllocationFailed).
  void* allocate(size_t size, size_t alignment = MemoryAllocator::kDefaultAlignment) {
    return allocator_ == nullptr ? nullptr : allocator_->allocate(size, alignment);
  }
  const char* operator_name() const { return operator_name_; }

  /// True when argument `position` is a tensor whose bytes the program holds
  /// (its constant segment or named data) and no instruction writes, so its
  /// contents at prepare are its contents on every execute: prepare may
  /// precompute from them (sums, repacks) into method memory. False for
  /// inputs, activations, mutable buffers and anything a delegate receives.
  bool is_constant(size_t position) const {
    return position < kMaxConstantArgs && ((constant_args_ >> position) & 1u) != 0;
  }

 private:
  MemoryAllocator* allocator_;
  const char* operator_name_;
  uint64_t constant_args_;
};

/// Errors name the argument and the reason; the runtime adds the operator.
using PrepareFunction = Status (*)(PrepareContext& ctx, Span<EValue*> args, PreparedCall* call);

enum class KernelPriority : uint8_t {
  kPortable = 0,
  kOptimized = 10,
  kCustom = 20,
};

/// Layout constraint for one tensor argument.
enum class DimOrderKind : uint8_t {
  kAny = 0,
  kContiguous,
  kChannelsLast,
};

/// Constraints on some of a kernel's tensor arguments, each naming its
/// argument by schema position (so an optional argument, such as linear's
/// bias, neither shifts the others nor needs a constraint). An empty key
/// matches everything.
struct KernelKey {
  static constexpr size_t kMaxTensors = 8;
  struct TensorConstraint {
    uint8_t arg = 0;  // Schema position of the constrained argument.
    bool any_dtype = true;
    ScalarType dtype = ScalarType::kFloat;
    DimOrderKind dim_order = DimOrderKind::kAny;
  };
  TensorConstraint tensors[kMaxTensors] = {};
  size_t num_tensors = 0;

  /// Number of constraints that are not wildcards; more is more specific.
  size_t specificity() const;
};

/// The dtype and layout of one actual argument, by position, for resolution.
struct TensorArgMeta {
  ScalarType dtype;
  DimOrderKind dim_order;  // kContiguous, kChannelsLast, or kAny for other.
  bool is_tensor = true;   // False for a non-tensor (or absent) argument.
};

struct Kernel {
  const char* name;  // "namespace::op.overload"; static storage.
  KernelFunction eval;
  KernelPriority priority = KernelPriority::kPortable;
  KernelKey key = {};
  const OpSchema* schema = nullptr;  // Required; its name must be `name`.
  PrepareFunction prepare = nullptr;
};

/// The argument metas resolve() matches keys against, one per argument
/// (non-tensors marked), at most `capacity`. Returns the number written.
size_t describe_args(Span<EValue* const> args, TensorArgMeta* metas, size_t capacity);

/// Runs `kernel`'s prepare step, if it has one, on a call that check_call
/// accepted: fills `call` (its eval, state and scratch size; the kernel's own
/// eval when there is no prepare). Errors: prepare's own, and kInternal when
/// it chose no eval. The caller adds the operator's name. `constant_args`
/// is PrepareContext's bit set of constant arguments.
Status prepare_kernel_call(const Kernel& kernel, Span<EValue*> args,
                           MemoryAllocator* method_allocator, PreparedCall* call,
                           uint64_t constant_args = 0);

/// Runs `kernel` on `args` as the runtime does (the schema check, prepare,
/// eval), with method memory (state, scratch) from `allocator`. For tests
/// and tools calling one kernel outside a program; `constant_args` marks the
/// arguments prepare may treat as program constants (none by default).
Status call_kernel(const Kernel& kernel, Span<EValue*> args, MemoryAllocator* allocator,
                   MemoryAllocator* temp_allocator = nullptr, uint64_t constant_args = 0);

}  // namespace torchlight
