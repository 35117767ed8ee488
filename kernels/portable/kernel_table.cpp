// The kernel table of one portable library. Built once per library by
// torchlight_selective_kernel_library(), each time with its own generated
// "selected_portable_ops.def" (the TL_PORTABLE_OP lines of the operators
// that library selected) and its own function names (TL_KERNEL_TABLE,
// TL_REGISTER_KERNEL_TABLE), declared in its generated header.
#include TL_KERNEL_TABLE_HEADER

#include "kernels/portable/portable_ops.h"
#include "kernels/schemas/op_schemas.h"

namespace torchlight {

// Never defined: reaching it in schema_of's constant evaluation is the
// compile error saying which step is missing.
const OpSchema* no_schema_run_tools_kernel_schemas_generate_op_schemas_py();

namespace {

// The schema of every listed operator, checked at compile time: an
// operator missing from kernels/schemas/op_schemas.h fails the build here.
constexpr const OpSchema* schema_of(const char* op) {
  const size_t index = schemas::find_op_schema_index(op);
  return index != schemas::kNoOpSchema ? schemas::kAllOpSchemas[index]
                                       : no_schema_run_tools_kernel_schemas_generate_op_schemas_py();
}

// constexpr: constant-initialised, so no code runs before main.
constexpr Kernel kPortableKernels[] = {
#define TL_PORTABLE_OP(op_name, function) \
  Kernel{op_name, &portable::function, KernelPriority::kPortable, KernelKey{}, schema_of(op_name)},
#define TL_PORTABLE_OP_PREPARE(op_name, function, prepare)                                 \
  Kernel{op_name, &portable::function, KernelPriority::kPortable, KernelKey{}, schema_of(op_name), \
         &portable::prepare},
#include "selected_portable_ops.def"
#undef TL_PORTABLE_OP_PREPARE
#undef TL_PORTABLE_OP
};

}  // namespace

Span<const Kernel> TL_KERNEL_TABLE() { return Span<const Kernel>(kPortableKernels); }

Status TL_REGISTER_KERNEL_TABLE(KernelRegistry& registry) {
  return registry.register_kernels(TL_KERNEL_TABLE());
}

}  // namespace torchlight
