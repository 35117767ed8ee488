#include "runtime/kernel/kernel.h"

#include "runtime/core/result.h"
#include "runtime/core/tensor.h"

namespace torchlight {

size_t describe_args(Span<EValue* const> args, TensorArgMeta* metas, size_t capacity) {
  size_t n = 0;
  for (; n < args.size() && n < capacity; ++n) {
    const EValue* arg = args[n];
    if (arg == nullptr || !arg->is_tensor()) {
      metas[n] = {ScalarType::kFloat, DimOrderKind::kAny, false};
      continue;
    }
    const Tensor t = arg->to_tensor();
    const DimOrderKind order = is_contiguous_dim_order(t.dim_order())      ? DimOrderKind::kContiguous
                               : is_channels_last_dim_order(t.dim_order()) ? DimOrderKind::kChannelsLast
                                                                            : DimOrderKind::kAny;
    metas[n] = {t.scalar_type(), order, true};
  }
  return n;
}

Status prepare_kernel_call(const Kernel& kernel, Span<EValue*> args,
                           MemoryAllocator* method_allocator, PreparedCall* call,
                           uint64_t constant_args) {
  *call = PreparedCall();
  call->eval = kernel.eval;
  if (kernel.prepare == nullptr) return Error::kOk;
  PrepareContext context(method_allocator, kernel.name, constant_args);
  TL_RETURN_IF_ERROR(kernel.prepare(context, args, call));
  TL_CHECK_OR_RETURN(call->eval != nullptr, Error::kInternal, "prepare chose no eval function");
  return Error::kOk;
}

Status call_kernel(const Kernel& kernel, Span<EValue*> args, MemoryAllocator* allocator,
                   MemoryAllocator* temp_allocator, uint64_t constant_args) {
  if (kernel.schema != nullptr) {
    Status checked = check_call(args, *kernel.schema);
    if (!checked.ok()) return checked.with_context("%s (schema %s)", kernel.name, kernel.schema->text);
  }
  PreparedCall call;
  Status prepared = prepare_kernel_call(kernel, args, allocator, &call, constant_args);
  if (!prepared.ok()) return prepared.with_context("%s", kernel.name);
  void* scratch = nullptr;
  if (call.scratch_bytes > 0) {
    scratch = allocator == nullptr ? nullptr : allocator->allocate(call.scratch_bytes, 64);
    TL_CHECK_OR_RETURN(scratch != nullptr, Error::kMemoryAllocationFailed,
                       "%s: no memory for %zu bytes of scratch", kernel.name, call.scratch_bytes);
  }
  KernelContext context(temp_allocator, nullptr, kernel.name);
  context.set_call(kernel.name, call.state);
  context.set_scratch(scratch, call.scratch_bytes);
  call.eval(context, args);
  return context.status();
}

}  // namespace torchlight
