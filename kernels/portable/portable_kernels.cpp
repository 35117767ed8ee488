// The kernel table of one portable library. Built once per library by
// torchlight_selective_kernel_library(), each time with its own generated
// "selected_portable_ops.def": the TL_PORTABLE_OP lines of the operators
// that library selected.
#include "kernels/portable/portable_kernels.h"

#include <string_view>

#include "kernels/portable/portable_ops.h"

namespace torchlight {

namespace {

// "out", "Scalar_out", "out_mode": the overload (after the last '.') names an
// out variant.
constexpr bool is_out_overload(std::string_view op) {
  const size_t dot = op.rfind('.');
  return dot != std::string_view::npos && op.substr(dot + 1).find("out") != std::string_view::npos;
}

constexpr WrittenArgs with_mutated(WrittenArgs w, uint8_t a, uint8_t b) {
  w.num_mutated = 2;
  w.mutated[0] = a;
  w.mutated[1] = b;
  return w;
}

// The positions each portable operator writes (see WrittenArgs), from its
// schema: an out overload has one out argument and a return
// slot, unless listed here; other overloads write only their return slot.
constexpr WrittenArgs written_args_of(std::string_view op) {
  // Three outs: (out, save_mean, save_invstd) and the like.
  if (op == "aten::native_group_norm.out" || op == "aten::native_layer_norm.out" ||
      op == "aten::_native_batch_norm_legit.no_stats_out" ||
      op == "aten::_native_batch_norm_legit_no_training.out") {
    return writes_outs(3);
  }
  // With training = true these update running_mean and running_var
  // (arguments 3 and 4) in place: Tensor(a!) in the schema.
  if (op == "aten::_native_batch_norm_legit.out" || op == "aten::native_batch_norm.out") {
    return with_mutated(writes_outs(3), 3, 4);
  }
  // Two outs: (values, indices).
  if (op == "aten::max.dim_max" || op == "aten::min.dim_min" || op == "aten::sort.values" ||
      op == "aten::sort.values_stable" || op == "aten::topk.values" ||
      op == "aten::max_pool2d_with_indices.out" || op == "aten::max_pool3d_with_indices.out" ||
      op == "aten::adaptive_max_pool2d.out") {
    return writes_outs(2);
  }
  // An out list and no return slot.
  if (op == "aten::split_copy.Tensor_out" || op == "aten::split_with_sizes_copy.out" ||
      op == "aten::unbind_copy.int_out") {
    return writes_last_only();
  }
  // et_copy_index(Tensor(a!) copy_to, Tensor copy_from, SymInt index).
  if (op == "executorch_prim::et_copy_index.tensor") {
    WrittenArgs w = writes_last_only();
    w.num_mutated = 1;
    w.mutated[0] = 0;
    return w;
  }
  return is_out_overload(op) ? writes_outs(1) : writes_last_only();
}

// constexpr: constant-initialised, so no code runs before main.
constexpr Kernel kPortableKernels[] = {
#define TL_PORTABLE_OP(op_name, function)                                            \
  Kernel{op_name, &portable::function, KernelPriority::kPortable, KernelKey{}, \
         written_args_of(op_name)},
#include "selected_portable_ops.def"
#undef TL_PORTABLE_OP
};

}  // namespace

Span<const Kernel> portable_kernels() { return Span<const Kernel>(kPortableKernels); }

Status register_portable_kernels(KernelRegistry& registry) {
  return registry.register_kernels(portable_kernels());
}

}  // namespace torchlight
