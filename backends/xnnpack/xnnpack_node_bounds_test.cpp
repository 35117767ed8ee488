// node_bounds.h: init refuses nodes whose output, as XNNPACK computes it,
// outgrows the declared output value, and payloads whose indirection
// buffers or multiply-adds exceed the backend's budgets.
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"
#include "backends/xnnpack/xnnpack_backend.h"
#include "kernels/optimized/gemm/gemm.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using ::testing::HasSubstr;

Status init_status(const std::vector<uint8_t>& payload,
                   const XnnpackBackend& backend = xnnpack_backend()) {
  LoadedDelegate d(payload, backend);
  return d.status();
}

// [1, size, size, 8] -> conv k x k (stride 1, `pad` all round), 8 -> 8
// channels -> an output declared [1, out, out, 8].
std::vector<uint8_t> conv_payload(uint32_t size, uint32_t k, uint32_t pad, uint32_t out) {
  PayloadBuilder b;
  const uint32_t x = b.input({1, size, size, 8}, 0);
  const uint32_t y = b.output({1, out, out, 8}, 1);
  add_conv(b, {8, 8, k, 1, pad}, x, y, 7);
  return b.build();
}

TEST(XnnpackNodeBoundsTest, ConvolutionPaddedBeyondItsDeclaredOutputIsRefused) {
  // 8x8 padded by 1: an 8x8 output, as declared.
  EXPECT_TRUE(init_status(conv_payload(8, 3, 1, 8)).ok());
  // Padded by 100: XNNPACK would compute (and allocate for) 206x206 pixels
  // while the payload declares 8x8.
  const Status s = init_status(conv_payload(8, 3, 100, 8));
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node 0 (XNNConv2d): XNNPACK gives its output value 1 "
                                     "the shape [1,206,206,8] at the declared input shapes, but "
                                     "the value declares [1,8,8,8]"));
}

std::vector<uint8_t> add_payload(std::vector<uint32_t> out_dims) {
  PayloadBuilder b;
  const uint32_t a = b.input({64, 1}, 0), c = b.input({1, 64}, 1);
  add_binary(b, fb::XNodeUnion::XNNAdd, a, c, b.output(std::move(out_dims), 2));
  return b.build();
}

TEST(XnnpackNodeBoundsTest, BroadcastBeyondItsDeclaredOutputIsRefused) {
  EXPECT_TRUE(init_status(add_payload({64, 64})).ok());
  const Status s = init_status(add_payload({64, 1}));
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node 0 (XNNAdd): XNNPACK gives its output value 2 "
                                     "the shape [64,64] at the declared input shapes, but the "
                                     "value declares [64,1]"));
}

std::vector<uint8_t> linear_payload(uint32_t out_rows) {
  PayloadBuilder b;
  const uint32_t x = b.input({16, 4}, 0);
  const uint32_t w = b.constant_f32({3, 4}, random_values(12, 1));
  const uint32_t y = b.output({out_rows, 3}, 1);
  auto* fc = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  fc->input1_id = x, fc->filter_id = w, fc->bias_id = kNone, fc->output_id = y;
  return b.build();
}

TEST(XnnpackNodeBoundsTest, FullyConnectedBeyondItsDeclaredOutputIsRefused) {
  EXPECT_TRUE(init_status(linear_payload(16)).ok());
  const Status s = init_status(linear_payload(2));
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node 0 (XNNFullyConnected): XNNPACK gives its "
                                     "output value 2 the shape [16,3] at the declared input "
                                     "shapes, but the value declares [2,3]"));
}

TEST(XnnpackNodeBoundsTest, IndirectionBuffersCountAgainstTheValueBudget) {
  // 1 MiB of values: the 64x64x8 input and output take 256 KiB. A 3x3
  // window keeps 9 pointers per output pixel (288 KiB), a 9x9 one 81
  // (2.5 MiB), which XNNPACK would allocate beside the workspace.
  const XnnpackBackend backend(uint64_t{1} << 20);
  EXPECT_TRUE(init_status(conv_payload(64, 3, 1, 64), backend).ok());
  const Status s = init_status(conv_payload(64, 9, 4, 64), backend);
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK nodes 0..0 need 2654208 bytes of indirection and "
                                     "attention buffers at the inferred shapes; the limit is "
                                     "1048576"));
}

TEST(XnnpackNodeBoundsTest, MultiplyAddsBeyondTheBudgetAreRefused) {
  // 3x3 x 8 -> 8 channels: 576 multiply-adds per output pixel.
  const XnnpackBackend backend(kXnnpackDefaultMaxValueBytes, 100000);
  EXPECT_TRUE(init_status(conv_payload(8, 3, 1, 8), backend).ok());  // 36,864
  const Status s = init_status(conv_payload(16, 3, 1, 16), backend);  // 147,456
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK nodes 0..0 do 1.475e+05 multiply-adds per execute "
                                     "at the inferred shapes; the limit is 1e+05"));
}

TEST(XnnpackNodeBoundsTest, WinogradScratchBeyondTheValueBudgetFallsBackToIm2col) {
  // 3x3, 128 -> 256 channels at 16x16 on the AVX2 routing (conv2d, Winograd
  // preferred): Winograd's scratch (16 points x 64 tiles x 384 channels,
  // 1.57 MB) exceeds a 1.3 MB budget that the unfolding (256 pixels x 1152,
  // 1.18 MB) and the values (393 KB) fit.
  if (!optimized::set_gemm_isa(optimized::GemmIsa::kAvx2).ok()) GTEST_SKIP() << "no AVX2";
  PayloadBuilder b;
  const uint32_t x = b.input({1, 16, 16, 128}, 0), y = b.output({1, 16, 16, 256}, 1);
  add_conv(b, {128, 256, 3, 1, 1}, x, y, 40);
  const std::vector<uint8_t> payload = b.build();
  OwnedTensor in = float_tensor({1, 16, 16, 128}, random_values(16 * 16 * 128, 41));
  auto events_with_budget = [&](uint64_t max_value_bytes) {
    const XnnpackBackend backend(max_value_bytes);
    DelegateEventNames events;
    LoadedDelegate d(payload, backend, &events);
    EXPECT_TRUE(d.status().ok()) << d.status().message();
    OwnedTensor out = float_tensor({1, 16, 16, 256}, std::vector<float>(16 * 16 * 256));
    EXPECT_TRUE(d.execute({in.evalue(), out.evalue()}).ok());
    return events;
  };
  const DelegateEventNames roomy = events_with_budget(kXnnpackDefaultMaxValueBytes);
  EXPECT_EQ(roomy.count_containing("conv2d Winograd"), 1u) << ::testing::PrintToString(roomy.names);
  const DelegateEventNames tight = events_with_budget(1300000);
  EXPECT_EQ(tight.count_containing("conv2d Winograd"), 0u) << ::testing::PrintToString(tight.names);
  EXPECT_EQ(tight.count_containing("conv2d"), 1u) << ::testing::PrintToString(tight.names);
  optimized::reset_gemm_isa();
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
