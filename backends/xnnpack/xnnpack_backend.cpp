#include "backends/xnnpack/xnnpack_backend.h"

#include <xnnpack.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "backends/xnnpack/definition_context.h"
#include "backends/xnnpack/graph_validation.h"
#include "backends/xnnpack/linear_stage.h"
#include "backends/xnnpack/node_bounds.h"
#include "backends/xnnpack/node_definition.h"
#include "backends/xnnpack/payload_header.h"
#include "backends/xnnpack/stage_plan.h"
#include "backends/xnnpack/staged_builder.h"
#include "backends/xnnpack/value_definition.h"
#include "backends/xnnpack/xnn_executor.h"
#include "extension/threadpool/threadpool.h"
#include "runtime/core/event_tracer.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace {

using xnnpack::DefinitionContext;
using xnnpack::ExternalValue;
using xnnpack::XnnDelegate;
using xnnpack::XnnExecutor;

// The delegate event (string id) around init, in the load's "Default" block.
constexpr char kInitEventId[] = "XnnpackBackend::init";

bool xnnpack_initialized() {
  // xnn_initialize is idempotent; calling it once keeps the answer stable.
  static const bool ok = xnn_initialize(nullptr) == xnn_status_success;
  return ok;
}

struct SubgraphDeleter {
  void operator()(xnn_subgraph* s) const { xnn_delete_subgraph(s); }
};

// Inputs before outputs, each by ascending external id: the order upstream
// binds them in.
bool binding_order(const ExternalValue& a, const ExternalValue& b) {
  if (a.is_input != b.is_input) return a.is_input;
  return a.external_id < b.external_id;
}

Status check_externals(const ExternalValue* externals, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i) {
    ScalarType type;
    TL_CHECK_OR_RETURN(xnnpack::external_scalar_type(externals[i].datatype, &type),
                       Error::kInvalidProgram,
                       "XNNPACK external value %u has datatype %d, which cannot be bound to a "
                       "tensor",
                       externals[i].external_id, static_cast<int>(externals[i].datatype));
  }
  return Error::kOk;
}

// TORCHLIGHT_XNNPACK_CONV=xnnpack keeps every convolution on XNNPACK (for
// side-by-side measurements); by default float convolutions with one group
// run on Torchlight's conv2d and int8 depthwise ones on depthwise_qs8
// (stage_plan.h).
bool conv2d_offload_disabled() {
  const char* choice = std::getenv("TORCHLIGHT_XNNPACK_CONV");
  return choice != nullptr && std::strcmp(choice, "xnnpack") == 0;
}

// TORCHLIGHT_XNNPACK_FUSE=0 leaves fp32 inverted-residual blocks on
// XNNPACK's operators (inverted_residual_stage.h); TORCHLIGHT_XNNPACK_CONV=
// xnnpack does too.
bool blocks_fused() {
  const char* choice = std::getenv("TORCHLIGHT_XNNPACK_FUSE");
  return !conv2d_offload_disabled() && (choice == nullptr || std::strcmp(choice, "0") != 0);
}

// Reads per node the read log keeps room for; a node reads at most a few
// values (concatenate: 5), and an overflow only turns the split off.
constexpr uint32_t kReadsPerNode = 6;

}  // namespace

XnnpackBackend::XnnpackBackend(uint64_t max_value_bytes, uint64_t max_multiply_adds)
    : max_value_bytes_(max_value_bytes),
      max_multiply_adds_(max_multiply_adds),
      weights_cache_(new (std::nothrow) xnnpack::PackedWeightsCache()) {}

XnnpackBackend::~XnnpackBackend() {
  // A delegate outliving the backend (static destruction order) would
  // release into a freed cache; leak the cache instead.
  if (weights_cache_ != nullptr && !weights_cache_->in_use()) delete weights_cache_;
}

bool XnnpackBackend::is_available() const { return xnnpack_initialized(); }

Result<DelegateHandle*> XnnpackBackend::init(BackendInitContext& context,
                                             FreeableBuffer* processed,
                                             Span<const CompileSpec> compile_specs) const {
  EventTracer* tracer = context.event_tracer;
  if (tracer == nullptr) return init_delegate(context, processed);
  const EventTracerEntry entry = tracer->start_profiling_delegate(kInitEventId, -1);
  Result<DelegateHandle*> handle = init_delegate(context, processed);
  tracer->end_profiling_delegate(entry, nullptr, 0);
  return handle;
}

