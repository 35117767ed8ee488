// Fillers for test and benchmark inputs: ones, and deterministic
// pseudo-random values for every numeric dtype.
#pragma once

#include <cstdint>
#include <functional>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight {

/// Sets every element to 1 (true for bool). Supported dtypes: bool, uint8,
/// int8, int16, int32, int64, uint16, uint32, uint64, float16, bfloat16,
/// float32, float64. Errors: kInvalidArgument for an undefined tensor or one
/// with elements but no data; kNotSupported for any other dtype (quantized,
/// float8, bits16: their "one" is not a plain value).
Status fill_ones(const Tensor& tensor);

/// Fills every element, in storage order, from a generator seeded with
/// `seed`: the same seed, dtype and element count give the same bytes on
/// every run and platform. Floating types get uniform values in [-1, 1)
/// (rounded to float16/bfloat16 for those); signed integers uniform in
/// [-8, 8); unsigned integers in [0, 16); bool true or false with equal odds.
/// Same dtypes and errors as fill_ones().
Status fill_random(const Tensor& tensor, uint64_t seed);

/// Sets every element, in storage order, to the next `value()` converted to
/// the dtype as a C++ cast does (bool: nonzero is true). Same dtypes and
/// errors as fill_ones().
Status fill_values(const Tensor& tensor, const std::function<double()>& value);

}  // namespace torchlight
