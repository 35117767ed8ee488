// depthwise_qs8 (depthwise_qs8.h) alone against XNNPACK's own qs8-qc8w
// depthwise operator on the same inputs, weights and quantization: every
// variant this CPU has must give the same bytes, on all of MobileNetV2's
// depthwise shapes and on odd widths, channel tails, strides 1 and 2,
// uneven padding, batch 2, clamped and saturating outputs, and rows
// computed in pieces (the delegate splits rows over threads).
// xnnpack_depthwise_test.cpp checks the same through the delegate.
#include <xnnpack.h>

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/depthwise_qs8.h"

namespace torchlight {
namespace xnnpack {
namespace {

struct Case {
  size_t batch, h, w, c, stride;
  size_t pad_top = 1, pad_right = 1, pad_bottom = 1, pad_left = 1;
  int8_t in_zp = -3, out_zp = 5, out_min = -128, out_max = 127;
  float out_scale = 0.2f;  // Small: many outputs saturate.
};

std::string name_of(const Case& k, DepthwiseQs8Isa isa) {
  return "variant " + std::to_string(int(isa)) + ": " + std::to_string(k.batch) + "x" +
         std::to_string(k.h) + "x" + std::to_string(k.w) + "x" + std::to_string(k.c) +
         " stride " + std::to_string(k.stride) + " pad " + std::to_string(k.pad_top) +
         std::to_string(k.pad_right) + std::to_string(k.pad_bottom) + std::to_string(k.pad_left);
}

uint32_t next(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

// Same bytes from XNNPACK's operator and from the kernel (every variant up
// to the CPU's best; the rows in one call and in three pieces).
void expect_same_bytes(const Case& k, uint32_t seed) {
  const size_t out_h = (k.h + k.pad_top + k.pad_bottom - 3) / k.stride + 1;
  const size_t out_w = (k.w + k.pad_left + k.pad_right - 3) / k.stride + 1;
  const size_t in_n = k.batch * k.h * k.w * k.c, out_n = k.batch * out_h * out_w * k.c;
  // XNNPACK may read a few entries past its arrays: each gets slack.
  std::vector<int8_t> x(in_n + 64), w(9 * k.c + 64), expected(out_n + 64), got(out_n + 64);
  std::vector<int32_t> bias(k.c + 64);
  std::vector<float> kernel_scale(k.c + 64), scale(k.c);
  uint32_t state = seed;
  for (int8_t& v : x) v = static_cast<int8_t>(next(&state));
  for (int8_t& v : w) v = static_cast<int8_t>(static_cast<int>(next(&state) % 255) - 127);
  const float in_scale = 0.05f;
  for (size_t c = 0; c < k.c; ++c) {
    bias[c] = static_cast<int32_t>(next(&state) % 40001) - 20000;
    kernel_scale[c] = 0.002f + 0.0001f * static_cast<float>(next(&state) % 97);
    scale[c] = in_scale * kernel_scale[c] / k.out_scale;  // XNNPACK's formula.
  }
  xnn_operator_t op = nullptr;
  ASSERT_EQ(xnn_create_convolution2d_nhwc_qs8_qc8w(
                k.pad_top, k.pad_right, k.pad_bottom, k.pad_left, 3, 3, k.stride, k.stride, 1, 1,
                k.c, 1, 1, k.c, k.c, k.in_zp, in_scale, kernel_scale.data(), w.data(),
                bias.data(), k.out_zp, k.out_scale, k.out_min, k.out_max,
                XNN_FLAG_DEPTHWISE_CONVOLUTION, nullptr, nullptr, &op),
            xnn_status_success);
  size_t ws_size = 0, ws_align = 0, xnn_h = 0, xnn_w = 0;
  ASSERT_EQ(xnn_reshape_convolution2d_nhwc_qs8_qc8w(op, k.batch, k.h, k.w, &ws_size, &ws_align,
                                                    &xnn_h, &xnn_w, nullptr),
            xnn_status_success);
  ASSERT_EQ(xnn_h, out_h);
  ASSERT_EQ(xnn_w, out_w);
  std::vector<char> ws(ws_size + 64);
  ASSERT_EQ(xnn_setup_convolution2d_nhwc_qs8_qc8w(op, ws.data(), x.data(), expected.data()),
            xnn_status_success);
  ASSERT_EQ(xnn_run_operator(op, nullptr), xnn_status_success);
  xnn_delete_operator(op);

  std::vector<uint8_t> memory(depthwise_qs8_packed_bytes(k.c) + 64);
  void* packed = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(memory.data()) + 63) &
                                         ~uintptr_t{63});
  pack_depthwise_qs8(w.data(), bias.data(), scale.data(), k.c, packed);
  DepthwiseQs8Shape s;
  s.batch = k.batch, s.in_h = k.h, s.in_w = k.w, s.channels = k.c;
  s.out_h = out_h, s.out_w = out_w, s.stride_h = s.stride_w = k.stride;
  s.pad_top = k.pad_top, s.pad_left = k.pad_left;
  const DepthwiseQs8Quant q{k.in_zp, k.out_zp, k.out_min, k.out_max};
  const DepthwiseQs8Isa best = depthwise_qs8_isa();
  const size_t rows = k.batch * out_h;
  for (DepthwiseQs8Isa isa :
       {DepthwiseQs8Isa::kAvx2, DepthwiseQs8Isa::kAvx512, DepthwiseQs8Isa::kVnni}) {
    if (isa > best) continue;
    SCOPED_TRACE(name_of(k, isa));
    depthwise_qs8_cap_isa(isa);
    for (size_t pieces : {size_t{1}, size_t{3}}) {
      std::fill(got.begin(), got.end(), int8_t{0x55});
      for (size_t p = 0; p < pieces; ++p) {
        depthwise_qs8_rows(s, q, packed, x.data(), got.data(), rows * p / pieces,
                           rows * (p + 1) / pieces);
      }
      size_t differ = 0, first = 0;
      for (size_t i = 0; i < out_n; ++i) {
        if (got[i] != expected[i] && differ++ == 0) first = i;
      }
      EXPECT_EQ(differ, 0u) << "in " << pieces << " pieces; first at " << first << ": "
                            << int(got[first]) << " vs XNNPACK's " << int(expected[first]);
      // Nothing past the output is written (the 16-channel tail stores).
      for (size_t i = out_n; i < got.size(); ++i) ASSERT_EQ(got[i], int8_t{0x55});
    }
  }
  depthwise_qs8_cap_isa(DepthwiseQs8Isa::kVnni);
}

class DepthwiseQs8Test : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(xnn_initialize(nullptr), xnn_status_success);
    if (!depthwise_qs8_supported()) GTEST_SKIP() << "no variant of the kernel runs here";
  }
};

