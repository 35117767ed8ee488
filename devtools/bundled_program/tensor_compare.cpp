#include "devtools/bundled_program/tensor_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "runtime/core/half.h"

namespace torchlight {
namespace bundled {
namespace {

constexpr double kRelativeFloor = 1e-8;

// Element `i` of `data` (of `type`) as a double; false for dtypes without a
// plain numeric reading.
bool element_as_double(ScalarType type, const void* data, int64_t i, double* out) {
  auto read = [&](auto tag) {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, static_cast<const uint8_t*>(data) + static_cast<size_t>(i) * sizeof(T),
                sizeof(T));
    return v;
  };
  switch (type) {
    case ScalarType::kByte: *out = read(uint8_t{}); return true;
    case ScalarType::kChar: *out = read(int8_t{}); return true;
    case ScalarType::kShort: *out = read(int16_t{}); return true;
    case ScalarType::kInt: *out = read(int32_t{}); return true;
    case ScalarType::kLong: *out = static_cast<double>(read(int64_t{})); return true;
    case ScalarType::kUInt16: *out = read(uint16_t{}); return true;
    case ScalarType::kUInt32: *out = read(uint32_t{}); return true;
    case ScalarType::kUInt64: *out = static_cast<double>(read(uint64_t{})); return true;
    case ScalarType::kBool: *out = read(uint8_t{}) != 0 ? 1.0 : 0.0; return true;
    case ScalarType::kHalf: *out = Half::to_float(read(uint16_t{})); return true;
    case ScalarType::kBFloat16: *out = BFloat16::to_float(read(uint16_t{})); return true;
    case ScalarType::kFloat: *out = read(float{}); return true;
    case ScalarType::kDouble: *out = read(double{}); return true;
    default: return false;
  }
}

bool uses_tolerance(ScalarType type) {
  return type == ScalarType::kFloat || type == ScalarType::kDouble || type == ScalarType::kHalf;
}

// Upstream's element rule for the tolerance dtypes.
bool close(double actual, double expected, double rtol, double atol) {
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  if (std::isinf(actual) || std::isinf(expected)) return actual == expected;
  return std::fabs(actual - expected) <= atol + std::fabs(rtol * actual);
}

bool same_shape(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (size_t d = 0; d < a.dim(); ++d) {
    if (a.sizes()[d] != b.sizes()[d] || a.dim_order()[d] != b.dim_order()[d]) return false;
  }
  return true;
}

}  // namespace

void ErrorStats::merge(const ErrorStats& other) {
  const int64_t total = elements + other.elements;
  if (total > 0) {
    const double w = static_cast<double>(other.elements) / static_cast<double>(total);
    mean_abs_error += (other.mean_abs_error - mean_abs_error) * w;
    mean_rel_error += (other.mean_rel_error - mean_rel_error) * w;
  }
  elements = total;
  max_abs_error = std::max(max_abs_error, other.max_abs_error);
  max_rel_error = std::max(max_rel_error, other.max_rel_error);
  numeric = numeric && other.numeric;
}

TensorComparison compare_tensors(const Tensor& actual, const Tensor& expected, double rtol,
                                 double atol) {
  TensorComparison result;
  const ScalarType type = expected.scalar_type();
  if (actual.scalar_type() != type) {
    result.mismatch = Status::error(Error::kInvalidType, "dtype is %s, expected %s",
                                    to_string(actual.scalar_type()), to_string(type));
    return result;
  }
  if (!same_shape(actual, expected)) {
    char got[128];
    char want[128];
    result.mismatch = Status::error(
        Error::kInvalidArgument, "sizes are %s, expected %s (or the dim order differs)",
        format_sizes(actual.sizes(), got, sizeof(got)),
        format_sizes(expected.sizes(), want, sizeof(want)));
    return result;
  }
  const int64_t n = expected.numel();
  const bool tolerant = uses_tolerance(type);
  int64_t first_bad = -1;
  double sum_abs = 0.0;
  double sum_rel = 0.0;
  ErrorStats& stats = result.stats;
  stats.elements = n;
  for (int64_t i = 0; i < n; ++i) {
    double a = 0.0;
    double e = 0.0;
    if (!element_as_double(type, actual.const_data_ptr<void>(), i, &a) ||
        !element_as_double(type, expected.const_data_ptr<void>(), i, &e)) {
      stats.numeric = false;
      break;
    }
    const bool equal_special = (std::isnan(a) && std::isnan(e)) || (std::isinf(a) && a == e);
    const double abs_error = equal_special ? 0.0 : std::fabs(a - e);
    const double rel_error = equal_special ? 0.0 : abs_error / std::max(std::fabs(e), kRelativeFloor);
    sum_abs += abs_error;
    sum_rel += rel_error;
    // NaN errors (NaN against a number) must show as the maximum, not vanish in std::max.
    if (std::isnan(abs_error) || abs_error > stats.max_abs_error) stats.max_abs_error = abs_error;
    if (std::isnan(rel_error) || rel_error > stats.max_rel_error) stats.max_rel_error = rel_error;
    if (tolerant && first_bad < 0 && !close(a, e, rtol, atol)) first_bad = i;
  }
  if (stats.numeric && n > 0) {
    stats.mean_abs_error = sum_abs / static_cast<double>(n);
    stats.mean_rel_error = sum_rel / static_cast<double>(n);
  }
  if (!stats.numeric) stats = ErrorStats{n, 0.0, 0.0, 0.0, 0.0, false};

  if (tolerant) {
    if (first_bad >= 0) {
      double a = 0.0;
      double e = 0.0;
      element_as_double(type, actual.const_data_ptr<void>(), first_bad, &a);
      element_as_double(type, expected.const_data_ptr<void>(), first_bad, &e);
      result.mismatch = Status::error(
          Error::kInvalidArgument,
          "element %lld is %.9g, expected %.9g (|difference| %.3g > atol %g + rtol %g x |actual|)",
          static_cast<long long>(first_bad), a, e, std::fabs(a - e), atol, rtol);
      return result;
    }
  } else if (expected.nbytes() > 0 &&
             std::memcmp(actual.const_data_ptr<void>(), expected.const_data_ptr<void>(),
                         expected.nbytes()) != 0) {
    // Bitwise dtypes: name the first differing element.
    const size_t size = expected.element_size();
    const auto* a = static_cast<const uint8_t*>(actual.const_data_ptr<void>());
    const auto* e = static_cast<const uint8_t*>(expected.const_data_ptr<void>());
    int64_t i = 0;
    while (std::memcmp(a + static_cast<size_t>(i) * size, e + static_cast<size_t>(i) * size,
                       size) == 0) {
      ++i;
    }
    double av = 0.0;
    double ev = 0.0;
    if (element_as_double(type, a, i, &av) && element_as_double(type, e, i, &ev)) {
      result.mismatch = Status::error(Error::kInvalidArgument,
                                      "element %lld is %.17g, expected %.17g (%s compares exactly)",
                                      static_cast<long long>(i), av, ev, to_string(type));
    } else {
      result.mismatch = Status::error(Error::kInvalidArgument,
                                      "element %lld differs (%s compares bitwise)",
                                      static_cast<long long>(i), to_string(type));
    }
    return result;
  }
  result.passed = true;
  return result;
}

}  // namespace bundled
}  // namespace torchlight
