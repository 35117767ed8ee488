#include "backends/xnnpack/stage_plan.h"

#include <algorithm>
#include <memory>
#include <new>

#include "backends/xnnpack/depthwise_stage.h"
#include "backends/xnnpack/inverted_residual_stage.h"
#include "backends/xnnpack/value_view.h"
#include "kernels/optimized/conv/conv2d.h"
#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {
namespace {

constexpr uint32_t kNoStage = 0xFFFFFFFFu;
constexpr size_t kArenaAlignment = 64;

size_t align_up(size_t n) { return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool is_float_constant(const DefinitionContext& ctx, uint32_t id) {
  return id < ctx.num_values && ctx.datatypes[id] == xnn_datatype_fp32 &&
         ctx.kinds[id] == ValueKind::kConstant && ctx.constant_data[id] != nullptr;
}

bool is_float_value(const DefinitionContext& ctx, uint32_t id) {
  return id < ctx.num_values && ctx.datatypes[id] == xnn_datatype_fp32 &&
         ctx.kinds[id] != ValueKind::kConstant;
}

// The stage holding `node` (stages are contiguous node ranges, in order).
uint32_t stage_of(const StagePlan& plan, uint32_t node) {
  const Stage* begin = plan.stages;
  const Stage* end = plan.stages + plan.num_stages;
  const Stage* s = std::upper_bound(begin, end, node,
                                    [](uint32_t n, const Stage& st) { return n < st.end; });
  return s == end ? kNoStage : static_cast<uint32_t>(s - plan.stages);
}

struct Lifetime {
  uint32_t value;
  uint32_t first;  // Stage writing it.
  uint32_t last;   // Last stage reading it.
};

bool overlaps(const Lifetime& a, const Lifetime& b) { return a.first <= b.last && b.first <= a.last; }

// Greedy by size: the largest value first, each at the lowest offset free
// of every placed value whose lifetime meets its own.
size_t place_values(Lifetime* lives, uint32_t count, PlannedValue* values) {
  std::sort(lives, lives + count, [&](const Lifetime& a, const Lifetime& b) {
    return values[a.value].capacity > values[b.value].capacity;
  });
  size_t total = 0;
  for (uint32_t i = 0; i < count; ++i) {
    PlannedValue& v = values[lives[i].value];
    size_t offset = 0;
    for (bool moved = true; moved;) {
      moved = false;
      for (uint32_t j = 0; j < i; ++j) {
        const PlannedValue& placed = values[lives[j].value];
        if (!overlaps(lives[i], lives[j])) continue;
        if (offset < placed.offset + placed.capacity && placed.offset < offset + v.capacity) {
          offset = placed.offset + placed.capacity;
          moved = true;
        }
      }
    }
    v.offset = offset;
    total = std::max(total, offset + v.capacity);
  }
  return total;
}

}  // namespace

// Measured with bench/xnnpack/conv_floor.cpp (1 thread, CPU time; tables in
// bench/README.md), our im2col + GEMM against Debian's XNNPACK per layer:
//  - AVX2 (AMD EPYC): XNNPACK's GCC-built kernels reach 34-36 GFLOP/s, ours
//    50-70, except with fewer than 8 input channels (its direct first-layer
//    kernel: ResNet-18's stem took 1.18-1.28x its time on im2col) or
//    products shorter than 64 (MobileNetV2's 1x1 from 16 and 24 channels:
//    1.9-3.4x; from 96 and more: 0.7-1.0x).
//  - AVX-512 (Xeon, Emerald Rapids): XNNPACK's AVX-512 kernels reach
//    100-165 GFLOP/s and ours about 80 with hot caches, so XNNPACK wins
//    most layers (1.06-2.8x) there. Filters of 2 MiB (this CPU's L2) and
//    more are the exception: ResNet-18's layer4 3x3 layers (4.7 and 9.4 MB)
//    drop to 63 GFLOP/s on XNNPACK even hot (ours: 0.86-0.88x its time),
//    and inside the whole model (weights cold) its layer3 3x3 256->256
//    (2.4 MB) took 3.8 ms on XNNPACK against 2.0 on conv2d (torchlight
//    profile, 1 thread).
//  - AMX (the same Xeon, gemm's fp32-accurate AMX path, filters split at
//    init): 1.3-2.6x XNNPACK's speed on layers with 64 or more output
//    channels (ResNet-18's convolutions but the stem: 0.38-1.02x its
//    time); layers with 16-32 outputs tie or lose (0.84-1.26x). Inside
//    MobileNetV2 (torchlight profile, 1 thread, per-operator minima of 60
//    runs, session 16, loaded machine) its 1x1 layers from 64+ channels
//    took 0.45-0.95x XNNPACK's time, but those from 32 channels (28x28,
//    32->192: 1.1-2.2x) and the 2.4M-multiply-add 192->64 at 14x14 (1.3x)
//    lost: products of 64+ and 4M multiply-adds or more go. Session 15
//    had every layer of 32M or more only, as each conv2d stage then handed
//    the threads from XNNPACK's pool to ours and back (MobileNetV2 with
//    its small layers routed: 8.06 ms against 6.10 at 2 threads); conv2d
//    stages now run on XNNPACK's pthreadpool (threadpool::NativePoolScope).
ConvRouting conv_routing_for(optimized::GemmIsa isa) {
  ConvRouting r;
  r.min_input_channels = 8;
  r.min_patch = 64;
  r.min_filter_floats = isa == optimized::GemmIsa::kAvx512 ? uint64_t{1} << 19 : 0;  // 2 MiB
  // MobileNetV2 at 1 thread on Zen 1 (bench/README.md, session 20): its
  // 17 blocks fused 16.7 ms (minima), the 58 operators they replace 21 ms.
  r.row_kernel_beats_conv2d = isa == optimized::GemmIsa::kAvx2;
  if (isa == optimized::GemmIsa::kAmx) {
    r.min_output_channels = 64;
    r.min_macs = uint64_t{4} << 20;
  }
  return r;
}

bool conv2d_is_faster(const ConvRouting& routing, uint64_t input_channels,
                      uint64_t output_channels, uint64_t kernel_h, uint64_t kernel_w) {
  const uint64_t patch = input_channels * kernel_h * kernel_w;
  return input_channels >= routing.min_input_channels && patch >= routing.min_patch &&
         patch * output_channels >= routing.min_filter_floats &&
         output_channels >= routing.min_output_channels;
}

bool runs_on_conv2d(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                    const ConvRouting& routing) {
  if (node->xnode_union_type() != fb_xnnpack::XNodeUnion::XNNConv2d) return false;
  const auto* t = static_cast<const fb_xnnpack::_XNNNodeConv*>(node->xnode_union());
  if (t == nullptr || t->groups() != 1 || t->flags() != 0 ||
      t->padding_top() != t->padding_bottom() || t->padding_left() != t->padding_right()) {
    return false;
  }
  if (!is_float_value(ctx, t->input1_id()) || !is_float_value(ctx, t->output_id()) ||
      !is_float_constant(ctx, t->filter_id())) {
    return false;
  }
  if (t->bias_id() != XNN_INVALID_VALUE_ID && !is_float_constant(ctx, t->bias_id())) return false;
  if (!conv2d_is_faster(routing, t->group_input_channels(), t->group_output_channels(),
                        t->kernel_height(), t->kernel_width())) {
    return false;
  }
  const auto& out = ctx.shapes[t->output_id()];
  if (ctx.shapes[t->input1_id()].rank != 4 || out.rank != 4) return false;
  // In double: a hostile payload's product could wrap in 64 bits.
  const double macs = static_cast<double>(out.dims[0]) * out.dims[1] * out.dims[2] *
                      t->group_output_channels() * t->group_input_channels() *
                      t->kernel_height() * t->kernel_width();
  if (macs < static_cast<double>(routing.min_macs)) return false;
  // conv2d unfolds an image of the declared input (patch floats per output
  // pixel) into scratch it allocates at init: beyond the delegate's
  // activation budget it stays on XNNPACK, which needs no such buffer.
  const DeclaredShape& in = ctx.shapes[t->input1_id()];
  const double pixels =
      static_cast<double>(
          optimized::conv2d_output_size(in.dims[1], t->kernel_height(), t->subsampling_height(),
                                        t->padding_top(), t->dilation_height())) *
      optimized::conv2d_output_size(in.dims[2], t->kernel_width(), t->subsampling_width(),
                                    t->padding_left(), t->dilation_width());
  const double columns_bytes = pixels * t->group_input_channels() * t->kernel_height() *
                               t->kernel_width() * sizeof(float);
  return columns_bytes <= static_cast<double>(ctx.max_value_bytes);
}

bool runs_on_linear_8da4w(const DefinitionContext& ctx, const fb_xnnpack::XNode* node,
                          uint32_t* convert) {
  if (node->xnode_union_type() != fb_xnnpack::XNodeUnion::XNNFullyConnected) return false;
  const auto* t = node->xnode_union_as_XNNFullyConnected();
  if (t == nullptr || t->flags() != 0 || !is_float_value(ctx, t->output_id())) return false;
  const uint32_t in = t->input1_id();
  const uint32_t filter = t->filter_id();
  if (in >= ctx.num_values || filter >= ctx.num_values ||
      ctx.datatypes[in] != xnn_datatype_qdint8 || ctx.nonbatch_dims[in] != 1 ||
      ctx.producers[in] == kNoProducer) {
    return false;
  }
  const auto* writer = ctx.graph->xnodes()->Get(ctx.producers[in]);
  if (writer->xnode_union_type() != fb_xnnpack::XNodeUnion::XNNConvert ||
      writer->xnode_union_as_XNNConvert() == nullptr ||
      !is_float_value(ctx, writer->xnode_union_as_XNNConvert()->input_id())) {
    return false;
  }
  const BlockwiseWeights& w = ctx.blockwise[filter];
  if (ctx.datatypes[filter] != xnn_datatype_qbint4 || ctx.kinds[filter] != ValueKind::kConstant ||
      ctx.constant_data[filter] == nullptr || w.bf16_scales == nullptr || w.group % 2 != 0 ||
      ctx.shapes[filter].rank != 2 || ctx.shapes[filter].dims[0] == 0 ||
      ctx.shapes[filter].dims[1] == 0 || ctx.shapes[filter].dims[1] % w.group != 0 ||
      ctx.shapes[in].dims[ctx.shapes[in].rank - 1] != ctx.shapes[filter].dims[1]) {
    return false;
  }
  if (t->bias_id() != XNN_INVALID_VALUE_ID && !is_float_constant(ctx, t->bias_id())) return false;
  *convert = ctx.producers[in];
  return true;
}

uint32_t sole_reader(const ReadLog& reads, uint32_t value) {
  uint32_t reader = kNoNode;
  for (uint32_t i = 0; i < reads.size; ++i) {
    if (reads.entries[i].value != value) continue;
    if (reader != kNoNode && reader != reads.entries[i].node) return kNoNode;  // Two readers.
    reader = reads.entries[i].node;
  }
  return reader;
}

namespace {

// Each node's stage kind, and for a kLinear8da4w node the float value its
// convert reads (`sources`); for a kDepthwiseQs8 node the clamp folded into
// it, or kNoNode (`sources` too); for the first node of an inverted-residual
// block one past its last node, kNoNode for the block's other nodes (all
// kInvertedResidual). Converts whose every reader is such a linear (and
// whose output is not the caller's) become kSkip.
void classify_nodes(const DefinitionContext& ctx, const ReadLog& reads, StageChoice choice,
                    StageKind* kinds, uint32_t* sources) {
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t num_nodes = nodes->size();
  const ConvRouting routing = conv_routing_for(optimized::active_gemm_isa());
  std::fill(kinds, kinds + num_nodes, StageKind::kXnnpack);
  for (uint32_t n = 0; n < num_nodes; ++n) {
    if (kinds[n] != StageKind::kXnnpack) continue;  // A clamp folded already.
    uint32_t convert = 0;
    InvertedResidualMatch block;
    if (choice.blocks && match_inverted_residual(ctx, reads, n, routing, &block)) {
      std::fill(kinds + n, kinds + block.last + 1, StageKind::kInvertedResidual);
      std::fill(sources + n, sources + block.last + 1, kNoNode);
      sources[n] = block.last + 1;
      n = block.last;
    } else if (choice.conv2d && runs_on_conv2d(ctx, nodes->Get(n), routing)) {
      kinds[n] = StageKind::kConv2d;
    } else if (choice.depthwise && runs_on_depthwise_qs8(ctx, nodes->Get(n))) {
      kinds[n] = StageKind::kDepthwiseQs8;
      sources[n] = clamp_to_fold(ctx, reads, n);
      if (sources[n] != kNoNode) kinds[sources[n]] = StageKind::kFolded;
    } else if (choice.linears && runs_on_linear_8da4w(ctx, nodes->Get(n), &convert)) {
      kinds[n] = StageKind::kLinear8da4w;
      sources[n] = nodes->Get(convert)->xnode_union_as_XNNConvert()->input_id();
      // Provisionally: reads by anything else undo it below.
      const uint32_t qd8 = nodes->Get(convert)->xnode_union_as_XNNConvert()->output_id();
      if (ctx.kinds[qd8] == ValueKind::kInternal) kinds[convert] = StageKind::kSkip;
    }
  }
  for (uint32_t i = 0; i < reads.size; ++i) {
    const uint32_t writer = ctx.producers[reads.entries[i].value];
    if (writer != kNoProducer && kinds[writer] == StageKind::kSkip &&
        kinds[reads.entries[i].node] != StageKind::kLinear8da4w) {
      kinds[writer] = StageKind::kXnnpack;
    }
  }
}

}  // namespace

Result<StagePlan> plan_stages(const DefinitionContext& ctx, const ReadLog& reads,
                              uint32_t num_externs, StageChoice choice,
                              MemoryAllocator* allocator) {
  StagePlan plan;
  const auto* nodes = ctx.graph->xnodes();
  const uint32_t num_nodes = nodes == nullptr ? 0 : nodes->size();
  if (reads.overflow || num_nodes == 0) return plan;
  std::unique_ptr<StageKind[]> kinds(new (std::nothrow) StageKind[num_nodes]);
  std::unique_ptr<uint32_t[]> sources(new (std::nothrow) uint32_t[num_nodes]);
  TL_CHECK_OR_RETURN(kinds != nullptr && sources != nullptr, Error::kDelegateMemoryAllocationFailed,
                     "out of memory planning an XNNPACK delegate of %u nodes", num_nodes);
  classify_nodes(ctx, reads, choice, kinds.get(), sources.get());

  // Stages: each node that leaves XNNPACK alone, each fused block, the runs
  // between them.
  auto block_inner = [&](uint32_t n) {
    return kinds[n] == StageKind::kInvertedResidual && sources[n] == kNoNode;
  };
  uint32_t num_stages = 0;
  bool previous_own = true;
  for (uint32_t n = 0; n < num_nodes; ++n) {
    const bool own = kinds[n] != StageKind::kXnnpack;
    plan.num_convs += kinds[n] == StageKind::kConv2d;
    plan.num_linears += kinds[n] == StageKind::kLinear8da4w;
    plan.num_depthwise += kinds[n] == StageKind::kDepthwiseQs8;
    plan.num_blocks += kinds[n] == StageKind::kInvertedResidual && !block_inner(n);
    num_stages += !block_inner(n) && (own || previous_own);
    plan.num_xnn_stages += !own && previous_own;
    previous_own = own;
  }
  if (!plan.split()) return StagePlan{};
  plan.stages = allocator->allocate_array<Stage>(num_stages);
  plan.values = allocator->allocate_array<PlannedValue>(ctx.num_values);
  std::unique_ptr<uint32_t[]> last_reader(new (std::nothrow) uint32_t[ctx.num_values + 1]);
  std::unique_ptr<uint8_t[]> crosses(new (std::nothrow) uint8_t[ctx.num_values + 1]());
  std::unique_ptr<Lifetime[]> lives(new (std::nothrow) Lifetime[ctx.num_values + 1]);
  TL_CHECK_OR_RETURN(plan.stages != nullptr && plan.values != nullptr && last_reader != nullptr &&
                         crosses != nullptr && lives != nullptr,
                     Error::kDelegateMemoryAllocationFailed,
                     "out of memory splitting an XNNPACK delegate into %u stages", num_stages);
  previous_own = true;
  for (uint32_t n = 0; n < num_nodes; ++n) {
    const bool own = kinds[n] != StageKind::kXnnpack;
    if (!block_inner(n) && (own || previous_own)) {
      plan.stages[plan.num_stages++] = {
          n, n + 1, kinds[n], kinds[n] == StageKind::kDepthwiseQs8 ? sources[n] : kNoNode};
    }
    plan.stages[plan.num_stages - 1].end = n + 1;
    previous_own = own;
  }

  // A value crosses when a stage other than its writer's reads it.
  std::fill(last_reader.get(), last_reader.get() + ctx.num_values, kNoStage);
  for (uint32_t i = 0; i < reads.size; ++i) {
    const NodeRead& r = reads.entries[i];
    uint32_t value = r.value;
    // Runs nothing, reads nothing (a folded clamp's depthwise stage writes
    // its output).
    if (kinds[r.node] == StageKind::kSkip || kinds[r.node] == StageKind::kFolded) continue;
    // A linear reads its convert's float input, not the qdint8 value.
    if (kinds[r.node] == StageKind::kLinear8da4w && ctx.datatypes[value] == xnn_datatype_qdint8) {
      value = sources[r.node];
    }
    const uint32_t reader = stage_of(plan, r.node);
    uint32_t& last = last_reader[value];
    last = last == kNoStage ? reader : std::max(last, reader);
    const uint32_t producer = ctx.producers[value];
    if (producer != kNoProducer && stage_of(plan, producer) != reader) crosses[value] = 1;
  }
  uint32_t num_lives = 0;
  uint32_t next_external = num_externs;
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    PlannedValue& planned = plan.values[v];
    if (ctx.kinds[v] == ValueKind::kExternalInput || ctx.kinds[v] == ValueKind::kExternalOutput) {
      planned.home = ValueHome::kArgument;
      planned.external_id = ctx.payload_external_ids[v];
      continue;
    }
    if (ctx.kinds[v] != ValueKind::kInternal || crosses[v] == 0) continue;
    // Only float32 and qint8 values are meant to cross; anything else keeps
    // the one runtime.
    if (ctx.datatypes[v] != xnn_datatype_fp32 && ctx.datatypes[v] != xnn_datatype_qint8) {
      return StagePlan{};
    }
    uint64_t numel = 1;
    for (uint32_t d = 0; d < ctx.shapes[v].rank; ++d) numel *= ctx.shapes[v].dims[d];
    planned.home = ValueHome::kArena;
    planned.external_id = next_external++;
    planned.element_bytes = ctx.datatypes[v] == xnn_datatype_fp32 ? 4 : 1;
    // XNNPACK may read (never write) up to XNN_EXTRA_BYTES past an input.
    planned.capacity =
        align_up(static_cast<size_t>(numel) * planned.element_bytes + XNN_EXTRA_BYTES);
    // A folded clamp's output is written by the depthwise stage before it.
    uint32_t writer = ctx.producers[v];
    if (kinds[writer] == StageKind::kFolded) {
      writer = ctx.producers[nodes->Get(writer)->xnode_union_as_XNNClamp()->input_id()];
    }
    lives[num_lives++] = {v, stage_of(plan, writer), last_reader[v]};
  }
  plan.num_external_ids = next_external;
  plan.arena_bytes = place_values(lives.get(), num_lives, plan.values);
  return plan;
}

void stage_value_flags(const DefinitionContext& ctx, const ReadLog& reads, const StagePlan& plan,
                       uint32_t stage, uint32_t* flags, uint32_t* external_ids) {
  std::fill(flags, flags + ctx.num_values, kNotInStage);
  const Stage& s = plan.stages[stage];
  auto mark = [&](uint32_t v, bool written) {
    const PlannedValue& planned = plan.values[v];
    external_ids[v] = planned.external_id;
    if (planned.home == ValueHome::kInside) {
      flags[v] = 0;
    } else if (written) {
      flags[v] = kExternalOutput;
    } else if (flags[v] == kNotInStage) {
      flags[v] = kExternalInput;
    }
  };
  for (uint32_t i = 0; i < reads.size; ++i) {
    const NodeRead& r = reads.entries[i];
    if (r.node >= s.begin && r.node < s.end) mark(r.value, false);
  }
  for (uint32_t v = 0; v < ctx.num_values; ++v) {
    const uint32_t writer = ctx.producers[v];
    if (writer != kNoProducer && writer >= s.begin && writer < s.end) mark(v, true);
  }
}

}  // namespace xnnpack
}  // namespace torchlight
