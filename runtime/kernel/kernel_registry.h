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
#include "runtime/kernel/kernel.h"

namespace torchlight {

class KernelRegistry {
 public:
  /// Entries are stored in `storage`, which must outlive the registry.
  explicit KernelRegistry(Span<Kernel> storage) : storage_(storage) {}

  /// Errors: kInvalidArgument for a null name or eval, a missing schema or
  /// one for another operator, a key naming an argument the schema lacks or
  /// one that is not a tensor, or a kernel with the same name, priority and
  /// key as one already registered;
  /// kOutOfResources when the storage is full.
  Status register_kernel(const Kernel& kernel);
  /// Registers each entry in order; stops at the first error.
  Status register_kernels(Span<const Kernel> kernels);

  /// The best kernel for `name` given the actual arguments (describe_args).
  /// Errors: kOperatorMissing when no kernel has the name, or none matches
  /// the argument dtypes (the message says which).
  Result<const Kernel*> resolve(std::string_view name, Span<const TensorArgMeta> args) const;

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
