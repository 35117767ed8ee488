#include "backends/xnnpack/xnn_executor.h"

#include <utility>

#include "extension/threadpool/threadpool.h"
#include "runtime/platform/platform.h"

namespace torchlight {
namespace xnnpack {
namespace {

bool is_contiguous(const Tensor& t) {
  for (size_t d = 0; d < t.dim(); ++d) {
    if (t.dim_order()[d] != d) return false;
  }
  return true;
}

}  // namespace

Result<Tensor> external_tensor(Span<EValue*> args, const ExternalValue& e) {
  const char* role = e.is_input ? "input" : "output";
  TL_CHECK_OR_RETURN(e.external_id < args.size() && args[e.external_id] != nullptr,
                     Error::kInvalidArgument,
                     "XNNPACK delegate %s %u is missing: the call passed %zu arguments", role,
                     e.external_id, args.size());
  const EValue& value = *args[e.external_id];
  TL_CHECK_OR_RETURN(value.is_tensor(), Error::kInvalidType,
                     "XNNPACK delegate argument %u must be a tensor", e.external_id);
  const Tensor t = value.to_tensor();
  ScalarType expected = ScalarType::kFloat;
  TL_CHECK_OR_RETURN(external_scalar_type(e.datatype, &expected), Error::kInternal,
                     "XNNPACK external %u has datatype %d", e.external_id,
                     static_cast<int>(e.datatype));
  TL_CHECK_OR_RETURN(t.scalar_type() == expected, Error::kInvalidType,
                     "XNNPACK delegate %s %u is %s; the payload expects %s", role, e.external_id,
                     to_string(t.scalar_type()), to_string(expected));
  TL_CHECK_OR_RETURN(is_contiguous(t), Error::kInvalidType,
                     "XNNPACK delegate %s %u is not in contiguous dim order", role,
                     e.external_id);
  if (!e.is_input) return t;
  // 0-d tensors are written as [1].
  const bool scalar = t.dim() == 0 && e.rank == 1 && e.dims[0] == 1;
  TL_CHECK_OR_RETURN(t.dim() == e.rank || scalar, Error::kInvalidArgument,
                     "XNNPACK delegate input %u has %zu dims; the payload declares %u",
                     e.external_id, t.dim(), e.rank);
  // The payload gives dynamic dims as upper bounds; larger inputs would let
  // ops with fixed weight shapes read past what the graph was checked for.
  for (size_t d = 0; d < t.dim(); ++d) {
    TL_CHECK_OR_RETURN(static_cast<size_t>(t.size(d)) <= e.dims[d], Error::kInvalidArgument,
                       "XNNPACK delegate input %u has size %d in dim %zu; the payload allows at "
                       "most %zu",
                       e.external_id, static_cast<int>(t.size(d)), d, e.dims[d]);
  }
  return t;
}

Status internal_error(xnn_status s, const char* step) {
  return Status::error(Error::kInternal, "XNNPACK %s failed with status %d", step,
                       static_cast<int>(s));
}

bool external_scalar_type(xnn_datatype t, ScalarType* out) {
  switch (t) {
    case xnn_datatype_fp32: *out = ScalarType::kFloat; return true;
    case xnn_datatype_fp16: *out = ScalarType::kHalf; return true;
    case xnn_datatype_bf16: *out = ScalarType::kBFloat16; return true;
    case xnn_datatype_qint8: *out = ScalarType::kChar; return true;
    case xnn_datatype_quint8: *out = ScalarType::kByte; return true;
    case xnn_datatype_int32: *out = ScalarType::kInt; return true;
    default: return false;
  }
}

XnnExecutor::XnnExecutor(xnn_runtime_t runtime, PackedWeightsCache* cache, pthreadpool_t pool,
                         FreeableBuffer payload, ExternalValue* externals,
                         xnn_external_value* bindings, uint32_t num_externals)
    : runtime_(runtime), cache_(cache), pool_(pool), payload_(std::move(payload)), externals_(externals),
      bindings_(bindings), num_externals_(num_externals) {}

XnnExecutor::~XnnExecutor() {
  // The runtime goes first: it may point into the payload.
  if (runtime_ != nullptr) xnn_delete_runtime(runtime_);
  if (cache_ != nullptr) cache_->release_runtime();
}

void XnnExecutor::invalidate() {
  prepared_ = false;
  for (uint32_t i = 0; i < num_externals_; ++i) externals_[i].bound_rank = kNoShape;
}

Status check_pool_unchanged(pthreadpool_t pool) {
  // A runtime keeps the pool it was created with.
  TL_CHECK_OR_RETURN(pool == nullptr || pool == threadpool::native_pool(), Error::kInvalidState,
                     "the thread pool was resized after this XNNPACK delegate was loaded; load "
                     "the method again");
  return Error::kOk;
}

Status XnnExecutor::execute(Span<EValue*> args, EventTracer* tracer) {
  TL_RETURN_IF_ERROR(check_pool_unchanged(pool_));
  Status status = bind_and_prepare(args);
  if (!status.ok()) {
    invalidate();
    return status;
  }
  const bool profile = tracer != nullptr && profiler_.enabled();
  const uint64_t start_ns = profile ? tl_platform_monotonic_ns() : 0;
  if (pool_ != nullptr) threadpool::yield_to_native_pool();
  const xnn_status s = xnn_invoke_runtime(runtime_);
  if (s != xnn_status_success) return internal_error(s, "invoke");
  if (profile) profiler_.report(runtime_, tracer, start_ns);
  return Error::kOk;
}

Status XnnExecutor::bind_and_prepare(Span<EValue*> args) {
  bool reshape = !prepared_;
  bool setup = !prepared_;
  for (uint32_t i = 0; i < num_externals_; ++i) {
    ExternalValue& e = externals_[i];
    TL_ASSIGN_OR_RETURN(Tensor t, external_tensor(args, e));
    void* data = t.mutable_data_ptr<void>();
    setup = setup || bindings_[i].data != data;
    bindings_[i] = {e.external_id, data};
    if (!e.is_input) continue;
    size_t dims[XNN_MAX_TENSOR_DIMS];
    bool same = e.bound_rank == t.dim();
    for (size_t d = 0; d < t.dim(); ++d) {
      dims[d] = static_cast<size_t>(t.size(d));
      same = same && e.bound_dims[d] == dims[d];
    }
    if (same) continue;
    const xnn_status s = xnn_reshape_external_value(runtime_, e.external_id, t.dim(), dims);
    TL_CHECK_OR_RETURN(s == xnn_status_success, Error::kInvalidArgument,
                       "XNNPACK cannot take input %u with shape of %zu dims (status %d)",
                       e.external_id, t.dim(), static_cast<int>(s));
    e.bound_rank = static_cast<uint32_t>(t.dim());
    for (size_t d = 0; d < t.dim(); ++d) e.bound_dims[d] = dims[d];
    reshape = true;
  }
  if (reshape) {
    TL_RETURN_IF_ERROR(check_input_shapes(externals_, num_externals_));
    const xnn_status s = xnn_reshape_runtime(runtime_);
    TL_CHECK_OR_RETURN(s == xnn_status_success, Error::kInvalidArgument,
                       "XNNPACK cannot run with these input shapes (reshape status %d)",
                       static_cast<int>(s));
    setup = true;
  }
  // Outputs take their shapes from XNNPACK before setup, so a resize that
  // fails leaves nothing half-written.
  for (uint32_t i = 0; i < num_externals_; ++i) {
    const ExternalValue& e = externals_[i];
    if (e.is_input) continue;
    size_t num_dims = 0;
    size_t dims[XNN_MAX_TENSOR_DIMS];
    const xnn_status s = xnn_get_external_value_shape(runtime_, e.external_id, &num_dims, dims);
    if (s != xnn_status_success) return internal_error(s, "output shape query");
    const Tensor t = args[e.external_id]->to_tensor();
    size_t numel = 1;
    for (size_t d = 0; d < num_dims; ++d) numel *= dims[d];
    if (t.dim() == 0 && numel == 1) continue;  // 0-d outputs are [1] in XNNPACK.
    SizesType sizes[XNN_MAX_TENSOR_DIMS];
    for (size_t d = 0; d < num_dims; ++d) sizes[d] = static_cast<SizesType>(dims[d]);
    Status resized = t.resize({sizes, num_dims});
    if (!resized.ok()) return resized.with_context("XNNPACK delegate output %u", e.external_id);
    void* data = t.mutable_data_ptr<void>();
    setup = setup || bindings_[i].data != data;
    bindings_[i].data = data;
  }
  if (setup) {
    const xnn_status s = xnn_setup_runtime_v2(runtime_, num_externals_, bindings_);
    if (s != xnn_status_success) return internal_error(s, "setup");
  }
  prepared_ = true;
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
