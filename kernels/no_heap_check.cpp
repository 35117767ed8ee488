// torchlight_no_heap_check PROGRAM.pte [THREADS]: loads the program's
// "forward" with every kernel library, then counts heap allocations (malloc
// and friends, and so operator new) made by any thread while the inputs are
// set and execute() runs, twice. Exits 0 only when there were none. python/tests/test_no_heap_after_load.py
// runs it on programs with the optimized matmuls and the fused attention op.
//
// It replaces the C allocation functions for the whole process, forwarding
// to glibc's own, so it is built only without sanitizers (which replace
// them too).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "extension/data_loader/file_data_loader.h"
#include "extension/tensor/owned_tensor.h"
#include "extension/tensor/tensor_fill.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/all_kernels.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/program.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* p, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* p);
}

namespace {

std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0};

void count() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  count();
  return __libc_malloc(size);
}
void* calloc(size_t count_, size_t size) {
  count();
  return __libc_calloc(count_, size);
}
void* realloc(void* p, size_t size) {
  count();
  return __libc_realloc(p, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
void* memalign(size_t alignment, size_t size) {
  count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  count();
  *out = __libc_memalign(alignment, size);
  return *out == nullptr ? 12 /* ENOMEM */ : 0;
}
void free(void* p) { __libc_free(p); }
}

namespace torchlight {
namespace {

int run(const char* path, size_t threads) {
  threadpool::set_num_threads(threads);
  Result<FileDataLoader> loader = FileDataLoader::from(path);
  if (!loader.ok()) {
    std::fprintf(stderr, "%s\n", loader.status().message());
    return 2;
  }
  Result<Program> program = Program::load(&loader.get());
  if (!program.ok()) {
    std::fprintf(stderr, "%s\n", program.status().message());
    return 2;
  }
  Result<MethodMeta> meta = program.get().method_meta("forward");
  if (!meta.ok()) {
    std::fprintf(stderr, "%s\n", meta.status().message());
    return 2;
  }
  std::vector<std::vector<uint8_t>> arena_storage;
  std::vector<Span<uint8_t>> arenas;
  for (size_t i = 0; i < meta.get().num_planned_buffers(); ++i) {
    arena_storage.emplace_back(static_cast<size_t>(meta.get().planned_buffer_size(i).get()));
    arenas.emplace_back(arena_storage.back().data(), arena_storage.back().size());
  }
  PlannedMemory planned(Span<Span<uint8_t>>(arenas.data(), arenas.size()));
  std::vector<uint8_t> method_bytes(size_t{64} << 20);
  std::vector<uint8_t> temp_bytes(size_t{16} << 20);
  MemoryAllocator method_allocator(method_bytes.data(), method_bytes.size());
  MemoryAllocator temp_allocator(temp_bytes.data(), temp_bytes.size());
  MemoryManager memory;
  memory.method_allocator = &method_allocator;
  memory.planned_memory = &planned;
  memory.temp_allocator = &temp_allocator;
  Result<const KernelRegistry*> kernels = all_kernels();
  if (!kernels.ok()) return 2;
  Result<Method> method = program.get().load_method("forward", &memory, *kernels.get());
  if (!method.ok()) {
    std::fprintf(stderr, "%s\n", method.status().message());
    return 2;
  }
  // Inputs are made before counting: ones for float tensors, 0, 1, 2... for
  // int64 ones (token ids and the KV-cache positions of a prefill).
  std::vector<OwnedTensor> inputs;
  inputs.reserve(method.get().inputs_size());
  for (size_t i = 0; i < method.get().inputs_size(); ++i) {
    Result<TensorInfo> info = meta.get().input_tensor_info(i);
    if (!info.ok()) return 2;
    std::vector<SizesType> sizes(info.get().sizes.begin(), info.get().sizes.end());
    Result<OwnedTensor> tensor = OwnedTensor::make(info.get().dtype, std::move(sizes));
    if (!tensor.ok()) return 2;
    inputs.push_back(std::move(tensor.get()));
    const Tensor input = inputs.back().tensor();
    if (input.scalar_type() == ScalarType::kFloat) (void)fill_ones(input);
    if (input.scalar_type() == ScalarType::kLong) {
      int64_t* data = input.mutable_data_ptr<int64_t>();
      for (int64_t k = 0; k < input.numel(); ++k) data[k] = k;
    }
  }

  // Planned inputs share memory with later activations, so each run sets
  // them again (set_input copies into the plan; it must not allocate either).
  auto set_inputs_and_execute = [&]() -> Status {
    for (size_t i = 0; i < inputs.size(); ++i) {
      TL_RETURN_IF_ERROR(method.get().set_input(i, inputs[i].evalue()));
    }
    return method.get().execute();
  };
  g_counting.store(true);
  Status first = set_inputs_and_execute();
  Status second = set_inputs_and_execute();
  g_counting.store(false);
  if (!first.ok() || !second.ok()) {
    std::fprintf(stderr, "execute failed: %s\n", (first.ok() ? second : first).message());
    return 2;
  }
  const long allocations = g_allocations.load();
  std::printf("heap allocations during 2 executes on %zu threads: %ld\n", threads, allocations);
  return allocations == 0 ? 0 : 1;
}

}  // namespace
}  // namespace torchlight

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.pte [THREADS]\n", argv[0]);
    return 2;
  }
  const size_t threads = argc > 2 ? static_cast<size_t>(std::strtoul(argv[2], nullptr, 10)) : 1;
  return torchlight::run(argv[1], threads);
}
