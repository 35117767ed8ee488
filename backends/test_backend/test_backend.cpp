#include "backends/test_backend/test_backend.h"

#include <cstring>

namespace torchlight {
namespace {

constexpr size_t kHeaderSize = 28;
constexpr size_t kConstantSize = 8;
constexpr size_t kInstructionSize = 20;
// Bounds on what a blob may ask for; the blob comes from a file.
constexpr uint32_t kMaxSlots = 4096;
constexpr uint32_t kMaxInstructions = 65536;

enum Opcode : uint32_t { kAdd = 1, kSub = 2, kMul = 3 };

struct Constant {
  uint32_t slot;
  float value;
};

struct Instruction {
  uint32_t opcode;
  uint32_t a;
  uint32_t b;
  uint32_t dst;
  float alpha;
};

// The parsed blob, in runtime-allocator memory.
struct Delegate {
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t num_slots;
  uint32_t num_constants;
  uint32_t num_instructions;
  Constant* constants;
  Instruction* instructions;
  uint32_t* outputs;
};

uint32_t read_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

float read_f32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

Status check_version_spec(Span<const CompileSpec> specs) {
  for (const CompileSpec& spec : specs) {
    if (spec.key != "version") continue;
    const bool ok = spec.value.size() == 1 && spec.value[0] == '1';
    TL_CHECK_OR_RETURN(ok, Error::kDelegateInvalidCompatibility,
                       "compile spec 'version' is '%.*s', but this backend implements version 1",
                       static_cast<int>(spec.value.size()),
                       reinterpret_cast<const char*>(spec.value.data()));
    return Error::kOk;
  }
  return Status::error(Error::kDelegateInvalidCompatibility,
                       "the delegate has no 'version' compile spec");
}

// Checks every index and that each slot is written before it is read.
Status check_delegate(const Delegate& d) {
  bool defined[kMaxSlots] = {};
  for (uint32_t i = 0; i < d.num_inputs; ++i) defined[i] = true;
  for (uint32_t i = 0; i < d.num_constants; ++i) {
    const uint32_t slot = d.constants[i].slot;
    TL_CHECK_OR_RETURN(slot >= d.num_inputs && slot < d.num_slots && !defined[slot],
                       Error::kInvalidProgram,
                       "constant %u uses slot %u; expected an unused slot in [%u, %u)", i, slot,
                       d.num_inputs, d.num_slots);
    defined[slot] = true;
  }
  for (uint32_t i = 0; i < d.num_instructions; ++i) {
    const Instruction& in = d.instructions[i];
    TL_CHECK_OR_RETURN(in.opcode >= kAdd && in.opcode <= kMul, Error::kInvalidProgram,
                       "instruction %u has unknown opcode %u", i, in.opcode);
    TL_CHECK_OR_RETURN(in.a < d.num_slots && in.b < d.num_slots && defined[in.a] && defined[in.b],
                       Error::kInvalidProgram,
                       "instruction %u reads slots %u and %u; each must be an input, a constant "
                       "or an earlier result (of %u slots)",
                       i, in.a, in.b, d.num_slots);
    TL_CHECK_OR_RETURN(in.dst >= d.num_inputs && in.dst < d.num_slots, Error::kInvalidProgram,
                       "instruction %u writes slot %u; expected a temporary in [%u, %u)", i, in.dst,
                       d.num_inputs, d.num_slots);
    for (uint32_t c = 0; c < d.num_constants; ++c) {
      TL_CHECK_OR_RETURN(d.constants[c].slot != in.dst, Error::kInvalidProgram,
                         "instruction %u overwrites constant slot %u", i, in.dst);
    }
    defined[in.dst] = true;
  }
  for (uint32_t i = 0; i < d.num_outputs; ++i) {
    TL_CHECK_OR_RETURN(d.outputs[i] < d.num_slots && defined[d.outputs[i]], Error::kInvalidProgram,
                       "output %u is slot %u, which nothing defines", i, d.outputs[i]);
  }
  return Error::kOk;
}

}  // namespace

Result<DelegateHandle*> TestBackend::init(BackendInitContext& context, FreeableBuffer* processed,
                                          Span<const CompileSpec> compile_specs) const {
  TL_RETURN_IF_ERROR(check_version_spec(compile_specs));
  const uint8_t* blob = static_cast<const uint8_t*>(processed->data());
  const size_t size = processed->size();
  TL_CHECK_OR_RETURN(size >= kHeaderSize && std::memcmp(blob, "TLTB", 4) == 0,
                     Error::kDelegateInvalidCompatibility,
                     "the delegate blob (%zu bytes) does not start with the TLTB header", size);
  const uint32_t version = read_u32(blob + 4);
  TL_CHECK_OR_RETURN(version == kTestBackendVersion, Error::kDelegateInvalidCompatibility,
                     "the delegate blob is version %u, this backend implements %u", version,
                     kTestBackendVersion);
  Delegate d{};
  d.num_inputs = read_u32(blob + 8);
  d.num_outputs = read_u32(blob + 12);
  d.num_slots = read_u32(blob + 16);
  d.num_constants = read_u32(blob + 20);
  d.num_instructions = read_u32(blob + 24);
  TL_CHECK_OR_RETURN(d.num_slots <= kMaxSlots && d.num_inputs <= d.num_slots &&
                         d.num_constants <= d.num_slots && d.num_outputs <= kMaxSlots &&
                         d.num_instructions <= kMaxInstructions,
                     Error::kInvalidProgram,
                     "delegate blob counts are out of range (%u inputs, %u outputs, %u slots, %u "
                     "constants, %u instructions)",
                     d.num_inputs, d.num_outputs, d.num_slots, d.num_constants, d.num_instructions);
  const size_t expected = kHeaderSize + kConstantSize * d.num_constants +
                          kInstructionSize * d.num_instructions + 4 * size_t{d.num_outputs};
  TL_CHECK_OR_RETURN(size == expected, Error::kInvalidProgram,
                     "delegate blob is %zu bytes; its counts need exactly %zu", size, expected);

  MemoryAllocator* allocator = context.runtime_allocator;
  TL_CHECK_OR_RETURN(allocator != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "no runtime allocator for the delegate's state");
  auto* delegate = allocator->allocate_array<Delegate>(1);
  auto* constants = allocator->allocate_array<Constant>(d.num_constants);
  auto* instructions = allocator->allocate_array<Instruction>(d.num_instructions);
  auto* outputs = allocator->allocate_array<uint32_t>(d.num_outputs);
  TL_CHECK_OR_RETURN(delegate != nullptr && constants != nullptr && instructions != nullptr &&
                         outputs != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "runtime allocator is out of memory for the delegate's %u instructions",
                     d.num_instructions);
  const uint8_t* p = blob + kHeaderSize;
  for (uint32_t i = 0; i < d.num_constants; ++i, p += kConstantSize) {
    constants[i] = {read_u32(p), read_f32(p + 4)};
  }
  for (uint32_t i = 0; i < d.num_instructions; ++i, p += kInstructionSize) {
    instructions[i] = {read_u32(p), read_u32(p + 4), read_u32(p + 8), read_u32(p + 12),
                       read_f32(p + 16)};
  }
  for (uint32_t i = 0; i < d.num_outputs; ++i, p += 4) outputs[i] = read_u32(p);
  d.constants = constants;
  d.instructions = instructions;
  d.outputs = outputs;
  TL_RETURN_IF_ERROR(check_delegate(d));
  *delegate = d;
  processed->free();  // Everything needed was copied.
  return static_cast<DelegateHandle*>(delegate);
}

Status TestBackend::execute(BackendExecutionContext& context, DelegateHandle* handle,
                            Span<EValue*> args) const {
  const Delegate& d = *static_cast<const Delegate*>(handle);
  TL_CHECK_OR_RETURN(args.size() == size_t{d.num_inputs} + d.num_outputs && d.num_inputs > 0,
                     Error::kInvalidArgument,
                     "the delegate takes %u inputs and %u outputs, got %zu arguments",
                     d.num_inputs, d.num_outputs, args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    TL_CHECK_OR_RETURN(args[i] != nullptr && args[i]->is_tensor() &&
                           args[i]->to_tensor().scalar_type() == ScalarType::kFloat,
                       Error::kInvalidType, "delegate argument %zu must be a float32 tensor", i);
  }
  const Tensor first = args[0]->to_tensor();
  const int64_t n = first.numel();
  for (uint32_t i = 1; i < d.num_inputs; ++i) {
    TL_CHECK_OR_RETURN(args[i]->to_tensor().numel() == n, Error::kInvalidArgument,
                       "delegate input %u has %lld elements, input 0 has %lld", i,
                       static_cast<long long>(args[i]->to_tensor().numel()),
                       static_cast<long long>(n));
  }

  // Each slot is a pointer and a stride: 1 for tensors, 0 for constants.
  TL_CHECK_OR_RETURN(context.temp_allocator != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "the delegate needs a temp allocator");
  auto* data = context.temp_allocator->allocate_array<float*>(d.num_slots);
  auto* stride = context.temp_allocator->allocate_array<int64_t>(d.num_slots);
  TL_CHECK_OR_RETURN(data != nullptr && stride != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "temp allocator is out of memory for %u slots", d.num_slots);
  for (uint32_t s = 0; s < d.num_slots; ++s) {
    data[s] = nullptr;
    stride[s] = 1;
  }
  for (uint32_t i = 0; i < d.num_inputs; ++i) data[i] = args[i]->to_tensor().mutable_data_ptr<float>();
  for (uint32_t c = 0; c < d.num_constants; ++c) {
    data[d.constants[c].slot] = &d.constants[c].value;
    stride[d.constants[c].slot] = 0;
  }
  for (uint32_t i = 0; i < d.num_instructions; ++i) {
    const Instruction& in = d.instructions[i];
    if (data[in.dst] == nullptr) {
      data[in.dst] = context.temp_allocator->allocate_array<float>(static_cast<size_t>(n));
      TL_CHECK_OR_RETURN(data[in.dst] != nullptr, Error::kDelegateMemoryAllocationFailed,
                         "temp allocator is out of memory for %lld floats",
                         static_cast<long long>(n));
    }
    const float* a = data[in.a];
    const float* b = data[in.b];
    float* out = data[in.dst];
    const int64_t sa = stride[in.a];
    const int64_t sb = stride[in.b];
    for (int64_t k = 0; k < n; ++k) {
      const float x = a[k * sa];
      const float y = b[k * sb];
      out[k] = in.opcode == kAdd ? x + in.alpha * y : in.opcode == kSub ? x - in.alpha * y : x * y;
    }
  }
  for (uint32_t i = 0; i < d.num_outputs; ++i) {
    const Tensor out = args[d.num_inputs + i]->to_tensor();
    TL_CHECK_OR_RETURN(out.dim() == first.dim(), Error::kInvalidArgument,
                       "delegate output %u is %zu-d, the inputs are %zu-d", i, out.dim(),
                       first.dim());
    Status resized = out.resize(first.sizes());
    if (!resized.ok()) return resized.with_context("delegate output %u", i);
    const uint32_t slot = d.outputs[i];
    float* dst = out.mutable_data_ptr<float>();
    for (int64_t k = 0; k < n; ++k) dst[k] = data[slot][k * stride[slot]];
  }
  return Error::kOk;
}

const TestBackend& test_backend() {
  static const TestBackend backend;
  return backend;
}

Status register_test_backend(BackendRegistry& registry) {
  return registry.register_backend(kTestBackendId, &test_backend());
}

}  // namespace torchlight
