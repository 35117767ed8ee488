#include "kernels/optimized/conv/winograd_f2x3.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"
#include "runtime/core/result.h"

namespace torchlight::optimized {
namespace {

constexpr int kPoints = 16;     // A 4x4 patch: transform points e = 4 * row + col.
constexpr int64_t kLanes = 16;  // Channels per step: fixed-size arrays vectorize.
constexpr size_t kMinFloatsPerChunk = 16384;
// Blocked path: each thread transforms a block of tiles, runs the 16
// products on it and transforms it back while V and M are still in its
// cache (about this many floats of both). Whole-layer V and M of ResNet's
// 56x56x64 layers are 13 MB per call through memory.
constexpr int64_t kBlockFloats = 196608;
constexpr int64_t kMinBlockTiles = 32;
constexpr int64_t kMaxBlockTiles = 128;

int64_t tiles_along(int64_t out) { return (out + 1) / 2; }

int64_t tile_count(const Conv2dGeometry& g) {
  return g.batch * tiles_along(g.out_h) * tiles_along(g.out_w);
}

size_t round_up16(size_t n) { return (n + 15) / 16 * 16; }

size_t min_chunk(int64_t floats_per_item) {
  const size_t per_item = floats_per_item > 0 ? static_cast<size_t>(floats_per_item) : 1;
  return per_item >= kMinFloatsPerChunk ? 1 : kMinFloatsPerChunk / per_item;
}

// V = B^T d B for kLanes channels at once; d and v are [16][kLanes].
void transform_input(const float (&d)[kPoints][kLanes], float (&v)[kPoints][kLanes]) {
  for (int64_t l = 0; l < kLanes; ++l) {
    float t[4][4];
    for (int j = 0; j < 4; ++j) {  // B^T d: combine rows.
      t[0][j] = d[0 + j][l] - d[8 + j][l];
      t[1][j] = d[4 + j][l] + d[8 + j][l];
      t[2][j] = d[8 + j][l] - d[4 + j][l];
      t[3][j] = d[4 + j][l] - d[12 + j][l];
    }
    for (int i = 0; i < 4; ++i) {  // (B^T d) B: combine columns.
      v[4 * i + 0][l] = t[i][0] - t[i][2];
      v[4 * i + 1][l] = t[i][1] + t[i][2];
      v[4 * i + 2][l] = t[i][2] - t[i][1];
      v[4 * i + 3][l] = t[i][1] - t[i][3];
    }
  }
}

// Y = A^T m A for kLanes output channels at once; y is [2][2][kLanes].
void transform_output(const float (&m)[kPoints][kLanes], float (&y)[4][kLanes]) {
  for (int64_t l = 0; l < kLanes; ++l) {
    float s[2][4];
    for (int j = 0; j < 4; ++j) {
      s[0][j] = m[0 + j][l] + m[4 + j][l] + m[8 + j][l];
      s[1][j] = m[4 + j][l] - m[8 + j][l] - m[12 + j][l];
    }
    for (int i = 0; i < 2; ++i) {
      y[2 * i + 0][l] = s[i][0] + s[i][1] + s[i][2];
      y[2 * i + 1][l] = s[i][1] - s[i][2] - s[i][3];
    }
  }
}

struct Layout {
  int64_t tiles_h, tiles_w, tiles;
  const float* zeros;  // in_channels zeros, for patch pixels in the padding.
  float* v;            // [16][tiles][Cin]
  float* m;            // [16][tiles][Cout]
};

// Tile t's image and its top-left output pixel.
struct TileOrigin {
  int64_t n, y, x;
};

TileOrigin tile_origin(const Layout& L, int64_t t) {
  const int64_t per_image = L.tiles_h * L.tiles_w;
  const int64_t in_image = t % per_image;
  return {t / per_image, in_image / L.tiles_w * 2, in_image % L.tiles_w * 2};
}

// Tiles [begin, end) into V rows begin - first, ... (L.tiles rows a point).
void input_tiles(const Conv2dProblem& p, const Layout& L, size_t begin, size_t end,
                 int64_t first) {
  const Conv2dGeometry& g = p.geometry;
  const int64_t c_in = g.in_channels;
  float d[kPoints][kLanes];
  float v[kPoints][kLanes];
  for (size_t tile = begin; tile < end; ++tile) {
    const int64_t t = static_cast<int64_t>(tile);
    const TileOrigin o = tile_origin(L, t);
    const float* src[kPoints];
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        const int64_t y = o.y - g.pad_h + i, x = o.x - g.pad_w + j;
        const bool inside = y >= 0 && y < g.in_h && x >= 0 && x < g.in_w;
        src[4 * i + j] = inside ? p.input + ((o.n * g.in_h + y) * g.in_w + x) * c_in : L.zeros;
      }
    }
    for (int64_t c = 0; c < c_in; c += kLanes) {
      const int64_t width = std::min(kLanes, c_in - c);
      const size_t bytes = static_cast<size_t>(width) * sizeof(float);
      for (int e = 0; e < kPoints; ++e) {
        std::memcpy(d[e], src[e] + c, bytes);
        if (width < kLanes) std::fill(d[e] + width, d[e] + kLanes, 0.0f);
      }
      transform_input(d, v);
      for (int e = 0; e < kPoints; ++e) {
        std::memcpy(L.v + (e * L.tiles + t - first) * c_in + c, v[e], bytes);
      }
    }
  }
}

