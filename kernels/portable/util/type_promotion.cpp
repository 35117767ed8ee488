#include "kernels/portable/util/type_promotion.h"

#include <cfloat>
#include <cinttypes>
#include <cmath>
#include <cstdint>

#include "runtime/core/result.h"

namespace torchlight::portable {

namespace {

// c10's combine_categories: `higher` is the result of a higher-priority tier.
// A lower tier only wins when it is of a higher category than `higher`.
bool combine_categories(bool has_higher, ScalarType higher, bool has_lower, ScalarType lower,
                        ScalarType* out) {
  if (!has_higher) {
    *out = lower;
    return has_lower;
  }
  if (!has_lower || is_floating_point(higher)) {
    *out = higher;
    return true;
  }
  if (higher == ScalarType::kBool || is_floating_point(lower)) {
    // Both are real types here, so promote_types cannot fail.
    if (!promote_types(higher, lower, out)) *out = higher;
    return true;
  }
  *out = higher;
  return true;
}

// The largest finite value of a floating type.
double max_finite(ScalarType type) {
  switch (type) {
    case ScalarType::kHalf: return 65504.0;
    case ScalarType::kBFloat16: return 3.3895313892515355e38;
    case ScalarType::kFloat: return FLT_MAX;
    default: return DBL_MAX;
  }
}

// Inclusive range of an integer type, as int64. Unsigned types report their
// maximum in `max` and accept down to -max (c10's idiom for all-ones).
void int_range(ScalarType type, int64_t* min, int64_t* max) {
  switch (type) {
    case ScalarType::kByte: *min = -255; *max = 255; return;
    case ScalarType::kChar: *min = INT8_MIN; *max = INT8_MAX; return;
    case ScalarType::kShort: *min = INT16_MIN; *max = INT16_MAX; return;
    case ScalarType::kInt: *min = INT32_MIN; *max = INT32_MAX; return;
    default: *min = INT64_MIN; *max = INT64_MAX; return;
  }
}

Status overflow_error(const EValue& scalar, ScalarType type, const char* name) {
  if (scalar.is_double()) {
    return Status::error(Error::kInvalidArgument,
                         "argument '%s' = %g cannot be converted to %s without overflow", name,
                         scalar.to_double(), to_string(type));
  }
  return Status::error(Error::kInvalidArgument,
                       "argument '%s' = %" PRId64 " cannot be converted to %s without overflow",
                       name, scalar.scalar_as_int(), to_string(type));
}

}  // namespace

void ResultType::update(ScalarType* slot, ScalarType type) {
  ScalarType promoted = type;
  // Both are real types (checked by the callers), so this cannot fail.
  if (!promote_types(*slot, type, &promoted)) promoted = type;
  *slot = promoted;
}

Status ResultType::add_tensor(const NamedTensor& tensor) {
  const ScalarType type = tensor.tensor.scalar_type();
  ScalarType ignored;
  TL_CHECK_OR_RETURN(promote_types(type, type, &ignored), Error::kInvalidType,
                     "argument '%s' has dtype %s, which has no type promotion (supported: "
                     "uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, bool)",
                     tensor.name, to_string(type));
  if (tensor.tensor.dim() == 0) {
    if (has_zero_dim_) {
      update(&zero_dim_, type);
    } else {
      zero_dim_ = type;
      has_zero_dim_ = true;
    }
  } else if (has_dim_) {
    update(&dim_, type);
  } else {
    dim_ = type;
    has_dim_ = true;
  }
  return Error::kOk;
}

void ResultType::add_scalar(const EValue& scalar) {
  // A Python number is a "wrapped" tensor: float becomes the default dtype.
  const ScalarType type = scalar.is_double() ? ScalarType::kFloat
                          : scalar.is_bool() ? ScalarType::kBool
                                             : ScalarType::kLong;
  if (has_wrapped_) {
    update(&wrapped_, type);
  } else {
    wrapped_ = type;
    has_wrapped_ = true;
  }
}

ScalarType ResultType::get() const {
  ScalarType lower = ScalarType::kBool;
  const bool has_lower = combine_categories(has_zero_dim_, zero_dim_, has_wrapped_, wrapped_,
                                            &lower);
  ScalarType result = ScalarType::kBool;
  combine_categories(has_dim_, dim_, has_lower, lower, &result);
  return result;
}

Status compute_result_type(const NamedTensor& a, const NamedTensor& b, ScalarType* common) {
  ResultType result;
  TL_RETURN_IF_ERROR(result.add_tensor(a));
  TL_RETURN_IF_ERROR(result.add_tensor(b));
  *common = result.get();
  return Error::kOk;
}

Status check_out_dtype(ScalarType common, const NamedTensor& out) {
  const ScalarType out_type = out.tensor.scalar_type();
  TL_CHECK_OR_RETURN(can_cast(common, out_type), Error::kInvalidType,
                     "result dtype %s can't be cast to the dtype %s of argument '%s'",
                     to_string(common), to_string(out_type), out.name);
  return Error::kOk;
}

bool scalar_fits(const EValue& scalar, ScalarType type) {
  if (type == ScalarType::kBool) return true;
  if (is_floating_point(type)) {
    const double value = scalar.scalar_as_double();
    return std::isinf(value) || std::isnan(value) || std::fabs(value) <= max_finite(type);
  }
  int64_t min = 0;
  int64_t max = 0;
  int_range(type, &min, &max);
  if (scalar.is_double()) {
    const double value = scalar.to_double();
    // Compared in double: -2^63 and 2^63 are exact there, and NaN fails both.
    return value >= static_cast<double>(min) &&
           (max == INT64_MAX ? value < 9223372036854775808.0 : value <= static_cast<double>(max));
  }
  const int64_t value = scalar.scalar_as_int();
  return value >= min && value <= max;
}

Status check_scalar_fits(const EValue& scalar, ScalarType type, const char* name) {
  if (!scalar_fits(scalar, type)) return overflow_error(scalar, type, name);
  return Error::kOk;
}

Status check_alpha(const EValue& alpha, ScalarType common) {
  TL_CHECK_OR_RETURN(!alpha.is_bool() || common == ScalarType::kBool, Error::kInvalidType,
                     "argument 'alpha' is a Bool, which is only supported for bool results "
                     "(the result dtype is %s)",
                     to_string(common));
  TL_CHECK_OR_RETURN(!alpha.is_double() || is_floating_point(common), Error::kInvalidType,
                     "argument 'alpha' is a floating-point number (%g), which is not supported "
                     "for the integral result dtype %s",
                     alpha.to_double(), to_string(common));
  return check_scalar_fits(alpha, common, "alpha");
}

}  // namespace torchlight::portable
