// Comparing a method's output tensor with a bundled expected tensor, with
// upstream ExecuTorch's rules (spec devtools-formats.md 2.3):
//   - dtype, sizes and dim order must be equal;
//   - float32, float64 and float16 compare elementwise: NaN equals NaN,
//     infinities of the same sign are equal, otherwise the element passes
//     when |actual - expected| <= atol + |rtol * actual|;
//   - every other dtype compares bitwise (memcmp); zero-byte tensors pass.
// Alongside the verdict it gathers error statistics over the elements, read
// in their real dtype (upstream reads every dtype as float32).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight {
namespace bundled {

/// Absolute and relative error over the elements compared. Relative error
/// divides by max(|expected|, 1e-8). Elements that are not finite on either
/// side (and equal by the rules above) count as zero error.
struct ErrorStats {
  int64_t elements = 0;
  double max_abs_error = 0.0;
  double mean_abs_error = 0.0;
  double max_rel_error = 0.0;
  double mean_rel_error = 0.0;
  bool numeric = true;  // False when the dtype has no numeric reading (e.g. quantized).

  /// Folds `other` into these statistics, weighting the means by elements.
  void merge(const ErrorStats& other);
};

struct TensorComparison {
  bool passed = false;
  ErrorStats stats;
  /// Why it failed, with the first failing element and its two values; ok
  /// when it passed.
  Status mismatch;
};

/// Compares `actual` (a method's output) with `expected`. Both must be
/// defined; `expected` lives in the bundle. A failure message has no
/// method or case in it: callers put that context in front.
TensorComparison compare_tensors(const Tensor& actual, const Tensor& expected, double rtol,
                                 double atol);

}  // namespace bundled
}  // namespace torchlight
