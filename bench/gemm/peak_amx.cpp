// The machine's AMX-BF16 rate on one core: tdpbf16ps into four independent
// C tiles from A and B tiles loaded once (the instruction's ceiling), and
// the same with the AMX gemm kernel's loads (two A and two B tiles from L1
// before every four products). Compiled with -mamx-tile -mamx-bf16; called
// only where gemm_isa_supported(GemmIsa::kAmx) (which requests the tiles
// from the OS).
#include <immintrin.h>

#include <cstdint>

namespace torchlight::bench {
namespace {

void configure_tiles() {
  alignas(64) unsigned char config[64] = {};
  config[0] = 1;
  for (int t = 0; t < 8; ++t) {
    config[16 + 2 * t] = 64;
    config[48 + t] = 16;
  }
  _tile_loadconfig(config);
}

}  // namespace

/// `iterations` rounds of four tdpbf16ps (16 x 16 x 32 multiply-adds
/// each: 65536 flops a round); with `loads`, each round first loads two A
/// and two B tiles from a 16 KB L1-resident buffer. Returns a checksum.
float amx_bf16_loop(int64_t iterations, bool loads) {
  alignas(64) static uint16_t buffer[8][16 * 32];
  for (int t = 0; t < 8; ++t) {
    for (int i = 0; i < 16 * 32; ++i) buffer[t][i] = 0x3c00;  // bf16 2^-7.
  }
  configure_tiles();
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_loadd(4, buffer[0], 64);
  _tile_loadd(5, buffer[1], 64);
  _tile_loadd(6, buffer[2], 64);
  _tile_loadd(7, buffer[3], 64);
  for (int64_t it = 0; it < iterations; ++it) {
    if (loads) {
      const int s = static_cast<int>(it & 1) * 4;
      _tile_loadd(4, buffer[s], 64);
      _tile_loadd(5, buffer[s + 1], 64);
      _tile_loadd(6, buffer[s + 2], 64);
      _tile_loadd(7, buffer[s + 3], 64);
    }
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  alignas(64) float c[16 * 16];
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}

}  // namespace torchlight::bench
