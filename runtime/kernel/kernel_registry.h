// KernelRegistry: maps an operator ("aten::add.out") to a kernel function.
//
// Libraries register explicitly (no static initialisers): each exposes a
// table of Kernel entries and the application calls register_kernels() for
// the tables it links. Linking only the tables a model needs is selective
// build.
//
// Several kernels may serve one operator. Each has a priority (its library's
// tier: portable < optimized < custom) and an optional KernelKey restricting
// the dtypes and dim orders of its tensor arguments. resolve() picks, among
// the kernels whose key matches the actual arguments, the highest priority,
// and among equal priorities the most specific key. So an optimized library
// overrides portable for, say, float32 contiguous only, and everything else
// still falls back to portable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight {

/// `args` holds the schema arguments in order, then the return value(s).
/// A kernel reports failure through ctx.fail() (see TL_KERNEL_CHECK).
using KernelFunction = void (*)(KernelContext& ctx, Span<EValue*> args);

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

/// Constraints on a kernel's tensor arguments, in the order tensors appear
/// among the kernel's arguments. An empty key matches everything.
struct KernelKey {
  static constexpr size_t kMaxTensors = 8;
  struct TensorConstraint {
    bool any_dtype = true;
    ScalarType dtype = ScalarType::kFloat;
    DimOrderKind dim_order = DimOrderKind::kAny;
  };
  TensorConstraint tensors[kMaxTensors] = {};
  size_t num_tensors = 0;

  /// Number of constraints that are not wildcards; more is more specific.
  size_t specificity() const;
};

/// The dtype and layout of one actual tensor argument, for resolution.
struct TensorArgMeta {
  ScalarType dtype;
  DimOrderKind dim_order;  // kContiguous, kChannelsLast, or kAny for other.
};

/// The argument positions a kernel writes, from its operator's schema: the
/// out arguments and return slots, which the calling convention puts last
/// (`trailing` of them), and the `Tensor(a!)` inputs it updates in place
/// (`mutated`, counted from the first argument). Method load refuses a
/// program that passes a constant tensor at any of them. Written by hand
/// per kernel today; a registry built from full schemas fills it the same.
struct WrittenArgs {
  static constexpr size_t kMaxMutated = 4;
  uint8_t trailing = 2;  // The common out variant: `out`, then its return slot.
  uint8_t num_mutated = 0;
  uint8_t mutated[kMaxMutated] = {};
};

/// A kernel writing `num_outs` out arguments and one return slot after them
/// (an op returning a tuple has one slot for the whole tuple).
constexpr WrittenArgs writes_outs(uint8_t num_outs) {
  WrittenArgs w;
  w.trailing = static_cast<uint8_t>(num_outs + 1);
  return w;
}

/// A kernel writing only its last argument: a return slot (prim scalar ops,
/// sym_size) or an out argument with no return slot after it (et_view,
/// split_copy's out list).
constexpr WrittenArgs writes_last_only() {
  WrittenArgs w;
  w.trailing = 1;
  return w;
}

struct Kernel {
  const char* name;  // "namespace::op.overload"; static storage.
  KernelFunction function;
  KernelPriority priority = KernelPriority::kPortable;
  KernelKey key = {};
  WrittenArgs written = {};
};

class KernelRegistry {
 public:
  /// Entries are stored in `storage`, which must outlive the registry.
  explicit KernelRegistry(Span<Kernel> storage) : storage_(storage) {}

  /// Errors: kInvalidArgument for a null name or function, or a kernel with
  /// the same name, priority and key as one already registered;
  /// kOutOfResources when the storage is full.
  Status register_kernel(const Kernel& kernel);
  /// Registers each entry in order; stops at the first error.
  Status register_kernels(Span<const Kernel> kernels);

  /// The best kernel for `name` given the actual tensor arguments.
  /// Errors: kOperatorMissing when no kernel has the name, or none matches
  /// the argument dtypes (the message says which).
  Result<const Kernel*> resolve(std::string_view name, Span<const TensorArgMeta> tensor_args) const;

  /// Whether any kernel is registered under `name`.
  bool has_kernel(std::string_view name) const;

  Span<const Kernel> kernels() const { return {storage_.data(), size_}; }

 private:
  Span<Kernel> storage_;
  size_t size_ = 0;
};

/// A registry with its own storage for N kernels.
template <size_t N>
class StaticKernelRegistry : public KernelRegistry {
 public:
  StaticKernelRegistry() : KernelRegistry(Span<Kernel>(entries_, N)) {}

 private:
  Kernel entries_[N] = {};
};

}  // namespace torchlight
