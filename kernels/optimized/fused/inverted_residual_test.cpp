// The fused inverted-residual rows against a float64 reference computed
// layer by layer (expand + clamp, padded 3x3 depthwise + clamp, projection +
// clamp, residual + clamp), on every instruction set this CPU runs: odd
// heights and widths, strides 1 and 2, channel counts that are not
// multiples of a vector (5, 24, 40, 144), no expand layer, batch 2, and the
// rows split into bands as callers split them.
#include "kernels/optimized/fused/inverted_residual.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace torchlight {
namespace optimized {
namespace {

std::vector<float> values(size_t n, uint32_t seed, float scale) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / 8388608.0f - 1.0f);
  }
  return v;
}

struct Weights {
  std::vector<float> we, be, wd, bd, wp, bp;
};

Weights weights_for(const InvertedResidualShape& s, uint32_t seed) {
  const size_t ci = s.in_channels, ce = s.expanded_channels, co = s.out_channels;
  return {values(ce * ci, seed, 0.5f),     values(ce, seed + 1, 0.3f),
          values(9 * ce, seed + 2, 0.5f),  values(ce, seed + 3, 0.3f),
          values(co * ce, seed + 4, 0.3f), values(co, seed + 5, 0.3f)};
}

double clamp(double v, float lo, float hi) { return std::min<double>(std::max<double>(v, lo), hi); }

std::vector<double> reference(const InvertedResidualShape& s, const Weights& w,
                              const std::vector<float>& x) {
  const size_t n = s.batch, h = s.in_h, wd = s.in_w, ci = s.in_channels,
               ce = s.expanded_channels, co = s.out_channels, oh = s.out_h(), ow = s.out_w();
  std::vector<double> e(n * h * wd * ce);
  for (size_t p = 0; p < n * h * wd; ++p) {
    for (size_t c = 0; c < ce; ++c) {
      if (!s.has_expand) {
        e[p * ce + c] = x[p * ci + c];
        continue;
      }
      double acc = w.be[c];
      for (size_t k = 0; k < ci; ++k) acc += double(x[p * ci + k]) * w.we[c * ci + k];
      e[p * ce + c] = clamp(acc, s.expand_min, s.expand_max);
    }
  }
  std::vector<double> d(n * oh * ow * ce);
  for (size_t b = 0; b < n; ++b) {
    for (size_t oy = 0; oy < oh; ++oy) {
      for (size_t ox = 0; ox < ow; ++ox) {
        for (size_t c = 0; c < ce; ++c) {
          double acc = w.bd[c];
          for (size_t ky = 0; ky < 3; ++ky) {
            for (size_t kx = 0; kx < 3; ++kx) {
              const ptrdiff_t iy = ptrdiff_t(oy * s.stride + ky) - 1;
              const ptrdiff_t ix = ptrdiff_t(ox * s.stride + kx) - 1;
              if (iy < 0 || ix < 0 || iy >= ptrdiff_t(h) || ix >= ptrdiff_t(wd)) continue;
              acc += e[((b * h + iy) * wd + ix) * ce + c] * w.wd[(ky * 3 + kx) * ce + c];
            }
          }
          d[((b * oh + oy) * ow + ox) * ce + c] = clamp(acc, s.depthwise_min, s.depthwise_max);
        }
      }
    }
  }
  std::vector<double> out(n * oh * ow * co);
  for (size_t p = 0; p < n * oh * ow; ++p) {
    for (size_t c = 0; c < co; ++c) {
      double acc = w.bp[c];
      for (size_t k = 0; k < ce; ++k) acc += d[p * ce + k] * w.wp[c * ce + k];
      acc = clamp(acc, s.project_min, s.project_max);
      if (s.residual) acc = clamp(acc + x[p * ci + c], s.add_min, s.add_max);
      out[p * co + c] = acc;
    }
  }
  return out;
}

struct AlignedFloats {
  explicit AlignedFloats(size_t n)
      : data(static_cast<float*>(std::aligned_alloc(64, (n * 4 + 64) / 64 * 64))) {}
  ~AlignedFloats() { std::free(data); }
  float* data;
};

