#include "backends/xnnpack/linear_stage.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "backends/xnnpack/node_definition.h"
#include "kernels/quantized/quantized_ops.h"
#include "runtime/core/evalue.h"
#include "runtime/kernel/kernel_context.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

constexpr const char* kKernelName = "torchlight::linear_8da4w";

float widen_bf16(uint16_t bits) {
  const uint32_t wide = uint32_t{bits} << 16;
  float f;
  std::memcpy(&f, &wide, sizeof(f));
  return f;
}

// A contiguous 2-d tensor over borrowed memory, for one kernel call.
struct Matrix {
  SizesType sizes[2];
  DimOrderType order[2] = {0, 1};
  StridesType strides[2];
  TensorImpl impl;

  Matrix(ScalarType type, int64_t rows, int64_t cols, const void* data)
      : sizes{static_cast<SizesType>(rows), static_cast<SizesType>(cols)},
        strides{cols, 1},
        impl(type, 2, sizes, const_cast<void*>(data), order, strides) {}
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

// linear_8da4w.out(input, weight, weight_scales, group_size, bias, *, out)
// over the stage's constants and the given rows.
struct KernelCall {
  Matrix input;
  Matrix weight;
  Matrix scales;
  Matrix bias;
  Matrix out;
  EValue values[7];
  EValue* args[7];

  KernelCall(const LinearStage& s, int64_t rows, const float* x, float* y)
      : input(ScalarType::kFloat, rows, s.k, x),
        weight(ScalarType::kByte, s.n, s.k / 2, s.weight),
        scales(ScalarType::kFloat, s.n, s.k / s.group, s.scales),
        bias(ScalarType::kFloat, 1, s.n, s.bias),
        out(ScalarType::kFloat, rows, s.n, y) {
    values[0] = EValue(Tensor(&input.impl));
    values[1] = EValue(Tensor(&weight.impl));
    values[2] = EValue(Tensor(&scales.impl));
    values[3] = EValue(s.group);
    if (s.bias != nullptr) values[4] = EValue(Tensor(&bias.impl));
    values[5] = EValue(Tensor(&out.impl));
    for (int i = 0; i < 7; ++i) args[i] = &values[i];
  }
  Span<EValue*> span() { return {args, 7}; }
};

struct SubgraphDeleter {
  void operator()(xnn_subgraph* s) const { xnn_delete_subgraph(s); }
};

// The convert and fully-connected alone on XNNPACK, input [1, K] (external
// id 0) and output [1, N] (id 1), reshaped once; for one-row calls.
Result<xnn_runtime_t> build_one_row(const LinearStage& s, const uint8_t* packed,
                                    const uint16_t* bf16_scales, xnn_workspace_t workspace,
                                    pthreadpool_t pool) {
  xnn_subgraph_t raw = nullptr;
  xnn_status st = xnn_create_subgraph(2, 0, &raw);
  TL_CHECK_OR_RETURN(st == xnn_status_success, Error::kDelegateMemoryAllocationFailed,
                     "XNNPACK could not create a subgraph (status %d)", static_cast<int>(st));
  std::unique_ptr<xnn_subgraph, SubgraphDeleter> subgraph(raw);
  const size_t in_dims[2] = {1, static_cast<size_t>(s.k)};
  const size_t out_dims[2] = {1, static_cast<size_t>(s.n)};
  const size_t filter_dims[2] = {static_cast<size_t>(s.n), static_cast<size_t>(s.k)};
  const size_t bias_dims[1] = {static_cast<size_t>(s.n)};
  uint32_t x = 0, q = 0, w = 0, y = 0, b = XNN_INVALID_VALUE_ID;
  st = xnn_define_tensor_value(raw, xnn_datatype_fp32, 2, in_dims, nullptr, 0,
                               XNN_VALUE_FLAG_EXTERNAL_INPUT, &x);
  if (st == xnn_status_success) {
    st = xnn_define_dynamically_quantized_tensor_value(raw, xnn_datatype_qdint8, 2, 1, in_dims,
                                                       XNN_INVALID_VALUE_ID, 0, &q);
  }
  if (st == xnn_status_success) {
    st = xnn_define_blockwise_quantized_tensor_value(
        raw, xnn_datatype_qbint4, 8, bf16_scales, 2, 0, static_cast<size_t>(s.group), filter_dims,
        packed, XNN_INVALID_VALUE_ID, 0, &w);
  }
  if (st == xnn_status_success && s.bias != nullptr) {
    st = xnn_define_tensor_value(raw, xnn_datatype_fp32, 1, bias_dims, s.bias,
                                 XNN_INVALID_VALUE_ID, 0, &b);
  }
  if (st == xnn_status_success) {
    st = xnn_define_tensor_value(raw, xnn_datatype_fp32, 2, out_dims, nullptr, 1,
                                 XNN_VALUE_FLAG_EXTERNAL_OUTPUT, &y);
  }
  if (st == xnn_status_success) st = xnn_define_unary(raw, xnn_unary_convert, nullptr, x, q, 0);
  if (st == xnn_status_success) {
    st = xnn_define_fully_connected(raw, s.output_min, s.output_max, q, w, b, y, 0);
  }
  xnn_runtime_t runtime = nullptr;
  if (st == xnn_status_success) st = xnn_create_runtime_v4(raw, nullptr, workspace, pool, 0, &runtime);
  if (st == xnn_status_success) st = xnn_reshape_runtime(runtime);
  if (st != xnn_status_success) {
    if (runtime != nullptr) xnn_delete_runtime(runtime);
    return Status::error(Error::kInvalidProgram,
                         "XNNPACK node %u: XNNPACK refused its one-row fully-connected (status %d)",
                         s.node, static_cast<int>(st));
  }
  return runtime;
}

}  // namespace