TEST_F(DepthwiseQs8Test, MobileNetV2ShapesMatchXnnpack) {
  // torchvision mobilenet_v2's depthwise layers: channels, input size, stride.
  const size_t shapes[][3] = {{32, 112, 1}, {96, 112, 2}, {144, 56, 1}, {144, 56, 2},
                              {192, 28, 1}, {192, 28, 2}, {384, 14, 1}, {576, 14, 1},
                              {576, 14, 2}, {960, 7, 1}};
  uint32_t seed = 1;
  for (const auto& shape : shapes) {
    Case k{1, shape[1], shape[1], shape[0], shape[2]};
    k.in_zp = static_cast<int8_t>(seed * 37 % 256 - 128);
    k.out_zp = static_cast<int8_t>(seed * 91 % 256 - 128);
    k.out_min = static_cast<int8_t>(k.out_zp);  // ReLU6's lower bound, as MobileNetV2 has it.
    k.out_max = 120;
    expect_same_bytes(k, seed++);
  }
}

TEST_F(DepthwiseQs8Test, OddWidthsTailsStridesAndPaddingMatchXnnpack) {
  uint32_t seed = 100;
  for (size_t c : {1u, 5u, 15u, 16u, 17u, 24u, 37u, 40u, 48u, 72u}) {
    for (size_t stride : {1u, 2u}) {
      for (size_t w : {1u, 7u, 9u, 13u}) {
        Case k{1, 5 + seed % 4, w, c, stride};
        expect_same_bytes(k, seed++);
      }
    }
  }
  Case uneven{2, 8, 7, 40, 1, 0, 0, 2, 2};  // Batch 2, padding only bottom and left.
  uneven.out_min = -20, uneven.out_max = 30;
  expect_same_bytes(uneven, seed++);
  uneven.stride = 2, uneven.pad_top = 2, uneven.pad_right = 1, uneven.pad_bottom = 0;
  expect_same_bytes(uneven, seed++);
  Case none{1, 6, 6, 33, 2, 0, 0, 0, 0};  // No padding at all.
  none.in_zp = 127, none.out_zp = -128;
  expect_same_bytes(none, seed++);
}

}  // namespace
}  // namespace xnnpack
}  // namespace torchlight
