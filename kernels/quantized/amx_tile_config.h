// The AMX tile configuration LDTILECFG reads (palette 1, 64 bytes): each
// tile's rows and bytes per row. Shared by the AMX kernels
// (linear_qs8_amx.cpp, linear_8da4w_amx.cpp).
#pragma once

#include <cstdint>
#include <type_traits>

namespace torchlight::quantized {

struct AmxTileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};

  /// Tile t as `rows` rows of `bytes` bytes (at most 16 and 64).
  void set(int t, int64_t tile_rows, int64_t bytes) {
    rows[t] = static_cast<uint8_t>(tile_rows);
    colsb[t] = static_cast<uint16_t>(bytes);
  }
};

/// Calls run(rows, columns) with std::integral_constant<int, 1 or 2>: the
/// blocks of 16 rows and columns a step of the AMX kernels' tiles<R, C>
/// covers (two each, one where only one is left).
template <typename Run>
void dispatch_tile_blocks(bool two_rows, bool two_columns, const Run& run) {
  using One = std::integral_constant<int, 1>;
  using Two = std::integral_constant<int, 2>;
  if (two_rows && two_columns) {
    run(Two{}, Two{});
  } else if (two_rows) {
    run(Two{}, One{});
  } else if (two_columns) {
    run(One{}, Two{});
  } else {
    run(One{}, One{});
  }
}

}  // namespace torchlight::quantized
