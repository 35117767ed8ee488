// A test program loaded from bytes, with everything its Method borrows
// (loader, planned arenas sized exactly as planned so ASan sees any write
// past them, the test kernels and the test delegate) kept alive together.
#pragma once

#include <memory>
#include <vector>

#include "extension/data_loader/buffer_data_loader.h"
#include "runtime/backend/backend_registry.h"
#include "runtime/executor/program.h"
#include "runtime/executor/testing/pte_builder.h"
#include "runtime/executor/testing/test_kernels.h"

namespace torchlight::testing {

struct Loaded {
  std::vector<uint8_t> bytes;
  std::unique_ptr<BufferDataLoader> loader;
  std::unique_ptr<Program> program;
  std::unique_ptr<TestMemory> memory;
  StaticKernelRegistry<16> kernels;
  BackendRegistry backends;
  TestAddBackend backend;

  Status load_program(std::vector<uint8_t> data, const char* file_name = "test.pte") {
    bytes = std::move(data);
    loader = std::make_unique<BufferDataLoader>(bytes.data(), bytes.size(), file_name);
    auto p = Program::load(loader.get());
    if (!p.ok()) return p.status();
    program = std::make_unique<Program>(std::move(p.get()));
    register_test_kernels(kernels);
    TL_RETURN_IF_ERROR(backends.register_backend("TestAddBackend", &backend));
    return Error::kOk;
  }

  Result<Method> method(const char* name = "forward", size_t method_bytes = 1 << 16) {
    auto meta = program->method_meta(name);
    if (!meta.ok()) return meta.status();
    std::vector<size_t> sizes;
    for (size_t i = 0; i < meta->num_planned_buffers(); ++i) {
      sizes.push_back(static_cast<size_t>(meta->planned_buffer_size(i).get()));
    }
    memory = std::make_unique<TestMemory>(sizes, method_bytes);
    return program->load_method(name, &memory->manager, kernels, &backends);
  }
};

}  // namespace torchlight::testing
