// libFuzzer's custom mutator for xnnpack_payload: keeps mutations where the
// parser reads when the constants dwarf the rest.
//
// The seed that reaches conv2d on the AVX-512 routing carries a 2.25 MiB
// filter (the routing takes filters of 2 MiB and more) behind a 1 KB header
// and flatbuffer; byte-level mutations over the whole input would almost
// all land in the weights. For a header-mode payload (XH00) over 64 KiB
// (beyond the usual -max_len) whose constant region is most of it, three
// mutations in four change only the bytes before
// the constant region, in place (its length kept, so the constants stay
// where the header says); the rest, and every other input, go to libFuzzer's
// own mutator.
#include <cstddef>
#include <cstdint>
#include <cstring>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

// Header mode: bytes 4..8 are "XH00" and bytes 18..22 the constant region's
// offset (backends/xnnpack/payload_header.h).
size_t constant_offset(const uint8_t* data, size_t size) {
  if (size < 30 || std::memcmp(data + 4, "XH00", 4) != 0) return 0;
  const size_t offset = data[18] | data[19] << 8 | data[20] << 16 | size_t{data[21]} << 24;
  return offset < size ? offset : 0;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  const size_t head = constant_offset(data, size);
  if (size <= 65536 || head == 0 || head * 8 > size || seed % 4 == 0) {
    return LLVMFuzzerMutate(data, size, max_size);
  }
  // A shorter result leaves the old tail of the head in place.
  LLVMFuzzerMutate(data, head, head);
  return size;
}