// Runs `s` on `isa` with the rows cut into `bands` (each its own scratch)
// and checks every output within 1e-5 of the reference's largest magnitude.
void check(const InvertedResidualShape& s, InvertedResidualIsa isa, size_t bands, uint32_t seed) {
  ASSERT_STREQ(inverted_residual_unsupported(s), "");
  const Weights w = weights_for(s, seed);
  const std::vector<float> x = values(s.batch * s.in_h * s.in_w * s.in_channels, seed + 9, 2.0f);
  const std::vector<double> want = reference(s, w, x);
  AlignedFloats packed(inverted_residual_packed_floats(s, isa));
  pack_inverted_residual(s, isa, s.has_expand ? w.we.data() : nullptr, w.be.data(), w.wd.data(),
                         w.bd.data(), w.wp.data(), w.bp.data(), packed.data);
  const size_t band_floats = inverted_residual_scratch_floats(s, isa);
  AlignedFloats scratch(band_floats * bands);
  // Garbage in the scratch: the kernel must not rely on it being zero.
  std::fill(scratch.data, scratch.data + band_floats * bands, NAN);
  std::vector<float> got(want.size() + 1, -7.0f);
  const size_t rows = s.batch * s.out_h();
  for (size_t b = 0; b < bands; ++b) {
    inverted_residual_rows(s, isa, packed.data, x.data(), got.data(), rows * b / bands,
                           rows * (b + 1) / bands, scratch.data + b * band_floats);
  }
  double scale = 0;
  for (double v : want) scale = std::max(scale, std::fabs(v));
  ASSERT_GT(scale, 0.0);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-5 * scale) << "element " << i << " of " << want.size();
  }
  EXPECT_EQ(got[want.size()], -7.0f) << "wrote past the output";
}

InvertedResidualShape block(size_t n, size_t h, size_t w, size_t ci, size_t ce, size_t co,
                            size_t stride, bool residual) {
  InvertedResidualShape s;
  s.batch = n, s.in_h = h, s.in_w = w;
  s.in_channels = ci, s.expanded_channels = ce, s.out_channels = co;
  s.stride = stride, s.residual = residual;
  s.expand_min = s.depthwise_min = 0.0f;
  s.expand_max = s.depthwise_max = 6.0f;
  return s;
}

class InvertedResidualTest : public ::testing::TestWithParam<InvertedResidualIsa> {
 protected:
  void SetUp() override {
    if (!inverted_residual_isa_supported(GetParam())) GTEST_SKIP() << "not on this CPU";
  }
};

TEST_P(InvertedResidualTest, StrideOneWithResidualOddSizes) {
  check(block(1, 9, 7, 24, 144, 24, 1, true), GetParam(), 1, 1);
  check(block(2, 5, 11, 40, 40, 40, 1, true), GetParam(), 3, 2);
}

TEST_P(InvertedResidualTest, StrideTwoOddAndEvenSizes) {
  check(block(1, 11, 13, 5, 40, 24, 2, false), GetParam(), 1, 3);
  check(block(2, 12, 10, 16, 96, 24, 2, false), GetParam(), 2, 4);
  check(block(1, 1, 1, 8, 24, 5, 2, false), GetParam(), 1, 5);
}

TEST_P(InvertedResidualTest, ChannelTailsAndWideBlocks) {
  check(block(1, 6, 6, 5, 5, 5, 1, true), GetParam(), 2, 6);
  check(block(1, 4, 9, 32, 200, 72, 1, false), GetParam(), 1, 7);  // 200 = 12.5 vectors of 16
}

TEST_P(InvertedResidualTest, NoExpandLayer) {
  InvertedResidualShape s = block(2, 7, 9, 40, 40, 16, 1, false);
  s.has_expand = false;
  check(s, GetParam(), 2, 8);
  s.stride = 2;
  check(s, GetParam(), 1, 9);
}

TEST_P(InvertedResidualTest, OutputRangesOfProjectionAndAdd) {
  InvertedResidualShape s = block(1, 8, 8, 24, 48, 24, 1, true);
  s.expand_min = -0.5f, s.expand_max = 1.0f;
  s.depthwise_min = -1.0f, s.depthwise_max = 0.75f;
  s.project_min = -0.6f, s.project_max = 0.8f;
  s.add_min = -1.0f, s.add_max = 0.9f;
  check(s, GetParam(), 2, 10);
}

TEST_P(InvertedResidualTest, MobileNetV2LaterBlocks) {
  // The kAmx blocks' shapes: 64+ channels at 14x14 and 7x7, bands of rows
  // as two threads cut them (a band's segment crossing images at batch 2).
  check(block(1, 14, 14, 64, 384, 64, 1, true), GetParam(), 2, 21);
  check(block(2, 14, 14, 96, 576, 160, 2, false), GetParam(), 3, 22);
  check(block(1, 7, 7, 160, 960, 320, 1, false), GetParam(), 2, 23);
}

TEST_P(InvertedResidualTest, BandsGiveOneBandsResult) {
  // Every band starts its ring afresh: a row computed in 1 or 8 bands is
  // the same arithmetic, so the same bits.
  const InvertedResidualShape s = block(2, 9, 6, 16, 64, 16, 1, true);
  const InvertedResidualIsa isa = GetParam();
  const Weights w = weights_for(s, 11);
  const std::vector<float> x = values(s.batch * s.in_h * s.in_w * s.in_channels, 12, 2.0f);
  AlignedFloats packed(inverted_residual_packed_floats(s, isa));
  pack_inverted_residual(s, isa, w.we.data(), w.be.data(), w.wd.data(), w.bd.data(), w.wp.data(),
                         w.bp.data(), packed.data);
  const size_t band_floats = inverted_residual_scratch_floats(s, isa);
  AlignedFloats scratch(band_floats);
  const size_t rows = s.batch * s.out_h();
  std::vector<float> one(rows * s.out_w() * s.out_channels), many(one.size());
  inverted_residual_rows(s, isa, packed.data, x.data(), one.data(), 0, rows, scratch.data);
  for (size_t r = 0; r < rows; r += 2) {
    inverted_residual_rows(s, isa, packed.data, x.data(), many.data(), r, std::min(rows, r + 2),
                           scratch.data);
  }
  EXPECT_EQ(one, many);
}

