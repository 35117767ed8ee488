// Reading and writing NumPy .npy files as tensors, for CLI inputs/outputs
// and parity tests against PyTorch.
//
// Read: format versions 1.0, 2.0 and 3.0; dtypes float16/32/64, int8/16/32/64,
// uint8/16/32/64 and bool, little-endian (or byte-order free), C order,
// 0-d to kMaxTensorDim-d. Bytes after the data are ignored, as numpy does.
// Bool bytes other than 0 and 1 read as true (stored as 1).
// Write: format version 1.0, byte for byte what numpy.save writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "extension/tensor/owned_tensor.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace torchlight {

/// Reads the .npy file at `path` into a contiguous tensor.
///
/// Errors (each message names the file and the reason): kNotFound when the
/// file does not exist; kAccessFailed when it cannot be read;
/// kInvalidExternalData when it is not a well-formed .npy file (bad magic,
/// truncated header or data, malformed dict, overflowing shape);
/// kNotSupported for well-formed files this reader does not handle
/// (big-endian, fortran_order True, other dtypes, more than kMaxTensorDim
/// dims); kInvalidArgument for a zero-element shape whose strides overflow
/// int64; kMemoryAllocationFailed when the tensor cannot be allocated.
Result<OwnedTensor> read_npy(const std::string& path);

/// As read_npy(), from .npy bytes in memory (copied). `name` labels errors.
Result<OwnedTensor> read_npy_bytes(Span<const uint8_t> bytes, const char* name = "<memory>");

/// The .npy (version 1.0) encoding of `tensor`. A tensor with a
/// non-contiguous dim order (e.g. channels-last) is written in logical
/// order, so numpy sees the same values at the same indices.
///
/// Errors: kInvalidArgument for an undefined tensor or one with elements but
/// no data; kNotSupported for dtypes NumPy lacks: bfloat16 (convert to
/// float32 first), quantized, float8 and bits types.
Result<std::vector<uint8_t>> encode_npy(const Tensor& tensor);

/// Writes encode_npy(tensor) to `path`, replacing any existing file.
/// Errors: those of encode_npy(); kAccessFailed when the file cannot be
/// created or written (the message names the path and the OS error).
Status write_npy(const std::string& path, const Tensor& tensor);

}  // namespace torchlight