// Tiles [begin, end) from M rows begin - first, ... (L.tiles rows a point).
void output_tiles(const Conv2dProblem& p, const Layout& L, size_t begin, size_t end,
                  int64_t first) {
  const Conv2dGeometry& g = p.geometry;
  const int64_t c_out = g.out_channels;
  float m[kPoints][kLanes];
  float y[4][kLanes];
  for (size_t tile = begin; tile < end; ++tile) {
    const int64_t t = static_cast<int64_t>(tile);
    const TileOrigin o = tile_origin(L, t);
    for (int64_t c = 0; c < c_out; c += kLanes) {
      const int64_t width = std::min(kLanes, c_out - c);
      for (int e = 0; e < kPoints; ++e) {
        std::memcpy(m[e], L.m + (e * L.tiles + t - first) * c_out + c,
                    static_cast<size_t>(width) * sizeof(float));
        if (width < kLanes) std::fill(m[e] + width, m[e] + kLanes, 0.0f);
      }
      transform_output(m, y);
      for (int i = 0; i < 2; ++i) {
        for (int j = 0; j < 2; ++j) {
          if (o.y + i >= g.out_h || o.x + j >= g.out_w) continue;
          float* dst = p.output + ((o.n * g.out_h + o.y + i) * g.out_w + o.x + j) * c_out + c;
          const float* row = y[2 * i + j];
          for (int64_t l = 0; l < width; ++l) {
            const float value = p.bias != nullptr ? row[l] + p.bias[c + l] : row[l];
            dst[l] = std::min(std::max(value, p.output_min), p.output_max);
          }
        }
      }
    }
  }
}

// The 16 products M_e = V_e x U_e^T over `tiles` rows whose V and M start
// at `v` and `m` (row strides Cin and Cout, point strides as given).
Status multiply_points(const Conv2dProblem& p, const float* transformed, const float* v,
                       float* m, int64_t tiles, int64_t v_point_stride, int64_t m_point_stride,
                       GemmWorkspace workspace) {
  const Conv2dGeometry& g = p.geometry;
  GemmProblem mm;
  mm.m = tiles;
  mm.n = g.out_channels;
  mm.k = g.in_channels;
  mm.a = ConstMatrix{v, g.in_channels, 1};
  mm.b = ConstMatrix{transformed, 1, g.in_channels};
  mm.c = m;
  mm.ldc = g.out_channels;
  mm.workspace = workspace;
  return gemm_batched(mm, kPoints, v_point_stride, g.in_channels * g.out_channels,
                      m_point_stride);
}

int64_t block_tiles(const Conv2dGeometry& g) {
  const int64_t per_tile = kPoints * (g.in_channels + g.out_channels);
  return std::min(kMaxBlockTiles, std::max(kMinBlockTiles, kBlockFloats / per_tile));
}

// Blocks per thread when every thread gets at least two blocks and its own
// GEMM workspace slot; 0 to run whole layers instead.
int64_t blocked_threads(const Conv2dProblem& p, int64_t tiles) {
  const int64_t threads = static_cast<int64_t>(threadpool::num_threads());
  if (static_cast<int64_t>(p.workspace.slots) < threads) return 0;
  return tiles >= 2 * threads * block_tiles(p.geometry) ? threads : 0;
}

Status run_blocked(const Conv2dProblem& p, const float* transformed, const Layout& whole,
                   int64_t threads) {
  const Conv2dGeometry& g = p.geometry;
  const int64_t block = block_tiles(g);
  const int64_t blocks = (whole.tiles + block - 1) / block;
  const size_t v_floats = round_up16(kPoints * static_cast<size_t>(block * g.in_channels));
  const size_t m_floats = round_up16(kPoints * static_cast<size_t>(block * g.out_channels));
  Status failed = Error::kOk;
  std::atomic<bool> has_failed{false};
  // Item t: blocks t, t + threads, ... in its own V, M and workspace slot.
  threadpool::parallel_for(static_cast<size_t>(threads), 1, [&](size_t begin, size_t end) {
    for (size_t item = begin; item < end; ++item) {
      Layout L = whole;
      L.v = whole.v + item * (v_floats + m_floats);
      L.m = L.v + v_floats;
      GemmWorkspace slot{p.workspace.data + item * p.workspace.slot_floats,
                         p.workspace.slot_floats, 1};
      for (int64_t b = static_cast<int64_t>(item); b < blocks; b += threads) {
        const int64_t first = b * block;
        const int64_t count = std::min(block, whole.tiles - first);
        // The block's V and M rows are 0..count; tile indices stay global.
        L.tiles = count;
        input_tiles(p, L, static_cast<size_t>(first), static_cast<size_t>(first + count), first);
        Status s = multiply_points(p, transformed, L.v, L.m, count, count * g.in_channels,
                                   count * g.out_channels, slot);
        if (!s.ok()) {
          if (!has_failed.exchange(true)) failed = s;
          return;
        }
        output_tiles(p, L, static_cast<size_t>(first), static_cast<size_t>(first + count), first);
      }
    }
  });
  return failed;
}

}  // namespace