bool linears_leave_xnnpack() {
  const char* choice = std::getenv("TORCHLIGHT_XNNPACK_QB4W");
  if (choice != nullptr && std::strcmp(choice, "linear_8da4w") == 0) return true;
  if (choice != nullptr && std::strcmp(choice, "xnnpack") == 0) return false;
#if defined(__x86_64__) || defined(_M_X64)
  return __builtin_cpu_supports("avx512vnni");
#else
  return false;
#endif
}

Result<LinearStage> make_linear_stage(const DefinitionContext& ctx, uint32_t node,
                                      xnn_workspace_t workspace, pthreadpool_t pool) {
  const fb_xnnpack::XNode* n = ctx.graph->xnodes()->Get(node);
  const auto* t = n->xnode_union_as_XNNFullyConnected();
  const auto* convert = ctx.graph->xnodes()->Get(ctx.producers[t->input1_id()]);
  const OutputRange range = output_range(n);
  LinearStage s;
  s.node = node;
  s.input = convert->xnode_union_as_XNNConvert()->input_id();
  s.output = t->output_id();
  const DeclaredShape& filter = ctx.shapes[t->filter_id()];
  s.n = static_cast<int64_t>(filter.dims[0]);
  s.k = static_cast<int64_t>(filter.dims[1]);
  const BlockwiseWeights& blockwise = ctx.blockwise[t->filter_id()];
  s.group = blockwise.group;
  s.output_min = range.min;
  s.output_max = range.max;
  s.bias = t->bias_id() == XNN_INVALID_VALUE_ID
               ? nullptr
               : static_cast<const float*>(ctx.constant_data[t->bias_id()]);

  // The payload packs element 2j in the low nibble, linear_8da4w in the
  // high one; both store value + 8.
  const size_t weight_bytes = static_cast<size_t>(s.n * s.k / 2);
  const size_t num_scales = static_cast<size_t>(s.n * (s.k / s.group));
  auto* weight = static_cast<uint8_t*>(ctx.allocator->allocate(weight_bytes, 64));
  auto* scales = ctx.allocator->allocate_array<float>(num_scales);
  TL_CHECK_OR_RETURN(weight != nullptr && scales != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory for XNNPACK node %u's 4-bit weights (%zu bytes)", node,
                     weight_bytes);
  const auto* packed = static_cast<const uint8_t*>(ctx.constant_data[t->filter_id()]);
  for (size_t i = 0; i < weight_bytes; ++i) {
    weight[i] = static_cast<uint8_t>((packed[i] >> 4) | (packed[i] << 4));
  }
  for (size_t i = 0; i < num_scales; ++i) scales[i] = widen_bf16(blockwise.bf16_scales[i]);
  s.weight = weight;
  s.scales = scales;

  // The kernel's prepare, for the declared rows: its weight sums and scratch.
  const DeclaredShape& in = ctx.shapes[s.input];
  size_t numel = 1;
  for (uint32_t d = 0; d < in.rank; ++d) numel *= in.dims[d];
  const int64_t rows = std::max<int64_t>(1, static_cast<int64_t>(numel) / s.k);
  KernelCall call(s, rows, nullptr, nullptr);
  PrepareContext prepare(ctx.allocator, kKernelName, (1u << 1) | (1u << 2));
  PreparedCall prepared;
  Status status = quantized::linear_8da4w_prepare(prepare, call.span(), &prepared);
  if (!status.ok()) return status.with_context("XNNPACK node %u", node);
  s.state = prepared.state;
  s.scratch_bytes = prepared.scratch_bytes;
  TL_ASSIGN_OR_RETURN(s.one_row, build_one_row(s, packed, blockwise.bf16_scales, workspace, pool));
  return s;
}

Status run_linear_stage(LinearStage& s, const float* x, size_t rows, float* y, void* scratch,
                        size_t scratch_bytes, bool* on_xnnpack) {
  *on_xnnpack = rows == 1 && s.one_row != nullptr;
  if (*on_xnnpack) {
    if (s.one_row_input != x || s.one_row_output != y) {
      const xnn_external_value bindings[2] = {{0, const_cast<float*>(x)}, {1, y}};
      const xnn_status st = xnn_setup_runtime_v2(s.one_row, 2, bindings);
      TL_CHECK_OR_RETURN(st == xnn_status_success, Error::kInternal,
                         "XNNPACK node %u: setup of the one-row fully-connected failed (status %d)",
                         s.node, static_cast<int>(st));
      s.one_row_input = x;
      s.one_row_output = y;
    }
    const xnn_status st = xnn_invoke_runtime(s.one_row);
    TL_CHECK_OR_RETURN(st == xnn_status_success, Error::kInternal,
                       "XNNPACK node %u: the one-row fully-connected failed (status %d)", s.node,
                       static_cast<int>(st));
    return Error::kOk;
  }
  KernelCall call(s, static_cast<int64_t>(rows), x, y);
  KernelContext kernel(nullptr, nullptr, kKernelName);
  kernel.set_call(kKernelName, s.state);
  kernel.set_scratch(scratch, scratch_bytes);
  quantized::linear_8da4w_out(kernel, call.span());
  if (kernel.failed()) {
    Status failed = kernel.status();
    return failed.with_context("XNNPACK node %u", s.node);
  }
  if (s.output_min > -INFINITY || s.output_max < INFINITY) {
    const size_t count = rows * static_cast<size_t>(s.n);
    for (size_t i = 0; i < count; ++i) y[i] = std::min(std::max(y[i], s.output_min), s.output_max);
  }
  return Error::kOk;
}

}  // namespace xnnpack
}  // namespace torchlight
