#include "fuzz/program_runner.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backends/test_backend/test_backend.h"
#include "extension/data_loader/buffer_data_loader.h"
#include "extension/tensor/owned_tensor.h"
#include "extension/tensor/tensor_fill.h"
#include "kernels/all_kernels.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/program.h"

namespace torchlight {
namespace fuzz {
namespace {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};
using Bytes = std::unique_ptr<uint8_t, FreeDeleter>;

// Heap blocks of exactly the requested size, so ASan catches a write one
// byte past an arena.
Bytes allocate_bytes(size_t size) {
  return Bytes(static_cast<uint8_t*>(std::malloc(size == 0 ? 1 : size)));
}

const BackendRegistry& backends() {
  static BackendRegistry* registry = [] {
    auto* r = new BackendRegistry();
    if (!register_test_backend(*r).ok()) std::abort();  // A harness bug, not an input's.
    return r;
  }();
  return *registry;
}

// Sets every input: tensors of ones at the input's (upper-bound) shape,
// other values as the program holds them. False when an input cannot be made.
bool set_inputs(const MethodMeta& meta, Method& method, std::vector<OwnedTensor>* storage) {
  for (size_t i = 0; i < method.inputs_size(); ++i) {
    Result<Tag> tag = meta.input_tag(i);
    if (!tag.ok()) return false;
    if (tag.get() != Tag::kTensor) {
      if (!method.set_input(i, method.input_value(i)).ok()) return false;
      continue;
    }
    Result<TensorInfo> info = meta.input_tensor_info(i);
    if (!info.ok() || info.get().nbytes > kMaxInputBytes) return false;
    std::vector<SizesType> sizes(info.get().sizes.begin(), info.get().sizes.end());
    std::vector<DimOrderType> dim_order(info.get().dim_order.begin(), info.get().dim_order.end());
    Result<OwnedTensor> tensor = OwnedTensor::make_with_dim_order(
        info.get().dtype, std::move(sizes), std::move(dim_order), info.get().dynamism);
    if (!tensor.ok()) return false;
    (void)fill_ones(tensor.get().tensor());  // Unsupported dtypes stay zero.
    storage->push_back(std::move(tensor.get()));
    if (!method.set_input(i, storage->back().evalue()).ok()) return false;
  }
  return true;
}

void run_method(const Program& program, std::string_view name, const KernelRegistry& kernels) {
  Result<MethodMeta> meta = program.method_meta(name);
  if (!meta.ok()) return;

  std::vector<Bytes> arena_storage;
  std::vector<Span<uint8_t>> arenas;
  size_t planned = 0;
  for (size_t i = 0; i < meta.get().num_planned_buffers(); ++i) {
    Result<int64_t> size = meta.get().planned_buffer_size(i);
    if (!size.ok() || size.get() < 0) return;
    planned += static_cast<size_t>(size.get());
    if (planned > kMaxPlannedBytes) return;
    arena_storage.push_back(allocate_bytes(static_cast<size_t>(size.get())));
    arenas.emplace_back(arena_storage.back().get(), static_cast<size_t>(size.get()));
  }
  PlannedMemory planned_memory(Span<Span<uint8_t>>(arenas.data(), arenas.size()));
  Bytes method_bytes = allocate_bytes(kMethodArenaBytes);
  Bytes temp_bytes = allocate_bytes(kTempArenaBytes);
  MemoryAllocator method_allocator(method_bytes.get(), kMethodArenaBytes);
  MemoryAllocator temp_allocator(temp_bytes.get(), kTempArenaBytes);
  MemoryManager memory;
  memory.method_allocator = &method_allocator;
  memory.planned_memory = &planned_memory;
  memory.temp_allocator = &temp_allocator;

  Result<Method> method = program.load_method(name, &memory, kernels, &backends());
  if (!method.ok()) return;
  method.get().set_max_steps(kMaxSteps);
  MethodMeta loaded_meta = method.get().method_meta();
  std::vector<OwnedTensor> inputs;
  if (!set_inputs(loaded_meta, method.get(), &inputs)) return;
  // Twice: the second run sees state the first left (freed values, resized
  // dynamic tensors, mutable buffers).
  for (int run = 0; run < 2; ++run) {
    if (!method.get().execute().ok()) return;
    for (size_t i = 0; i < method.get().outputs_size(); ++i) {
      Result<const EValue*> out = method.get().output(i);
      if (out.ok() && out.get()->is_tensor()) {
        const Tensor t = out.get()->to_tensor();
        // Touch the first and last byte so a dangling output is caught.
        const auto* bytes = static_cast<const volatile uint8_t*>(t.const_data_ptr());
        if (bytes != nullptr && t.nbytes() > 0) {
          (void)bytes[0];
          (void)bytes[t.nbytes() - 1];
        }
      }
    }
  }
}

}  // namespace

void load_and_run_program(const uint8_t* data, size_t size) {
  static const KernelRegistry* kernels = [] {
    Result<const KernelRegistry*> all = all_kernels();
    if (!all.ok()) std::abort();  // A build bug, not an input's.
    return all.get();
  }();
  BufferDataLoader loader(data, size, "fuzz.pte");
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) return;
  (void)program.get().constant_bytes();
  for (size_t i = 0; i < program.get().num_segments(); ++i) (void)program.get().segment(i);
  for (size_t i = 0; i < program.get().num_methods(); ++i) {
    Result<std::string_view> name = program.get().method_name(i);
    if (name.ok()) run_method(program.get(), name.get(), *kernels);
  }
}

}  // namespace fuzz
}  // namespace torchlight
