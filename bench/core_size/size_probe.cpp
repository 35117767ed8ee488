// The smallest program that uses the core runtime: Program + Method + the
// file loader, and no kernels. Its stripped size is the runtime's footprint
// (compare size_baseline, the same program without the runtime).
#include <cstdio>

#include "extension/data_loader/file_data_loader.h"
#include "runtime/executor/program.h"
#include "runtime/kernel/kernel_registry.h"

int main(int argc, char** argv) {
  using namespace torchlight;
  if (argc < 2) return 2;
  auto loader = FileDataLoader::from(argv[1]);
  if (!loader.ok()) return 1;
  auto program = Program::load(&loader.get());
  if (!program.ok()) {
    fprintf(stderr, "%s\n", program.status().message());
    return 1;
  }
  static uint8_t method_memory[64 * 1024];
  MemoryAllocator allocator(method_memory, sizeof(method_memory));
  MemoryManager memory;
  memory.method_allocator = &allocator;
  StaticKernelRegistry<4> kernels;
  auto method = program->load_method("forward", &memory, kernels);
  printf("%s\n", method.ok() ? "loaded" : method.status().message());
  return 0;
}
