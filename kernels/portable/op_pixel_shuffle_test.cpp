// aten::pixel_shuffle.out / aten::pixel_unshuffle.out: the element mapping,
// the round trip, and errors naming the argument.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

TEST(OpPixelShuffleTest, ChannelsBecomeBlocksAndBack) {
  // [1, 4, 1, 1] -> [1, 1, 2, 2]: channel (i * 2 + j) lands at (i, j).
  TestTensor self(kF32, {1, 4, 1, 1}, {1, 2, 3, 4});
  TestTensor out(kF32, {1, 1, 2, 2});
  KernelArgs args{self.evalue(), EValue(int64_t{2}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&pixel_shuffle_out, "aten::pixel_shuffle.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2, 3, 4));

  TestTensor wide(kF32, {1, 4, 1, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  TestTensor shuffled(kF32, {1, 1, 2, 4});
  KernelArgs args2{wide.evalue(), EValue(int64_t{2}), shuffled.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&pixel_shuffle_out, "aten::pixel_shuffle.out", args2).ok());
  EXPECT_THAT(shuffled.values(), ElementsAre(1, 3, 2, 4, 5, 7, 6, 8));

  TestTensor back(kF32, {1, 4, 1, 2});
  KernelArgs args3{shuffled.evalue(), EValue(int64_t{2}), back.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&pixel_unshuffle_out, "aten::pixel_unshuffle.out", args3).ok());
  EXPECT_EQ(back.values(), wide.values());
}

TEST(OpPixelShuffleTest, Errors) {
  TestTensor self(kF32, {1, 6, 2, 2});
  TestTensor out(kF32, {1, 1, 4, 4});
  KernelArgs args{self.evalue(), EValue(int64_t{2}), out.evalue(), EValue()};
  Status s = run_kernel(&pixel_shuffle_out, "aten::pixel_shuffle.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::pixel_shuffle.out: argument 'self' has shape "
                         "[1, 6, 2, 2], whose channels (dimension -3) are not "
                         "divisible by upscale_factor^2 = 4"));
  KernelArgs args2{self.evalue(), EValue(int64_t{0}), out.evalue(), EValue()};
  s = run_kernel(&pixel_unshuffle_out, "aten::pixel_unshuffle.out", args2);
  EXPECT_THAT(s.message(), HasSubstr("argument 'downscale_factor' is 0"));
}

}  // namespace
}  // namespace torchlight::portable
