// Fuzz target: an XNNPACK delegate payload through XnnpackBackend::init
// (header, Verifier, value and node checks, XNNPACK subgraph and runtime),
// then, when it loads, one execute with zero-filled tensors of the declared
// external shapes. An execute that succeeds must leave every output within
// its declared dims (init holds each node's output, as XNNPACK computes it,
// to them: shape_inference.h); one that does not is a finding (trap).
// backends/xnnpack/xnnpack_fuzz_test.cpp also replays the seed with every
// byte flipped through it in ordinary builds.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include <xnnpack.h>

#include "backends/xnnpack/graph_validation.h"
#include "backends/xnnpack/payload_header.h"
#include "backends/xnnpack/value_definition.h"
#include "backends/xnnpack/value_view.h"
#include "backends/xnnpack/xnn_executor.h"
#include "backends/xnnpack/xnnpack_backend.h"
#include "extension/memory/malloc_allocator.h"
#include "extension/tensor/owned_tensor.h"
#include "schema/xnnpack_generated.h"

namespace {

using namespace torchlight;

// Caps what one input may allocate, so the fuzzer explores and does not OOM.
constexpr int64_t kMaxExternalElements = int64_t{1} << 16;
// The backend's bound on a delegate's declared activation bytes, well under
// libFuzzer's 2 GiB malloc limit (XNNPACK's workspace follows from them).
constexpr uint64_t kMaxValueBytes = uint64_t{256} << 20;
// The backend's bound on one execute's multiply-adds at the declared shapes:
// at most ~0.3 s in this build (ASan, -O1) on the slowest path, a conv2d
// stage with one output channel (2026-11-27: 57M took 2-4.7 s). The stage
// seeds need up to 4.7M.
constexpr uint64_t kMaxMultiplyAdds = uint64_t{1} << 23;

const XnnpackBackend& fuzz_backend() {
  static const XnnpackBackend backend(kMaxValueBytes, kMaxMultiplyAdds);
  return backend;
}

// An output tensor and the dims its payload value declares.
struct DeclaredOutput {
  const OwnedTensor* tensor;
  std::vector<SizesType> dims;
};

// Zero-filled tensors for every external value, by external id; false when
// a shape is too large or a dtype cannot be bound.
bool make_externals(const fb_xnnpack::XNNGraph* graph, std::vector<OwnedTensor>* tensors,
                    std::vector<EValue>* args, std::vector<DeclaredOutput>* outputs) {
  args->assign(graph->num_externs(), EValue());
  const auto* values = graph->xvalues();
  for (uint32_t i = 0; values != nullptr && i < values->size(); ++i) {
    Result<xnnpack::ValueView> view = xnnpack::view_value(values->Get(i), i);
    if (!view.ok() || view->tensor->flags() == 0) continue;
    ScalarType type;
    const xnn_datatype datatype =
        xnnpack::to_xnn_datatype(static_cast<int16_t>(view->tensor->datatype()));
    if (!xnnpack::external_scalar_type(datatype, &type)) return false;
    std::vector<SizesType> sizes;
    int64_t numel = 1;
    if (view->tensor->dims() != nullptr) {
      for (uint32_t d : *view->tensor->dims()) {
        numel *= d;
        if (numel > kMaxExternalElements) return false;
        sizes.push_back(static_cast<SizesType>(d));
      }
    }
    // Outputs may shrink or grow within the declared bound.
    Result<OwnedTensor> t = OwnedTensor::make(type, sizes, TensorShapeDynamism::kDynamicBound);
    if (!t.ok()) return false;
    tensors->push_back(std::move(t.get()));
    (*args)[view->tensor->external_id()] = tensors->back().evalue();
    if (view->tensor->flags() == XNN_VALUE_FLAG_EXTERNAL_OUTPUT) {
      outputs->push_back({&tensors->back(), sizes});
    }
  }
  return true;
}

// Traps when an output came out of a successful execute with another rank or
// a dim beyond the declared one (its capacity only bounds the element count).
void check_within_declared(const std::vector<DeclaredOutput>& outputs) {
  for (const DeclaredOutput& o : outputs) {
    const Tensor& t = o.tensor->tensor();
    bool fits = t.dim() == o.dims.size() || (t.dim() == 0 && o.dims.size() == 1 && o.dims[0] == 1);
    for (size_t d = 0; fits && d < t.dim(); ++d) fits = t.size(d) <= o.dims[d];
    if (!fits) {
      std::fprintf(stderr, "XNNPACK output of %zu dims outgrew its declared %zu dims\n", t.dim(),
                   o.dims.size());
      __builtin_trap();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  MallocAllocator allocator;
  BackendInitContext context;
  context.runtime_allocator = &allocator;
  FreeableBuffer processed(data, size, nullptr);
  Result<DelegateHandle*> handle = fuzz_backend().init(context, &processed, {});
  if (!handle.ok()) return 0;
  // init accepted it, so the same checks pass again here.
  Result<xnnpack::PayloadSections> sections = xnnpack::parse_payload_sections({data, size});
  Result<const fb_xnnpack::XNNGraph*> graph =
      sections.ok() ? xnnpack::verify_graph(sections->flatbuffer)
                    : Result<const fb_xnnpack::XNNGraph*>(sections.status());
  std::vector<OwnedTensor> tensors;
  tensors.reserve(graph.ok() ? graph.get()->num_externs() : 0);
  std::vector<EValue> args;
  std::vector<DeclaredOutput> outputs;
  if (graph.ok() && make_externals(graph.get(), &tensors, &args, &outputs)) {
    std::vector<EValue*> pointers;
    for (EValue& v : args) pointers.push_back(&v);
    BackendExecutionContext exec;
    if (fuzz_backend().execute(exec, handle.get(), {pointers.data(), pointers.size()}).ok()) {
      check_within_declared(outputs);
    }
  }
  fuzz_backend().destroy(handle.get());
  return 0;
}
