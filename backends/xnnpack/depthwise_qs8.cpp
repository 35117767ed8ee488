#include "backends/xnnpack/depthwise_qs8.h"
#include "backends/xnnpack/depthwise_qs8_layout.h"

#include <cstring>

namespace torchlight {
namespace xnnpack {

#if defined(TORCHLIGHT_XNNPACK_DEPTHWISE_QS8)
// One per instruction-set variant, each built with its own flags.
void depthwise_qs8_rows_avx2(const DepthwiseQs8Shape&, const DepthwiseQs8Quant&, const void*,
                             const int8_t*, int8_t*, size_t, size_t);
void depthwise_qs8_rows_avx512(const DepthwiseQs8Shape&, const DepthwiseQs8Quant&, const void*,
                               const int8_t*, int8_t*, size_t, size_t);
void depthwise_qs8_rows_vnni(const DepthwiseQs8Shape&, const DepthwiseQs8Quant&, const void*,
                             const int8_t*, int8_t*, size_t, size_t);
#endif

namespace {

constexpr size_t kBlock = kDepthwiseQs8Block;
constexpr size_t kWeightBytes = kDepthwiseQs8WeightBytes;
constexpr size_t kBlockBytes = kDepthwiseQs8BlockBytes;

// The channel (within its block) of int32 lane j of half `half`: the order
// unpacklo/hi_epi16 leave two taps' inputs in (4 channels per 128-bit lane;
// the AVX2 variant reads lanes 0-7 and 8-15 as two 256-bit halves).
size_t lane_channel(size_t half, size_t j) { return (j / 4) * 8 + half * 4 + j % 4; }

DepthwiseQs8Isa isa_cap = DepthwiseQs8Isa::kVnni;

DepthwiseQs8Isa cpu_isa() {
#if defined(TORCHLIGHT_XNNPACK_DEPTHWISE_QS8)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl")) {
    return __builtin_cpu_supports("avx512vnni") ? DepthwiseQs8Isa::kVnni
                                                : DepthwiseQs8Isa::kAvx512;
  }
  if (__builtin_cpu_supports("avx2")) return DepthwiseQs8Isa::kAvx2;
#endif
  return DepthwiseQs8Isa::kNone;
}

}  // namespace

DepthwiseQs8Isa depthwise_qs8_isa() {
  static const DepthwiseQs8Isa cpu = cpu_isa();
  return cpu < isa_cap ? cpu : isa_cap;
}

bool depthwise_qs8_supported() { return depthwise_qs8_isa() != DepthwiseQs8Isa::kNone; }

void depthwise_qs8_cap_isa(DepthwiseQs8Isa cap) { isa_cap = cap; }

size_t depthwise_qs8_packed_bytes(size_t channels) {
  return (channels + kBlock - 1) / kBlock * kBlockBytes;
}

void pack_depthwise_qs8(const int8_t* filter, const int32_t* bias, const float* scales,
                        size_t channels, void* packed) {
  auto* bytes = static_cast<uint8_t*>(packed);
  std::memset(bytes, 0, depthwise_qs8_packed_bytes(channels));
  for (size_t block = 0; block * kBlock < channels; ++block) {
    uint8_t* b = bytes + block * kBlockBytes;
    auto* weights = reinterpret_cast<int16_t*>(b);
    auto* biases = reinterpret_cast<int32_t*>(b + kWeightBytes);
    auto* block_scales = reinterpret_cast<float*>(b + kWeightBytes + kBlock * sizeof(int32_t));
    for (size_t half = 0; half < 2; ++half) {
      for (size_t j = 0; j < 16; ++j) {
        const size_t c = block * kBlock + lane_channel(half, j);
        if (c >= channels) continue;  // Zeros past the last channel.
        for (size_t pair = 0; pair < 5; ++pair) {
          int16_t* dst = weights + (pair * 2 + half) * kBlock + 2 * j;
          dst[0] = filter[(2 * pair) * channels + c];
          dst[1] = 2 * pair + 1 < 9 ? filter[(2 * pair + 1) * channels + c] : 0;
        }
        biases[half * 16 + j] = bias == nullptr ? 0 : bias[c];
        block_scales[half * 16 + j] = scales[c];
      }
    }
  }
}

void depthwise_qs8_rows(const DepthwiseQs8Shape& shape, const DepthwiseQs8Quant& quant,
                        const void* packed, const int8_t* in, int8_t* out, size_t row_begin,
                        size_t row_end) {
#if defined(TORCHLIGHT_XNNPACK_DEPTHWISE_QS8)
  switch (depthwise_qs8_isa()) {
    case DepthwiseQs8Isa::kVnni:
      depthwise_qs8_rows_vnni(shape, quant, packed, in, out, row_begin, row_end);
      break;
    case DepthwiseQs8Isa::kAvx512:
      depthwise_qs8_rows_avx512(shape, quant, packed, in, out, row_begin, row_end);
      break;
    case DepthwiseQs8Isa::kAvx2:
      depthwise_qs8_rows_avx2(shape, quant, packed, in, out, row_begin, row_end);
      break;
    case DepthwiseQs8Isa::kNone:
      break;
  }
#else
  (void)shape, (void)quant, (void)packed, (void)in, (void)out, (void)row_begin, (void)row_end;
#endif
}

}  // namespace xnnpack
}  // namespace torchlight
