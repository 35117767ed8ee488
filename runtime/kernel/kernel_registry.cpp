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
    if (x.arg != y.arg || x.any_dtype != y.any_dtype || x.dim_order != y.dim_order) return false;
    if (!x.any_dtype && x.dtype != y.dtype) return false;
  }
  return true;
}

bool key_matches(const KernelKey& key, Span<const TensorArgMeta> args) {
  for (size_t i = 0; i < key.num_tensors && i < KernelKey::kMaxTensors; ++i) {
    const auto& c = key.tensors[i];
    if (c.arg >= args.size() || !args[c.arg].is_tensor) return false;
    const TensorArgMeta& actual = args[c.arg];
    if (!c.any_dtype && c.dtype != actual.dtype) return false;
    if (c.dim_order != DimOrderKind::kAny && c.dim_order != actual.dim_order) return false;
  }
  return true;
}

// Every constraint must name a tensor argument of the schema.
Status check_key(const Kernel& kernel) {
  const OpSchema& schema = *kernel.schema;
  for (size_t i = 0; i < kernel.key.num_tensors; ++i) {
    const size_t arg = kernel.key.tensors[i].arg;
    TL_CHECK_OR_RETURN(arg < schema.num_args, Error::kInvalidArgument,
                       "kernel '%s' has a key on argument %zu, but its schema has %zu", kernel.name,
                       arg, schema.num_args);
    const ArgType type = schema.args[arg].type;
    TL_CHECK_OR_RETURN(type == ArgType::kTensor || type == ArgType::kOptionalTensor ||
                           type == ArgType::kReturn,
                       Error::kInvalidArgument,
                       "kernel '%s' has a key on argument '%s', which is a %s, not a tensor",
                       kernel.name, schema.args[arg].name, to_string(type));
  }
  return Error::kOk;
}

bool name_is(const Kernel& kernel, std::string_view name) {
  return std::string_view(kernel.name) == name;
}

}  // namespace

Status KernelRegistry::register_kernel(const Kernel& kernel) {
  TL_CHECK_OR_RETURN(kernel.name != nullptr && kernel.eval != nullptr,
                     Error::kInvalidArgument, "kernel registered without a name or eval function");
  TL_CHECK_OR_RETURN(kernel.schema != nullptr && kernel.schema->name != nullptr,
                     Error::kInvalidArgument,
                     "kernel '%s' has no schema: every kernel declares its operator's arguments",
                     kernel.name);
  TL_CHECK_OR_RETURN(std::string_view(kernel.schema->name) == kernel.name, Error::kInvalidArgument,
                     "kernel '%s' carries the schema of '%s'", kernel.name, kernel.schema->name);
  TL_CHECK_OR_RETURN(kernel.key.num_tensors <= KernelKey::kMaxTensors, Error::kInvalidArgument,
                     "kernel '%s' has a key with %zu tensors, more than %zu", kernel.name,
                     kernel.key.num_tensors, KernelKey::kMaxTensors);
  TL_RETURN_IF_ERROR(check_key(kernel));
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
                                              Span<const TensorArgMeta> args) const {
  const Kernel* best = nullptr;
  bool any_named = false;
  for (size_t i = 0; i < size_; ++i) {
    const Kernel& k = storage_[i];
    if (!name_is(k, name)) continue;
    any_named = true;
    if (!key_matches(k.key, args)) continue;
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
  const TensorArgMeta* first = nullptr;
  for (const TensorArgMeta& meta : args) {
    if (first == nullptr && meta.is_tensor) first = &meta;
  }
  return Status::error(Error::kOperatorMissing,
                       "operator '%.*s' has kernels, but none for these argument dtypes (first: %s)",
                       len, name.data(), first == nullptr ? "no tensors" : to_string(first->dtype));
}

}  // namespace torchlight