bool winograd_f2x3_applies(const Conv2dGeometry& g) {
  return g.kernel_h == 3 && g.kernel_w == 3 && g.stride_h == 1 && g.stride_w == 1 &&
         g.dilation_h == 1 && g.dilation_w == 1 && g.out_h > 0 && g.out_w > 0;
}

bool winograd_f2x3_preferred(const Conv2dGeometry& g) {
  // On AVX-512 (and AMX) CPUs im2col's GEMM is as fast (bench/README.md).
  if (active_gemm_isa() == GemmIsa::kAvx512 || active_gemm_isa() == GemmIsa::kAmx) return false;
  return winograd_f2x3_applies(g) && tile_count(g) >= kWinogradMinTiles &&
         g.in_channels >= kWinogradMinInputChannels;
}

size_t winograd_f2x3_filter_floats(int64_t in_channels, int64_t out_channels) {
  return static_cast<size_t>(kPoints) * static_cast<size_t>(in_channels) *
         static_cast<size_t>(out_channels);
}

void winograd_f2x3_transform_filter(const float* weight, int64_t in_channels,
                                    int64_t out_channels, float* transformed) {
  const int64_t plane = in_channels * out_channels;
  for (int64_t o = 0; o < out_channels; ++o) {
    for (int64_t i = 0; i < in_channels; ++i) {
      float g[3][3];
      for (int kh = 0; kh < 3; ++kh) {
        for (int kw = 0; kw < 3; ++kw) g[kh][kw] = weight[((o * 3 + kh) * 3 + kw) * in_channels + i];
      }
      float q[4][3];  // G g
      for (int j = 0; j < 3; ++j) {
        q[0][j] = g[0][j];
        q[1][j] = 0.5f * (g[0][j] + g[1][j] + g[2][j]);
        q[2][j] = 0.5f * (g[0][j] - g[1][j] + g[2][j]);
        q[3][j] = g[2][j];
      }
      for (int r = 0; r < 4; ++r) {  // (G g) G^T
        const float u[4] = {q[r][0], 0.5f * (q[r][0] + q[r][1] + q[r][2]),
                            0.5f * (q[r][0] - q[r][1] + q[r][2]), q[r][2]};
        for (int col = 0; col < 4; ++col) {
          transformed[(4 * r + col) * plane + o * in_channels + i] = u[col];
        }
      }
    }
  }
}

size_t winograd_f2x3_scratch_floats(const Conv2dGeometry& g) {
  const size_t tiles = static_cast<size_t>(tile_count(g));
  return round_up16(kPoints * tiles * static_cast<size_t>(g.in_channels)) +
         round_up16(kPoints * tiles * static_cast<size_t>(g.out_channels)) +
         round_up16(static_cast<size_t>(g.in_channels));
}

Status winograd_f2x3_conv2d(const Conv2dProblem& p, const float* transformed, float* scratch) {
  const Conv2dGeometry& g = p.geometry;
  Layout L;
  L.tiles_h = tiles_along(g.out_h);
  L.tiles_w = tiles_along(g.out_w);
  L.tiles = tile_count(g);
  const size_t v_floats = round_up16(kPoints * static_cast<size_t>(L.tiles * g.in_channels));
  const size_t m_floats = round_up16(kPoints * static_cast<size_t>(L.tiles * g.out_channels));
  L.v = scratch;
  L.m = scratch + v_floats;
  float* zeros = scratch + v_floats + m_floats;
  std::fill(zeros, zeros + g.in_channels, 0.0f);
  L.zeros = zeros;

  const int64_t threads = blocked_threads(p, L.tiles);
  if (threads > 0) return run_blocked(p, transformed, L, threads);
  threadpool::parallel_for(static_cast<size_t>(L.tiles), min_chunk(kPoints * g.in_channels),
                           [&](size_t begin, size_t end) { input_tiles(p, L, begin, end, 0); });
  // M_e[tiles, Cout] = V_e[tiles, Cin] x U_e[Cout, Cin]^T, for the 16 points.
  TL_RETURN_IF_ERROR(multiply_points(p, transformed, L.v, L.m, L.tiles, L.tiles * g.in_channels,
                                     L.tiles * g.out_channels, p.workspace));
  threadpool::parallel_for(static_cast<size_t>(L.tiles), min_chunk(kPoints * g.out_channels),
                           [&](size_t begin, size_t end) { output_tiles(p, L, begin, end, 0); });
  return Error::kOk;
}

}  // namespace torchlight::optimized
