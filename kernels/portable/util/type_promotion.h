// ATen's type promotion for kernels: the common dtype of the operands, the
// check that the result fits the out tensor, and the checks ATen applies to
// Scalar arguments such as alpha.
#pragma once

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/evalue.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/status.h"

namespace torchlight::portable {

/// ATen's result_type (c10 ResultTypeState): tensors with dimensions decide
/// first; 0-d tensors, then Scalars, only matter when they are of a higher
/// category (bool < integral < floating). A Double Scalar counts as float32
/// (the default dtype), an Int as int64, a Bool as bool. So int32[3] +
/// float64 0-d gives float64, float32[3] + float64 0-d gives float32, and
/// int8[3] + Int Scalar gives int8.
class ResultType {
 public:
  /// Adds a tensor operand. Errors: kInvalidType when its dtype has no type
  /// promotion (not one of the ten real types), naming `name`.
  Status add_tensor(const NamedTensor& tensor);
  /// Adds a Scalar operand (Int, Double or Bool; the caller checked the tag).
  void add_scalar(const EValue& scalar);

  /// The common dtype. Before any operand was added: kBool (an internal bug).
  ScalarType get() const;

 private:
  void update(ScalarType* slot, ScalarType type);

  // kBool with `has_*` false means "undefined" for that priority tier.
  ScalarType dim_ = ScalarType::kBool;
  ScalarType zero_dim_ = ScalarType::kBool;
  ScalarType wrapped_ = ScalarType::kBool;
  bool has_dim_ = false;
  bool has_zero_dim_ = false;
  bool has_wrapped_ = false;
};

/// The common dtype of two tensors: ResultType over a and b.
/// Errors: as ResultType::add_tensor.
Status compute_result_type(const NamedTensor& a, const NamedTensor& b, ScalarType* common);

/// Checks that a result of dtype `common` may be written into `out`
/// (can_cast: no float into an integer tensor, nothing but bool into bool).
/// Errors: kInvalidType, naming both dtypes and the out argument.
Status check_out_dtype(ScalarType common, const NamedTensor& out);

/// Checks that a Scalar can be converted to `type` without overflow, with
/// c10's rules: integers must be in range (unsigned types also take
/// -max..-1, ATen's "-1 means all ones" idiom); a Double into an integer type
/// must be finite and in range; floats must be in range unless infinite or
/// NaN; anything fits bool. Errors: kInvalidArgument naming `name`, the value
/// and `type`.
Status check_scalar_fits(const EValue& scalar, ScalarType type, const char* name);

/// check_scalar_fits without the message, for evals that hand a misfit to
/// the reference eval.
bool scalar_fits(const EValue& scalar, ScalarType type);

/// ATen's alpha_check for add/sub-like ops whose common dtype is `common`:
/// a Bool alpha needs a bool result, a Double alpha a floating result, and
/// the value must fit `common` (ATen converts alpha to the common dtype).
/// Errors: kInvalidType for the wrong kind of Scalar, kInvalidArgument when
/// the value does not fit; both name 'alpha'.
Status check_alpha(const EValue& alpha, ScalarType common);

}  // namespace torchlight::portable
