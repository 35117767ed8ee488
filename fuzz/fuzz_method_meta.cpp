// Fuzz target: what `torchlight inspect` reads. Program::load, then every
// MethodMeta query over each method, without loading any method.
#include <cstddef>
#include <cstdint>

#include "extension/data_loader/buffer_data_loader.h"
#include "runtime/executor/program.h"

namespace {

void touch_tensor_info(const torchlight::TensorInfo& info) {
  // Read every borrowed element so a span past the buffer is caught.
  volatile int64_t sum = static_cast<int64_t>(info.nbytes);
  for (int32_t size : info.sizes) sum = sum + size;
  for (uint8_t d : info.dim_order) sum = sum + d;
}

void inspect_method(const torchlight::MethodMeta& meta) {
  using torchlight::Result;
  using torchlight::Tag;
  (void)meta.name().size();
  for (size_t i = 0; i < meta.num_inputs() + 1; ++i) {  // +1: one past the end must fail cleanly.
    Result<Tag> tag = meta.input_tag(i);
    Result<torchlight::TensorInfo> info = meta.input_tensor_info(i);
    if (tag.ok() && info.ok()) touch_tensor_info(info.get());
  }
  for (size_t i = 0; i < meta.num_outputs() + 1; ++i) {
    Result<Tag> tag = meta.output_tag(i);
    Result<torchlight::TensorInfo> info = meta.output_tensor_info(i);
    if (tag.ok() && info.ok()) touch_tensor_info(info.get());
  }
  for (size_t i = 0; i < meta.num_planned_buffers() + 1; ++i) (void)meta.planned_buffer_size(i);
  char name[64];
  for (size_t i = 0; i < meta.num_operators() + 1; ++i) (void)meta.operator_name(i, name, sizeof(name));
  char tiny[2];
  if (meta.num_operators() > 0) (void)meta.operator_name(0, tiny, sizeof(tiny));
  for (size_t i = 0; i < meta.num_backends() + 1; ++i) (void)meta.backend_name(i);
  (void)meta.uses_backend("TorchlightTestBackend");
  (void)meta.num_values();
  (void)meta.num_instructions();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  BufferDataLoader loader(data, size, "fuzz.pte");
  // Default verification: MethodMeta's contract is a verified plan.
  Result<Program> program = Program::load(&loader);
  if (!program.ok()) return 0;
  const Program& p = program.get();
  (void)p.version();
  (void)p.constant_bytes();
  (void)p.uses_legacy_constant_buffer();
  (void)p.num_named_data();
  for (size_t i = 0; i < p.num_segments() + 1; ++i) (void)p.segment(i);
  for (size_t i = 0; i < p.num_methods() + 1; ++i) {
    Result<std::string_view> name = p.method_name(i);
    if (!name.ok()) continue;
    Result<MethodMeta> meta = p.method_meta(name.get());
    if (meta.ok()) inspect_method(meta.get());
  }
  (void)p.method_meta("no such method");
  return 0;
}
