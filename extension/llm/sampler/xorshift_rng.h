// XorShiftRng: the small seeded generator the sampler owns (xorshift64*, as
// llama2.c uses), so a seed reproduces a generation exactly on any platform.
#pragma once

#include <cstdint>

namespace torchlight {

class XorShiftRng {
 public:
  explicit XorShiftRng(uint64_t seed) { reseed(seed); }

  /// Restarts the sequence. Every seed is valid, including 0: the seed is
  /// scrambled with splitmix64 so the state is never 0 and nearby seeds give
  /// unrelated sequences.
  void reseed(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    state_ = z != 0 ? z : 0x2545F4914F6CDD1Dull;
  }

  uint32_t next_u32() {
    state_ ^= state_ >> 12;
    state_ ^= state_ << 25;
    state_ ^= state_ >> 27;
    return static_cast<uint32_t>((state_ * 0x2545F4914F6CDD1Dull) >> 32);
  }

  /// Uniform in [0, 1), 24 bits of resolution: never 1.0.
  float next_float() { return static_cast<float>(next_u32() >> 8) / 16777216.0f; }

 private:
  uint64_t state_ = 0;
};

}  // namespace torchlight
