#include "backends/xnnpack/input_shape_check.h"

namespace torchlight {
namespace xnnpack {

Result<InputShapeCheck> InputShapeCheck::create(const DefinitionContext& ctx,
                                                MemoryAllocator* allocator) {
  InputShapeCheck c;
  c.ctx_.graph = ctx.graph;
  c.ctx_.num_values = ctx.num_values;
  c.ctx_.shapes = allocator->allocate_array<DeclaredShape>(ctx.num_values + 1);
  c.ctx_.kinds = allocator->allocate_array<ValueKind>(ctx.num_values + 1);
  c.inferred_ = allocator->allocate_array<InferredShape>(ctx.num_values + 1);
  TL_CHECK_OR_RETURN(c.ctx_.shapes != nullptr && c.ctx_.kinds != nullptr && c.inferred_ != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory for the input shape check of %u XNNPACK values",
                     ctx.num_values);
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    c.ctx_.shapes[v] = ctx.shapes[v];
    c.ctx_.kinds[v] = ctx.kinds[v];
  }
  return c;
}

Status InputShapeCheck::infer_with(const ExternalValue* externals, uint32_t num_externals,
                                   uint32_t only_input, uint32_t only_dim) {
  for (uint32_t i = 0; i < num_externals; ++i) {
    const ExternalValue& e = externals[i];
    if (!e.is_input || e.value_id >= ctx_.num_values) continue;
    DeclaredShape& s = ctx_.shapes[e.value_id];
    // A 0-d tensor bound for a declared [1] stays [1].
    const bool bound = e.bound_rank == e.rank;
    for (uint32_t d = 0; d < e.rank; ++d) {
      const bool actual = bound && (only_input == kAll || (only_input == i && only_dim == d));
      s.dims[d] = actual ? e.bound_dims[d] : e.dims[d];
    }
  }
  return infer_shapes(ctx_, inferred_);
}

Status InputShapeCheck::check(const ExternalValue* externals, uint32_t num_externals) {
  if (inferred_ == nullptr) return Error::kOk;
  bool declared = true;
  for (uint32_t i = 0; i < num_externals; ++i) {
    const ExternalValue& e = externals[i];
    if (!e.is_input || e.bound_rank != e.rank) continue;
    for (uint32_t d = 0; d < e.rank; ++d) declared = declared && e.bound_dims[d] == e.dims[d];
  }
  if (declared) return Error::kOk;
  const Status all = infer_with(externals, num_externals, kAll, 0);
  if (all.ok()) return all;
  // Name the input dim that alone breaks a node, if one does.
  for (uint32_t i = 0; i < num_externals; ++i) {
    const ExternalValue& e = externals[i];
    if (!e.is_input || e.bound_rank != e.rank) continue;
    for (uint32_t d = 0; d < e.rank; ++d) {
      if (e.bound_dims[d] == e.dims[d]) continue;
      const Status one = infer_with(externals, num_externals, i, d);
      if (one.ok()) continue;
      return Status::error(Error::kInvalidArgument,
                           "XNNPACK delegate input %u has size %zu in dim %u; the graph needs "
                           "%zu there (%s)",
                           e.external_id, e.bound_dims[d], d, e.dims[d], one.message());
    }
  }
  return Status::error(Error::kInvalidArgument,
                       "XNNPACK delegate inputs of these shapes do not fit the graph (%s)",
                       all.message());
}

}  // namespace xnnpack
}  // namespace torchlight
