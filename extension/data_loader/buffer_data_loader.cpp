#include "extension/data_loader/buffer_data_loader.h"

#include "extension/data_loader/load_range.h"

namespace torchlight {

Result<FreeableBuffer> BufferDataLoader::load(size_t offset, size_t size,
                                              const SegmentInfo& /*info*/) {
  TL_RETURN_IF_ERROR(check_load_range(name_.c_str(), offset, size, size_));
  if (size == 0) return FreeableBuffer();
  // A null free function makes free() a no-op: the caller owns the memory.
  return FreeableBuffer(data_ + offset, size, nullptr);
}

}  // namespace torchlight