INSTANTIATE_TEST_SUITE_P(Isa, InvertedResidualTest,
                         ::testing::Values(InvertedResidualIsa::kGeneric,
                                           InvertedResidualIsa::kAvx2,
                                           InvertedResidualIsa::kAvx512,
                                           InvertedResidualIsa::kAmx),
                         [](const ::testing::TestParamInfo<InvertedResidualIsa>& info) {
                           return std::string(to_string(info.param));
                         });

// kAmx on inf / NaN: activations holding them make the segment fall back
// to the AVX-512 rows (the same bytes as kAvx512, IEEE infinities and
// NaNs); a 1x1 filter holding one makes the packing report it.
TEST(InvertedResidualAmxTest, NonFiniteValuesGiveTheAvx512Rows) {
  if (!inverted_residual_isa_supported(InvertedResidualIsa::kAmx)) GTEST_SKIP() << "needs AMX";
  InvertedResidualShape s = block(1, 6, 5, 64, 96, 64, 1, true);
  s.expand_max = s.depthwise_max = INFINITY;
  const Weights w = weights_for(s, 31);
  std::vector<float> x = values(6 * 5 * 64, 32, 2.0f);
  x[3 * 64 + 7] = INFINITY;
  x[17 * 64 + 3] = NAN;
  auto run = [&](InvertedResidualIsa isa, const Weights& ws, bool* split) {
    AlignedFloats packed(inverted_residual_packed_floats(s, isa));
    *split = pack_inverted_residual(s, isa, ws.we.data(), ws.be.data(), ws.wd.data(),
                                    ws.bd.data(), ws.wp.data(), ws.bp.data(), packed.data);
    AlignedFloats scratch(inverted_residual_scratch_floats(s, isa));
    std::vector<float> out(6 * 5 * 64);
    inverted_residual_rows(s, isa, packed.data, x.data(), out.data(), 0, s.out_h(), scratch.data);
    return out;
  };
  bool split = false;
  const std::vector<float> want = run(InvertedResidualIsa::kAvx512, w, &split);
  const std::vector<float> got = run(InvertedResidualIsa::kAmx, w, &split);
  EXPECT_TRUE(split);
  size_t infinite = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    infinite += std::isinf(want[i]) ? 1 : 0;
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << i;
    } else {
      EXPECT_EQ(got[i], want[i]) << i;
    }
  }
  EXPECT_GT(infinite, 0u);
  Weights bad = w;
  bad.wp[5] = NAN;
  run(InvertedResidualIsa::kAmx, bad, &split);
  EXPECT_FALSE(split);
}

TEST(InvertedResidualShapeTest, UnsupportedShapesAreNamed) {
  InvertedResidualShape s = block(1, 8, 8, 24, 48, 24, 3, false);
  EXPECT_STRNE(inverted_residual_unsupported(s), "");
  s = block(1, 8, 8, 24, 48, 32, 1, true);  // residual with other out channels
  EXPECT_STRNE(inverted_residual_unsupported(s), "");
  s = block(1, 8, 8, 24, 48, 24, 2, true);  // residual on a strided block
  EXPECT_STRNE(inverted_residual_unsupported(s), "");
  s = block(1, 0, 8, 24, 48, 24, 1, false);
  EXPECT_STRNE(inverted_residual_unsupported(s), "");
  s = block(1, 8, 8, 24, 48, 24, 1, false);
  s.has_expand = false;  // expanded channels must then equal the input's
  EXPECT_STRNE(inverted_residual_unsupported(s), "");
}

TEST(InvertedResidualShapeTest, EnvironmentCapsTheInstructionSet) {
  setenv("TORCHLIGHT_FUSED_ISA", "generic", 1);
  EXPECT_EQ(inverted_residual_default_isa(), InvertedResidualIsa::kGeneric);
  setenv("TORCHLIGHT_FUSED_ISA", "avx2", 1);
  EXPECT_EQ(inverted_residual_default_isa(),
            inverted_residual_isa_supported(InvertedResidualIsa::kAvx2)
                ? InvertedResidualIsa::kAvx2
                : InvertedResidualIsa::kGeneric);
  unsetenv("TORCHLIGHT_FUSED_ISA");
  EXPECT_TRUE(inverted_residual_isa_supported(inverted_residual_default_isa()));
}

}  // namespace
}  // namespace optimized
}  // namespace torchlight
