#include "runtime/executor/testing/test_kernels.h"

#include <cstring>

namespace torchlight::testing {
namespace {

int g_calls = 0;

template <bool kMul>
void binary_float(KernelContext& ctx, Span<EValue*> args) {
  ++g_calls;
  const size_t out_index = kMul ? 2 : 3;
  TL_KERNEL_CHECK(ctx, args.size() == out_index + 2, Error::kInvalidArgument, "expected %zu args",
                  out_index + 2);
  TL_KERNEL_CHECK(ctx, args[0]->is_tensor() && args[1]->is_tensor() && args[out_index]->is_tensor(),
                  Error::kInvalidType, "self, other and out must be tensors");
  TL_KERNEL_CHECK(ctx, kMul || args[2]->is_scalar(), Error::kInvalidType, "alpha must be a scalar");
  const Tensor a = args[0]->to_tensor();
  const Tensor b = args[1]->to_tensor();
  const Tensor out = args[out_index]->to_tensor();
  TL_KERNEL_CHECK(ctx, out.scalar_type() == ScalarType::kFloat, Error::kInvalidType,
                  "out must be float32");
  TL_KERNEL_CHECK(ctx, a.scalar_type() == ScalarType::kFloat && b.scalar_type() == ScalarType::kFloat,
                  Error::kInvalidType, "test kernel takes float32 only");
  TL_KERNEL_RETURN_IF_ERROR(ctx, out.resize(a.sizes()));
  const float alpha = kMul ? 1.0f : static_cast<float>(args[2]->scalar_as_double());
  const bool scalar_b = b.numel() == 1;
  TL_KERNEL_CHECK(ctx, scalar_b || b.numel() == a.numel(), Error::kInvalidArgument,
                  "sizes differ");
  const float* x = a.const_data_ptr<float>();
  const float* y = b.const_data_ptr<float>();
  float* z = out.mutable_data_ptr<float>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const float other = y[scalar_b ? 0 : i];
    z[i] = kMul ? x[i] * other : x[i] + alpha * other;
  }
}

// The two operators' schemas, as torch spells them.
constexpr ArgSpec kAddArgs[] = {{"self", ArgType::kTensor},
                                {"other", ArgType::kTensor},
                                {"alpha", ArgType::kScalar},
                                {"out", ArgType::kTensor, true},
                                {"result", ArgType::kReturn, true}};
constexpr OpSchema kAddSchema{"aten::add.out",
                              "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) "
                              "-> Tensor(a!)",
                              kAddArgs, 5, false};
constexpr ArgSpec kMulArgs[] = {{"self", ArgType::kTensor},
                                {"other", ArgType::kTensor},
                                {"out", ArgType::kTensor, true},
                                {"result", ArgType::kReturn, true}};
constexpr OpSchema kMulSchema{"aten::mul.out",
                              "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",
                              kMulArgs, 4, false};

}  // namespace

void register_test_kernels(KernelRegistry& registry) {
  static const Kernel kKernels[] = {
      {"aten::add.out", binary_float<false>, KernelPriority::kPortable, KernelKey{}, &kAddSchema},
      {"aten::mul.out", binary_float<true>, KernelPriority::kPortable, KernelKey{}, &kMulSchema},
  };
  Status status = registry.register_kernels(kKernels);
  (void)status;
}

int test_kernel_calls() { return g_calls; }

namespace {
struct AddState {
  float bias;
  float scale;
};
}  // namespace

Result<DelegateHandle*> TestAddBackend::init(BackendInitContext& context, FreeableBuffer* processed,
                                             Span<const CompileSpec> compile_specs) const {
  TL_CHECK_OR_RETURN(processed->size() == sizeof(float), Error::kDelegateInvalidCompatibility,
                     "blob must be 4 bytes, got %zu", processed->size());
  auto* state = static_cast<AddState*>(context.runtime_allocator->allocate(sizeof(AddState)));
  TL_CHECK_OR_RETURN(state != nullptr, Error::kMemoryAllocationFailed, "no memory for state");
  std::memcpy(&state->bias, processed->data(), sizeof(float));
  state->scale = 1.0f;
  for (const CompileSpec& spec : compile_specs) {
    if (spec.key == "scale" && spec.value.size() == 1) state->scale = spec.value[0];
  }
  processed->free();  // Backends may release the blob once consumed.
  ++inits;
  return static_cast<DelegateHandle*>(state);
}

Status TestAddBackend::execute(BackendExecutionContext&, DelegateHandle* handle,
                               Span<EValue*> args) const {
  ++executes;
  TL_CHECK_OR_RETURN(args.size() == 3, Error::kInvalidArgument, "expected 3 args, got %zu",
                     args.size());
  for (EValue* arg : args) {
    TL_CHECK_OR_RETURN(arg->is_tensor() && arg->to_tensor().scalar_type() == ScalarType::kFloat,
                       Error::kInvalidType, "TestAddBackend takes float32 tensors");
  }
  const auto* state = static_cast<const AddState*>(handle);
  const Tensor a = args[0]->to_tensor();
  const Tensor b = args[1]->to_tensor();
  const Tensor out = args[2]->to_tensor();
  TL_RETURN_IF_ERROR(out.resize(a.sizes()));
  for (int64_t i = 0; i < a.numel(); ++i) {
    out.mutable_data_ptr<float>()[i] =
        (a.const_data_ptr<float>()[i] + b.const_data_ptr<float>()[i]) * state->scale + state->bias;
  }
  return Error::kOk;
}

void TestAddBackend::destroy(DelegateHandle*) const { ++destroys; }

TestMemory::TestMemory(std::vector<size_t> arena_sizes, size_t method_bytes)
    : planned(Span<Span<uint8_t>>()),
      method_storage(method_bytes),
      method_allocator(method_storage.data(), method_storage.size()),
      temp_storage(1 << 16),
      temp_allocator(temp_storage.data(), temp_storage.size()) {
  for (size_t size : arena_sizes) arena_storage.emplace_back(size, 0);
  for (auto& storage : arena_storage) arenas.emplace_back(storage.data(), storage.size());
  planned = PlannedMemory(Span<Span<uint8_t>>(arenas.data(), arenas.size()));
  manager.method_allocator = &method_allocator;
  manager.planned_memory = &planned;
  manager.temp_allocator = &temp_allocator;
}

}  // namespace torchlight::testing
