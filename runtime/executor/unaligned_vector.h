// Reads one element of a flatbuffer vector of 8-byte scalars (int64 sizes,
// IntList items, DoubleList items) without assuming its alignment: the
// flatbuffer verifier checks the alignment of a vector's length prefix, not of
// its elements, so a crafted file can place them at any address. Internal
// header: includes flatbuffers.
#pragma once

#include <cstdint>
#include <cstring>

#include "flatbuffers/flatbuffers.h"

namespace torchlight {

template <typename T>
T unaligned_get(const flatbuffers::Vector<T>* vector, size_t index) {
  T value;
  std::memcpy(&value, vector->Data() + index * sizeof(T), sizeof(T));
  return value;
}

}  // namespace torchlight
