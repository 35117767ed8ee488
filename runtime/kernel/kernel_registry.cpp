#include "runtime/kernel/kernel_registry.h"

#include <cstring>

namespace torchlight {

size_t KernelKey::specificity() const {
  size_t n = 0;
  for (size_t i = 0; i < num_tensors && i < kMaxTensors; ++i) {
    n += tensors[i].any_dtype ? 0 : 1;
    n += tensors[i].dim_order == DimOrderKind::kAny ? 0 : 1;
  }
  return n;
}

namespace {

bool same_key(const KernelKey& a, const KernelKey& b) {
  if (a.num_tensors != b.num_tensors) return false;
  for (size_t i = 0; i < a.num_tensors && i < KernelKey::kMaxTensors; ++i) {
    const auto& x = a.tensors[i];
    const auto& y = b.tensors[i];
    if (x.any_dtype != y.any_dtype || x.dim_order != y.dim_order) return false;
    if (!x.any_dtype && x.dtype != y.dtype) return false;
  }
  return true;
}

bool key_matches(const KernelKey& key, Span<const TensorArgMeta> args) {
  if (key.num_tensors == 0) return true;
  if (key.num_tensors > args.size()) return false;
  for (size_t i = 0; i < key.num_tensors && i < KernelKey::kMaxTensors; ++i) {
    const auto& c = key.tensors[i];
    if (!c.any_dtype && c.dtype != args[i].dtype) return false;
    if (c.dim_order != DimOrderKind::kAny && c.dim_order != args[i].dim_order) return false;
  }
  return true;
}

bool name_is(const Kernel& kernel, std::string_view name) {
  return std::string_view(kernel.name) == name;
}

}  // namespace

Status KernelRegistry::register_kernel(const Kernel& kernel) {
  TL_CHECK_OR_RETURN(kernel.name != nullptr && kernel.function != nullptr,
                     Error::kInvalidArgument, "kernel registered without a name or function");
  TL_CHECK_OR_RETURN(kernel.key.num_tensors <= KernelKey::kMaxTensors, Error::kInvalidArgument,
                     "kernel '%s' has a key with %zu tensors, more than %zu", kernel.name,
                     kernel.key.num_tensors, KernelKey::kMaxTensors);
  for (size_t i = 0; i < size_; ++i) {
    const Kernel& other = storage_[i];
    TL_CHECK_OR_RETURN(!(name_is(other, kernel.name) && other.priority == kernel.priority &&
                         same_key(other.key, kernel.key)),
                       Error::kInvalidArgument,
                       "kernel '%s' is registered twice with the same priority and key",
                       kernel.name);
  }
  TL_CHECK_OR_RETURN(size_ < storage_.size(), Error::kOutOfResources,
                     "kernel registry is full (%zu entries) registering '%s'", storage_.size(),
                     kernel.name);
  storage_[size_++] = kernel;
  return Error::kOk;
}

Status KernelRegistry::register_kernels(Span<const Kernel> kernels) {
  for (const Kernel& kernel : kernels) TL_RETURN_IF_ERROR(register_kernel(kernel));
  return Error::kOk;
}

bool KernelRegistry::has_kernel(std::string_view name) const {
  for (size_t i = 0; i < size_; ++i) {
    if (name_is(storage_[i], name)) return true;
  }
  return false;
}

Result<const Kernel*> KernelRegistry::resolve(std::string_view name,
                                              Span<const TensorArgMeta> tensor_args) const {
  const Kernel* best = nullptr;
  bool any_named = false;
  for (size_t i = 0; i < size_; ++i) {
    const Kernel& k = storage_[i];
    if (!name_is(k, name)) continue;
    any_named = true;
    if (!key_matches(k.key, tensor_args)) continue;
    if (best == nullptr || k.priority > best->priority ||
        (k.priority == best->priority && k.key.specificity() > best->key.specificity())) {
      best = &k;
    }
  }
  if (best != nullptr) return best;
  const int len = static_cast<int>(name.size());
  if (!any_named) {
    return Status::error(Error::kOperatorMissing, "no kernel is registered for operator '%.*s'",
                         len, name.data());
  }
  return Status::error(Error::kOperatorMissing,
                       "operator '%.*s' has kernels, but none for these argument dtypes (first: %s)",
                       len, name.data(),
                       tensor_args.empty() ? "no tensors" : to_string(tensor_args[0].dtype));
}

}  // namespace torchlight
