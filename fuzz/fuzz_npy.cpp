// Fuzz target: .npy parsing (read_npy_bytes), then a round trip of what it
// accepted through encode_npy and back.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "extension/npy/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchlight;
  Result<OwnedTensor> tensor = read_npy_bytes(Span<const uint8_t>(data, size), "fuzz.npy");
  if (!tensor.ok()) return 0;
  Result<std::vector<uint8_t>> encoded = encode_npy(tensor.get().tensor());
  if (!encoded.ok()) return 0;
  Result<OwnedTensor> again = read_npy_bytes(
      Span<const uint8_t>(encoded.get().data(), encoded.get().size()), "round trip");
  // What we wrote we must read back, bit for bit.
  if (!again.ok()) std::abort();
  const Tensor a = tensor.get().tensor();
  const Tensor b = again.get().tensor();
  if (a.scalar_type() != b.scalar_type() || a.dim() != b.dim() || a.nbytes() != b.nbytes()) {
    std::abort();
  }
  if (a.nbytes() > 0 && std::memcmp(a.const_data_ptr(), b.const_data_ptr(), a.nbytes()) != 0) {
    std::abort();
  }
  return 0;
}
