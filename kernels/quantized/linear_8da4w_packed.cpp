// linear_8da4w_packed.h: the load-time packing, the reference loop and the
// selection. Plain C++ (no ISA flags).
#include "kernels/quantized/linear_8da4w_packed.h"

#include <cmath>
#include <cstring>

#include "kernels/quantized/column_chunks.h"

namespace torchlight::quantized {
namespace {

// Past this the exact |D_g - C_g| (< 3968 * group) might not fit a float's
// 24 bits.
constexpr int64_t kMaxPackedGroup = 4096;

size_t weight_part_bytes(int64_t k, int64_t n) {
  return round_up64(static_cast<size_t>(packed_blocks_8da4w(n) * (k / 8) * kPackedColumns8da4w) * 4);
}

size_t scales_part_bytes(int64_t k, int64_t n, int64_t group) {
  return round_up64(static_cast<size_t>(packed_blocks_8da4w(n) * (k / group) * kPackedColumns8da4w) * sizeof(float));
}

// The packed u_folded of one column: sum over its groups, in order, of
// fma(float(sum u), scale, .).
float column_u_folded(const uint8_t* row, const float* scales, int64_t k, int64_t group) {
  float folded = 0.0f;
  for (int64_t g = 0; g < k / group; ++g) {
    int32_t sum = 0;
    for (int64_t i = g * group / 2; i < (g + 1) * group / 2; ++i) sum += (row[i] & 15) + (row[i] >> 4);
    folded = std::fma(static_cast<float>(sum), scales[g], folded);
  }
  return folded;
}

}  // namespace

bool packed_8da4w_fits(int64_t k, int64_t group) {
  return group > 0 && group % 32 == 0 && group <= kMaxPackedGroup && k > 0 && k % group == 0;
}

size_t packed_8da4w_bytes(int64_t k, int64_t n, int64_t group) {
  return weight_part_bytes(k, n) + scales_part_bytes(k, n, group) +
         round_up64(static_cast<size_t>(packed_blocks_8da4w(n) * kPackedColumns8da4w) * sizeof(float));
}

Packed8da4w packed_8da4w_view(const void* memory, int64_t k, int64_t n, int64_t group) {
  const auto* base = static_cast<const uint8_t*>(memory);
  Packed8da4w packed;
  packed.weight = base;
  packed.scales = reinterpret_cast<const float*>(base + weight_part_bytes(k, n));
  packed.u_folded = reinterpret_cast<const float*>(base + weight_part_bytes(k, n) + scales_part_bytes(k, n, group));
  packed.k = k;
  packed.n = n;
  packed.group = group;
  return packed;
}

void pack_8da4w(const uint8_t* weight, const float* w_scales, int64_t k, int64_t n, int64_t group,
                void* memory, int64_t block_begin, int64_t block_end) {
  const Packed8da4w view = packed_8da4w_view(memory, k, n, group);
  auto* words = static_cast<uint8_t*>(memory);
  auto* scales = const_cast<float*>(view.scales);  // Inside `memory`, which is ours to write.
  auto* u_folded = const_cast<float*>(view.u_folded);
  const int64_t groups = k / group;
  const int64_t row_words = k / 8;
  for (int64_t b = block_begin; b < block_end; ++b) {
    for (int64_t c = 0; c < kPackedColumns8da4w; ++c) {
      const int64_t column = b * kPackedColumns8da4w + c;
      const bool real = column < n;  // Past N: zero weights and scales.
      const uint8_t* row = weight + column * (k / 2);
      for (int64_t d = 0; d < row_words; ++d) {
        uint8_t* to = words + ((b * row_words + d) * kPackedColumns8da4w + c) * 4;
        if (real) {
          std::memcpy(to, row + 4 * d, 4);
        } else {
          std::memset(to, 0, 4);
        }
      }
      for (int64_t g = 0; g < groups; ++g) {
        scales[(b * groups + g) * kPackedColumns8da4w + c] = real ? w_scales[column * groups + g] : 0.0f;
      }
      u_folded[column] = real ? column_u_folded(row, w_scales + column * groups, k, group) : 0.0f;
    }
  }
}

void linear_8da4w_packed_reference(const Packed8da4w& packed, const uint8_t* weight,
                                   const float* w_scales, const PackedRow8da4w& row,
                                   int64_t n_begin, int64_t n_end) {
  const int64_t k = packed.k, group = packed.group, groups = k / group;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = weight + n * (k / 2);
    const float* s = w_scales + n * groups;
    float products = 0.0f;
    for (int64_t g = 0; g < groups; ++g) {
      int32_t dot = 0;
      for (int64_t c = g * group / 32; c < (g + 1) * group / 32; ++c) {
        // Byte i of chunk c: low nibble at arranged position i, high at 16 + i.
        for (int64_t i = 0; i < 16; ++i) {
          dot += row.xq[32 * c + i] * (w[16 * c + i] & 15) + row.xq[32 * c + 16 + i] * (w[16 * c + i] >> 4);
        }
      }
      products = std::fma(static_cast<float>(dot) - row.correction[g], s[g], products);
    }
    const float u_folded = column_u_folded(w, s, k, group);
    const float sum = std::fma(-static_cast<float>(row.zero_point), u_folded, products);
    row.out[n] = std::fma(sum, row.scale, row.bias != nullptr ? row.bias[n] : 0.0f);
  }
}

void linear_8da4w_packed_rows_reference(const Packed8da4w& packed, const uint8_t* weight,
                                        const float* w_scales, const PackedRows8da4w& rows,
                                        int64_t n_begin, int64_t n_end) {
  const int64_t groups = packed.k / packed.group;
  for (int64_t r = 0; r < rows.rows; ++r) {
    const PackedRow8da4w row{rows.xq + r * packed.k, rows.correction + r * groups, rows.zero_point[r],
                             rows.scale[r], rows.bias, rows.out + r * packed.n};
    linear_8da4w_packed_reference(packed, weight, w_scales, row, n_begin, n_end);
  }
}

Packed8da4wFn select_packed_8da4w(int64_t k, int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == QuantIsa::kAvx2 && packed_8da4w_fits(k, group)) return &linear_8da4w_packed_avx2;
#else
  (void)isa;
#endif
  (void)k, (void)group;
  return nullptr;
}

PackedRows8da4wFn select_packed_rows_8da4w(int64_t k, int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (select_packed_8da4w(k, group, isa) != nullptr) return &linear_8da4w_packed_rows_avx2;
#endif
  (void)k, (void)group, (void)isa;
  return nullptr;
}

}  // namespace torchlight::quantized
