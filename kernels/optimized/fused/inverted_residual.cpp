// Instruction-set choice, shape checks and weight packing for the fused
// inverted-residual rows (inverted_residual.h); the rows themselves are in
// inverted_residual_kernel.inc, compiled once per set.
#include "kernels/optimized/fused/inverted_residual.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

#include "kernels/optimized/fused/inverted_residual_layout.h"
#include "kernels/optimized/gemm/gemm.h"
#include "kernels/optimized/gemm/gemm_amx_kernels.h"

namespace torchlight {
namespace optimized {

namespace internal {
namespace {

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// gemm's AMX table; gemm builds it only for x86-64.
const AmxGemmKernels* amx_table() {
#if defined(TL_FUSED_HAVE_X86_KERNELS)
  return amx_gemm_kernels();
#else
  return nullptr;
#endif
}

}  // namespace

InvertedResidualLayout::InvertedResidualLayout(const InvertedResidualShape& s,
                                             size_t vector_lanes) {
  lanes = vector_lanes;
  expanded_pad = round_up(s.expanded_channels, lanes);
  out_pad = round_up(s.out_channels, lanes);
  size_t at = 0;
  if (s.has_expand) {
    expand_filter = at;
    at += round_up(expanded_pad * s.in_channels, 16);
    expand_bias = at;
    at += round_up(expanded_pad, 16);
  }
  depthwise = at;
  at += round_up(expanded_pad * 10, 16);
  project_filter = at;
  at += round_up(out_pad * s.expanded_channels, 16);
  project_bias = at;
  at += round_up(out_pad, 16);
  packed_floats = at;

  ring_row = round_up((s.in_w + 2) * expanded_pad, 16);
  zero_row = 0;
  ring = ring_row;
  depthwise_row = ring + 3 * ring_row;
  scratch_floats = depthwise_row + round_up(s.out_w() * expanded_pad, 16);
}

InvertedResidualAmxLayout::InvertedResidualAmxLayout(const InvertedResidualShape& s)
    : base(s, 16) {
  const AmxGemmKernels* amx = amx_table();
  const size_t expand_bytes = amx != nullptr && s.has_expand
                                  ? amx->split_weight_bytes(s.expanded_channels, s.in_channels)
                                  : 0;
  const size_t project_bytes =
      amx != nullptr ? amx->split_weight_bytes(s.out_channels, s.expanded_channels) : 0;
  expand_split = round_up(base.packed_floats * sizeof(float), 64);
  project_split = expand_split + round_up(expand_bytes, 64);
  packed_floats = round_up(project_split + project_bytes, 64) / sizeof(float);
  expanded = base.ring;  // After kAvx512's zero row, which the depthwise reads too.
  depthwise = expanded + round_up(s.in_h * s.in_w * base.expanded_pad, 16);
  tiles = depthwise + round_up(s.out_h() * s.out_w() * base.expanded_pad, 16);
  tiles_bytes = amx != nullptr ? amx->scratch_bytes() : 0;
  scratch_floats =
      std::max(base.scratch_floats, tiles + round_up(tiles_bytes, 64) / sizeof(float));
}

}  // namespace internal

const char* to_string(InvertedResidualIsa isa) {
  switch (isa) {
    case InvertedResidualIsa::kGeneric: return "generic";
    case InvertedResidualIsa::kAvx2: return "avx2";
    case InvertedResidualIsa::kAvx512: return "avx512";
    case InvertedResidualIsa::kAmx: return "amx";
  }
  return "unknown";
}

bool inverted_residual_isa_supported(InvertedResidualIsa isa) {
  switch (isa) {
    case InvertedResidualIsa::kGeneric: return true;
#if defined(TL_FUSED_HAVE_X86_KERNELS)
    case InvertedResidualIsa::kAvx2:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case InvertedResidualIsa::kAvx512: return __builtin_cpu_supports("avx512f");
    case InvertedResidualIsa::kAmx:
      return internal::amx_table() != nullptr && active_gemm_isa() == GemmIsa::kAmx;
#endif
    default: return false;
  }
}

namespace {

InvertedResidualIsa isa_cap() {
  InvertedResidualIsa cap = InvertedResidualIsa::kAmx;
  if (const char* env = std::getenv("TORCHLIGHT_FUSED_ISA")) {
    for (InvertedResidualIsa isa : {InvertedResidualIsa::kGeneric, InvertedResidualIsa::kAvx2,
                                    InvertedResidualIsa::kAvx512}) {
      if (std::strcmp(env, to_string(isa)) == 0) cap = isa;
    }
  }
  return cap;
}

}  // namespace

bool inverted_residual_amx_allowed() {
  return isa_cap() == InvertedResidualIsa::kAmx &&
         inverted_residual_isa_supported(InvertedResidualIsa::kAmx);
}

InvertedResidualIsa inverted_residual_default_isa() {
  const InvertedResidualIsa cap = isa_cap();
  for (InvertedResidualIsa isa : {InvertedResidualIsa::kAvx512, InvertedResidualIsa::kAvx2}) {
    if (static_cast<int>(isa) <= static_cast<int>(cap) && inverted_residual_isa_supported(isa)) {
      return isa;
    }
  }
  return InvertedResidualIsa::kGeneric;
}

size_t internal::lanes_of(InvertedResidualIsa isa) {
  return isa == InvertedResidualIsa::kAvx512 || isa == InvertedResidualIsa::kAmx ? 16 : 8;
}

const char* inverted_residual_unsupported(const InvertedResidualShape& s) {
  if (s.batch == 0 || s.in_h == 0 || s.in_w == 0) return "an empty input";
  if (s.in_channels == 0 || s.expanded_channels == 0 || s.out_channels == 0) {
    return "a zero channel count";
  }
  if (s.stride != 1 && s.stride != 2) return "a stride other than 1 or 2";
  if (!s.has_expand && s.expanded_channels != s.in_channels) {
    return "no expand layer but expanded channels differ from the input's";
  }
  if (s.residual && (s.stride != 1 || s.in_channels != s.out_channels)) {
    return "a residual add needs stride 1 and as many output channels as input channels";
  }
  // Rows, pixels and channels are indexed in size_t products: keep every
  // tensor and the per-band scratch far below overflow (16 Gi floats).
  constexpr size_t kLimit = size_t{1} << 34;
  const size_t rows = s.batch * s.in_h;
  if (s.in_h > kLimit / s.batch || s.in_w > kLimit / rows ||
      s.in_channels > kLimit / (rows * s.in_w) || s.out_channels > kLimit / (rows * s.in_w) ||
      s.expanded_channels > kLimit / ((s.in_w + 2) * 4) ||
      s.expanded_channels > kLimit / (s.in_channels + s.out_channels + 10)) {
    return "a tensor too large";
  }
  return "";
}

size_t inverted_residual_packed_floats(const InvertedResidualShape& shape,
                                       InvertedResidualIsa isa) {
  if (isa == InvertedResidualIsa::kAmx) return internal::InvertedResidualAmxLayout(shape).packed_floats;
  return internal::InvertedResidualLayout(shape, internal::lanes_of(isa)).packed_floats;
}

size_t inverted_residual_scratch_floats(const InvertedResidualShape& shape,
                                        InvertedResidualIsa isa) {
  if (isa == InvertedResidualIsa::kAmx) return internal::InvertedResidualAmxLayout(shape).scratch_floats;
  return internal::InvertedResidualLayout(shape, internal::lanes_of(isa)).scratch_floats;
}

namespace {

// Blocks of `lanes` output channels, `k` terms each: block[q][lane] =
// filter[(block * lanes + lane) * k + q] (row-major [channels, k]); the
// bias after them when `bias_at` is given.
void pack_1x1(const float* filter, const float* bias, size_t channels, size_t padded, size_t k,
              size_t lanes, float* blocks, float* bias_at) {
  std::memset(blocks, 0, padded * k * sizeof(float));
  for (size_t c = 0; c < channels; ++c) {
    float* block = blocks + c / lanes * k * lanes + c % lanes;
    for (size_t q = 0; q < k; ++q) block[q * lanes] = filter[c * k + q];
  }
  std::memset(bias_at, 0, padded * sizeof(float));
  if (bias != nullptr) std::memcpy(bias_at, bias, channels * sizeof(float));
}

}  // namespace

bool pack_inverted_residual(const InvertedResidualShape& s, InvertedResidualIsa isa,
                            const float* expand_filter, const float* expand_bias,
                            const float* depthwise_filter, const float* depthwise_bias,
                            const float* project_filter, const float* project_bias,
                            float* packed) {
  const internal::InvertedResidualLayout lay(s, internal::lanes_of(isa));
  const size_t lanes = lay.lanes, ce = s.expanded_channels;
  std::memset(packed, 0, lay.packed_floats * sizeof(float));
  if (s.has_expand) {
    pack_1x1(expand_filter, expand_bias, ce, lay.expanded_pad, s.in_channels, lanes,
             packed + lay.expand_filter, packed + lay.expand_bias);
  }
  float* dw = packed + lay.depthwise;
  for (size_t c = 0; c < ce; ++c) {
    float* block = dw + c / lanes * 10 * lanes + c % lanes;
    for (size_t t = 0; t < 9; ++t) block[t * lanes] = depthwise_filter[t * ce + c];
    block[9 * lanes] = depthwise_bias != nullptr ? depthwise_bias[c] : 0.0f;
  }
  pack_1x1(project_filter, project_bias, s.out_channels, lay.out_pad, ce, lanes,
           packed + lay.project_filter, packed + lay.project_bias);
  if (isa != InvertedResidualIsa::kAmx) return true;
  const internal::AmxGemmKernels* amx = internal::amx_table();
  const internal::InvertedResidualAmxLayout split(s);
  auto* bytes = reinterpret_cast<char*>(packed);
  bool finite = amx != nullptr;
  if (finite && s.has_expand) {
    finite = amx->split_weight(expand_filter, static_cast<int64_t>(s.in_channels),
                               static_cast<int64_t>(ce), static_cast<int64_t>(s.in_channels),
                               bytes + split.expand_split);
  }
  return finite && amx->split_weight(project_filter, static_cast<int64_t>(ce),
                                     static_cast<int64_t>(s.out_channels),
                                     static_cast<int64_t>(ce), bytes + split.project_split);
}

void inverted_residual_rows(const InvertedResidualShape& shape, InvertedResidualIsa isa,
                            const float* packed, const float* in, float* out, size_t row_begin,
                            size_t row_end, float* scratch) {
  switch (isa) {
#if defined(TL_FUSED_HAVE_X86_KERNELS)
    case InvertedResidualIsa::kAvx512:
      internal::inverted_residual_rows_avx512(shape, packed, in, out, row_begin, row_end,
                                              scratch);
      return;
    case InvertedResidualIsa::kAvx2:
      internal::inverted_residual_rows_avx2(shape, packed, in, out, row_begin, row_end, scratch);
      return;
    case InvertedResidualIsa::kAmx:
      internal::inverted_residual_rows_amx(shape, packed, in, out, row_begin, row_end, scratch);
      return;
#endif
    default:
      internal::inverted_residual_rows_generic(shape, packed, in, out, row_begin, row_end,
                                               scratch);
  }
}

}  // namespace optimized
}  // namespace torchlight
