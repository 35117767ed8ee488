// The packed weights of depthwise_qs8.h, shared by its packing
// (depthwise_qs8.cpp) and every kernel variant, which all read one layout:
// per block of 32 channels, 5 tap pairs x 2 halves of 32 int16 (a pair's
// two weights side by side, in the order unpacklo/hi_epi16 leave the two
// taps' inputs), then 32 int32 biases and 32 float scales (in the same
// lane order); zeros past the last channel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight {
namespace xnnpack {

inline constexpr size_t kDepthwiseQs8Block = 32;  // Channels per block.
inline constexpr size_t kDepthwiseQs8WeightBytes = 10 * kDepthwiseQs8Block * sizeof(int16_t);
inline constexpr size_t kDepthwiseQs8BlockBytes =
    kDepthwiseQs8WeightBytes + kDepthwiseQs8Block * (sizeof(int32_t) + sizeof(float));

}  // namespace xnnpack
}  // namespace torchlight