Result<DelegateHandle*> XnnpackBackend::init_delegate(BackendInitContext& context,
                                                      FreeableBuffer* processed) const {
  // Upstream writes no compile specs and its runtime ignores any.
  TL_CHECK_OR_RETURN(processed != nullptr, Error::kInvalidArgument, "no XNNPACK payload");
  TL_ASSIGN_OR_RETURN(xnnpack::PayloadSections sections,
                      xnnpack::parse_payload_sections(processed->bytes()));
  TL_ASSIGN_OR_RETURN(const fb_xnnpack::XNNGraph* graph,
                      xnnpack::verify_graph(sections.flatbuffer));
  TL_CHECK_OR_RETURN(xnnpack_initialized(), Error::kNotSupported,
                     "XNNPACK does not initialise on this CPU");
  MemoryAllocator* allocator = context.runtime_allocator;
  TL_CHECK_OR_RETURN(allocator != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "no runtime allocator for the XNNPACK delegate");

  const uint32_t num_externs = graph->num_externs();
  const uint32_t num_values = graph->xvalues() == nullptr ? 0 : graph->xvalues()->size();
  xnn_subgraph_t raw_subgraph = nullptr;
  xnn_status s = xnn_create_subgraph(num_externs, 0, &raw_subgraph);
  TL_CHECK_OR_RETURN(s == xnn_status_success, Error::kDelegateMemoryAllocationFailed,
                     "XNNPACK could not create a subgraph (status %d)", static_cast<int>(s));
  std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph(raw_subgraph);

  // Load-time scratch; the delegate keeps none of it.
  std::unique_ptr<uint32_t[]> id_map(new (std::nothrow) uint32_t[num_values + 1]);
  std::unique_ptr<xnn_datatype[]> datatypes(new (std::nothrow) xnn_datatype[num_values + 1]);
  std::unique_ptr<xnnpack::DeclaredShape[]> shapes(
      new (std::nothrow) xnnpack::DeclaredShape[num_values + 1]);
  std::unique_ptr<xnnpack::ValueKind[]> kinds(new (std::nothrow) xnnpack::ValueKind[num_values + 1]);
  std::unique_ptr<uint32_t[]> producers(new (std::nothrow) uint32_t[num_values + 1]);
  std::unique_ptr<uint8_t[]> consumed(new (std::nothrow) uint8_t[num_values + 1]());
  std::unique_ptr<xnnpack::ConstantRegion[]> constants(
      new (std::nothrow) xnnpack::ConstantRegion[num_values + 1]);
  std::unique_ptr<const void*[]> constant_data(new (std::nothrow) const void*[num_values + 1]());
  std::unique_ptr<uint32_t[]> external_ids(new (std::nothrow) uint32_t[num_values + 1]);
  std::unique_ptr<xnnpack::BlockwiseWeights[]> blockwise(
      new (std::nothrow) xnnpack::BlockwiseWeights[num_values + 1]());
  std::unique_ptr<uint8_t[]> nonbatch_dims(new (std::nothrow) uint8_t[num_values + 1]());
  const uint32_t num_nodes = graph->xnodes() == nullptr ? 0 : graph->xnodes()->size();
  xnnpack::ReadLog reads;
  reads.capacity = num_nodes * kReadsPerNode + kReadsPerNode;
  std::unique_ptr<xnnpack::NodeRead[]> read_entries(new (std::nothrow)
                                                        xnnpack::NodeRead[reads.capacity]);
  reads.entries = read_entries.get();
  auto* externals = allocator->allocate_array<ExternalValue>(num_externs);
  auto* bindings = allocator->allocate_array<xnn_external_value>(num_externs);
  auto* executor_memory = allocator->allocate(sizeof(XnnExecutor), alignof(XnnExecutor));
  TL_CHECK_OR_RETURN(id_map != nullptr && datatypes != nullptr && shapes != nullptr &&
                         kinds != nullptr && producers != nullptr && consumed != nullptr &&
                         constants != nullptr && constant_data != nullptr &&
                         external_ids != nullptr && read_entries != nullptr &&
                         blockwise != nullptr && nonbatch_dims != nullptr &&
                         externals != nullptr &&
                         bindings != nullptr && executor_memory != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory for an XNNPACK delegate of %u values", num_values);
  std::fill(id_map.get(), id_map.get() + num_values, xnnpack::kUndefinedValue);
  std::fill(producers.get(), producers.get() + num_values, xnnpack::kNoProducer);
  std::fill(kinds.get(), kinds.get() + num_values, xnnpack::ValueKind::kInternal);
  for (uint32_t i = 0; i < num_externs; ++i) bindings[i] = {0, nullptr};

  TL_ASSIGN_OR_RETURN(xnnpack::NamedConstants named,
                      xnnpack::NamedConstants::load(*graph, context.named_data_map, allocator));
  DefinitionContext ctx;
  ctx.subgraph = subgraph.get();
  ctx.graph = graph;
  ctx.sections = sections;
  ctx.named = &named;
  ctx.allocator = allocator;
  ctx.id_map = id_map.get();
  ctx.num_values = num_values;
  ctx.datatypes = datatypes.get();
  ctx.shapes = shapes.get();
  ctx.kinds = kinds.get();
  ctx.producers = producers.get();
  ctx.consumed = consumed.get();
  ctx.max_value_bytes = max_value_bytes_;
  ctx.max_multiply_adds = max_multiply_adds_;
  ctx.constant_data = constant_data.get();
  ctx.payload_external_ids = external_ids.get();
  ctx.blockwise = blockwise.get();
  ctx.nonbatch_dims = nonbatch_dims.get();
  ctx.reads = &reads;
  if (weights_cache_ != nullptr) {
    ctx.constants = constants.get();
    ctx.hash_key = weights_cache_->hash_key();
  }
  uint32_t num_externals = 0;
  TL_RETURN_IF_ERROR(xnnpack::define_values(ctx, externals, &num_externals));
  TL_RETURN_IF_ERROR(check_externals(externals, num_externals));
  TL_RETURN_IF_ERROR(xnnpack::define_nodes(ctx));
  TL_RETURN_IF_ERROR(xnnpack::check_node_bounds(ctx));
  std::sort(externals, externals + num_externals, binding_order);
  TL_ASSIGN_OR_RETURN(xnnpack::InputShapeCheck input_check,
                      xnnpack::InputShapeCheck::create(ctx, allocator));

  pthreadpool_t pool = threadpool::native_pool();
  // Per-operator timings cost a clock read per operator: only when traced.
  const uint32_t flags = context.event_tracer != nullptr ? XNN_FLAG_BASIC_PROFILING : 0;
  TL_ASSIGN_OR_RETURN(xnnpack::StagePlan plan,
                      xnnpack::plan_stages(ctx, reads, num_externs,
                                           {!conv2d_offload_disabled(),
                                            xnnpack::linears_leave_xnnpack(),
                                            !conv2d_offload_disabled(), blocks_fused()},
                                           allocator));
  if (plan.split()) {
    const xnnpack::StagedBuild build{&ctx,         &reads, &plan, externals, num_externals,
                                     weights_cache_, pool, flags, context.event_tracer != nullptr};
    TL_ASSIGN_OR_RETURN(XnnDelegate * staged, xnnpack::build_staged_delegate(build, processed));
    staged->keep(std::move(named));
    staged->set_input_check(input_check);
    return static_cast<DelegateHandle*>(staged);
  }

  xnn_runtime_t runtime = nullptr;
  if (weights_cache_ != nullptr) {
    weights_cache_->begin_runtime({constants.get(), ctx.num_constants});
    s = xnn_create_runtime_v3(subgraph.get(), weights_cache_->provider(), pool, flags,
                              &runtime);
    weights_cache_->end_runtime(s == xnn_status_success);
  } else {
    s = xnn_create_runtime_v3(subgraph.get(), /*weights_cache=*/nullptr, pool, flags,
                              &runtime);
  }
  TL_CHECK_OR_RETURN(s == xnn_status_success, Error::kInvalidProgram,
                     "XNNPACK could not build a runtime for the delegate's graph (status %d)",
                     static_cast<int>(s));
  auto* executor = new (executor_memory)
      XnnExecutor(runtime, weights_cache_, pool, std::move(*processed), externals, bindings,
                  num_externals);
  executor->keep(std::move(named));
  executor->set_input_check(input_check);
  if (context.event_tracer != nullptr) {
    xnnpack::XnnProfiler profiler;
    if (profiler.init(runtime, allocator)) executor->set_profiler(profiler);
  }
  return static_cast<DelegateHandle*>(static_cast<XnnDelegate*>(executor));
}

Status XnnpackBackend::execute(BackendExecutionContext& context, DelegateHandle* handle,
                               Span<EValue*> args) const {
  TL_CHECK_OR_RETURN(handle != nullptr, Error::kDelegateInvalidHandle,
                     "XNNPACK delegate handle is null");
  return static_cast<XnnDelegate*>(handle)->execute(args, context.event_tracer);
}

void XnnpackBackend::destroy(DelegateHandle* handle) const {
  // The memory belongs to the runtime allocator; only the destructor runs.
  if (handle != nullptr) static_cast<XnnDelegate*>(handle)->~XnnDelegate();
}

const XnnpackBackend& xnnpack_backend() {
  static const XnnpackBackend backend;
  return backend;
}

Status register_xnnpack_backend(BackendRegistry& registry) {
  return registry.register_backend(kXnnpackBackendId, &xnnpack_backend());
}

}  // namespace torchlight
