// Reductions over any set of dims of a tensor in any layout: which dims a
// `dim` argument names, the result's shape, and walks that visit, for each
// output element, the input elements it reduces.
//
//   ReductionPlan plan;
//   TL_KERNEL_RETURN_IF_ERROR(ctx, plan.init(self, dims, /*reduce_all=*/dims.empty(), keepdim));
//   TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, plan.out_sizes()));
//   plan.for_each_output(self.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
//     Acc acc = 0;
//     plan.for_each_reduced(self.tensor, in_base, [&](int64_t in_offset) { acc += in[in_offset]; });
//     out_data[out_offset] = acc;
//   });
//
// Offsets are in elements, through each tensor's own strides, so permuted
// (channels-last) inputs and outputs need no copies. Reduced elements are
// visited in row-major order of the reduced dims, so the visit count is the
// flattened index argmax reports.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// Wraps a possibly negative `dim` of an argument named `name` for a tensor
/// of rank `ndim` into 0..ndim-1. As in ATen, a 0-d tensor accepts -1 and 0
/// (both give 0). Errors: kInvalidArgument naming the argument, the value
/// and the valid range.
inline Status normalize_dim(int64_t dim, size_t ndim, const char* name, size_t* out) {
  const int64_t rank = ndim == 0 ? 1 : static_cast<int64_t>(ndim);
  if (dim < -rank || dim >= rank) {
    return Status::error(Error::kInvalidArgument,
                         "argument '%s': dim %lld is out of range for a %zu-d tensor "
                         "(expected %lld..%lld)",
                         name, static_cast<long long>(dim), ndim, static_cast<long long>(-rank),
                         static_cast<long long>(rank - 1));
  }
  *out = static_cast<size_t>(dim < 0 ? dim + rank : dim);
  return Error::kOk;
}

namespace internal {

/// Odometer walk over `n` dims, outermost first, calling f(offset_a,
/// offset_b) with offsets starting at base_a/base_b. Nothing when a size is
/// 0; one call when n == 0.
template <typename F>
void walk_dims(size_t n, const int64_t* sizes, const int64_t* strides_a, const int64_t* strides_b,
               int64_t base_a, int64_t base_b, F&& f) {
  for (size_t d = 0; d < n; ++d) {
    if (sizes[d] == 0) return;
  }
  int64_t index[kMaxTensorDim] = {};
  int64_t a = base_a;
  int64_t b = base_b;
  while (true) {
    f(a, b);
    size_t d = n;
    while (true) {
      if (d == 0) return;
      --d;
      if (++index[d] < sizes[d]) {
        a += strides_a[d];
        b += strides_b[d];
        break;
      }
      a -= strides_a[d] * (sizes[d] - 1);
      b -= strides_b[d] * (sizes[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace internal

/// The dims one reduction covers and the shape of its result.
class ReductionPlan {
 public:
  /// Plans reducing `in` over `dims` (each wrapped with normalize_dim; named
  /// `dim_name` in errors), or over every dim when `reduce_all`. With
  /// `keepdim` reduced dims stay as size 1, else they are dropped; a 0-d
  /// input gives a 0-d result. Errors: kInvalidArgument for a dim out of
  /// range or named twice, or more than kMaxTensorDim dims.
  Status init(const NamedTensor& in, Span<const int64_t> dims, bool reduce_all, bool keepdim,
              const char* dim_name = "dim") {
    const Tensor& t = in.tensor;
    ndim_ = t.dim();
    bool reduced[kMaxTensorDim] = {};
    if (reduce_all) {
      for (size_t d = 0; d < ndim_; ++d) reduced[d] = true;
    } else {
      for (int64_t dim : dims) {
        size_t d = 0;
        TL_RETURN_IF_ERROR(normalize_dim(dim, ndim_, dim_name, &d));
        if (ndim_ == 0) continue;  // A 0-d tensor reduces over "dim 0": its one element.
        if (reduced[d]) {
          return Status::error(Error::kInvalidArgument,
                               "argument '%s': dim %zu appears more than once", dim_name, d);
        }
        reduced[d] = true;
      }
    }
    num_kept_ = 0;
    num_reduced_ = 0;
    out_dim_ = 0;
    reduced_numel_ = 1;
    for (size_t d = 0; d < ndim_; ++d) {
      const SizesType size = t.size(d);
      if (reduced[d]) {
        reduced_dims_[num_reduced_++] = d;
        reduced_numel_ *= size;
        if (keepdim) out_sizes_[out_dim_++] = 1;
      } else {
        // With keepdim, out dim d matches in dim d; without, kept dims pack.
        kept_dims_[num_kept_] = d;
        kept_out_dims_[num_kept_++] = keepdim ? d : out_dim_;
        out_sizes_[out_dim_++] = size;
      }
      is_reduced_[d] = reduced[d];
    }
    return Error::kOk;
  }

  /// The result's shape (valid until the next init).
  Span<const SizesType> out_sizes() const { return {out_sizes_, out_dim_}; }
  /// Input elements per output element (1 when nothing is reduced).
  int64_t reduced_numel() const { return reduced_numel_; }
  size_t num_reduced_dims() const { return num_reduced_; }
  bool is_reduced(size_t d) const { return d < ndim_ && is_reduced_[d]; }

  /// The first reduced dim whose size is 0, or -1. amax, argmax and friends
  /// have no identity and reject it, as ATen does.
  int64_t first_empty_reduced_dim(const Tensor& in) const {
    for (size_t i = 0; i < num_reduced_; ++i) {
      if (in.size(reduced_dims_[i]) == 0) return static_cast<int64_t>(reduced_dims_[i]);
    }
    return -1;
  }

  /// Calls f(in_base, out_offset) for every output element in row-major
  /// order. `out` must already have out_sizes().
  template <typename F>
  void for_each_output(const Tensor& in, const Tensor& out, F&& f) const {
    int64_t sizes[kMaxTensorDim] = {};
    int64_t in_strides[kMaxTensorDim] = {};
    int64_t out_strides[kMaxTensorDim] = {};
    for (size_t i = 0; i < num_kept_; ++i) {
      sizes[i] = in.size(kept_dims_[i]);
      in_strides[i] = in.strides()[kept_dims_[i]];
      out_strides[i] = out.strides()[kept_out_dims_[i]];
    }
    internal::walk_dims(num_kept_, sizes, in_strides, out_strides, 0, 0, f);
  }

  /// Calls g(in_offset) for every input element reduced into the output at
  /// `in_base`, in row-major order of the reduced dims.
  template <typename G>
  void for_each_reduced(const Tensor& in, int64_t in_base, G&& g) const {
    int64_t sizes[kMaxTensorDim] = {};
    int64_t strides[kMaxTensorDim] = {};
    for (size_t i = 0; i < num_reduced_; ++i) {
      sizes[i] = in.size(reduced_dims_[i]);
      strides[i] = in.strides()[reduced_dims_[i]];
    }
    internal::walk_dims(num_reduced_, sizes, strides, strides, in_base, in_base,
                        [&g](int64_t offset, int64_t) { g(offset); });
  }

 private:
  size_t ndim_ = 0;
  size_t num_kept_ = 0;
  size_t num_reduced_ = 0;
  size_t out_dim_ = 0;
  int64_t reduced_numel_ = 1;
  size_t kept_dims_[kMaxTensorDim] = {};      // Input dims kept, in order.
  size_t kept_out_dims_[kMaxTensorDim] = {};  // The out dim of each kept dim.
  size_t reduced_dims_[kMaxTensorDim] = {};   // Input dims reduced, in order.
  bool is_reduced_[kMaxTensorDim] = {};
  SizesType out_sizes_[kMaxTensorDim] = {};
};

/// Reads an optional `ScalarType? dtype` argument (an Int holding a
/// ScalarType code, or None; the caller checked the tag). *has_dtype is
/// false for None. Errors: kInvalidArgument naming the argument when the
/// code is not one of the ten real types.
inline Status read_optional_dtype(const EValue& value, const char* name, bool* has_dtype,
                                  ScalarType* dtype) {
  *has_dtype = !value.is_none();
  if (!*has_dtype) return Error::kOk;
  const int64_t code = value.to_int();
  const ScalarType type = static_cast<ScalarType>(code);
  const bool real = code >= 0 && code <= 15 && is_valid(type) &&
                    (is_floating_point(type) || is_integral(type) || type == ScalarType::kBool);
  if (!real) {
    return Status::error(Error::kInvalidArgument,
                         "argument '%s' is %lld, which is not a supported dtype code", name,
                         static_cast<long long>(code));
  }
  *dtype = type;
  return Error::kOk;
}

}  // namespace torchlight::portable

namespace torchlight::portable {

/// For sum/prod/mean/cumsum-like ops whose `ScalarType? dtype` decides the
/// result dtype when given: then out must have exactly that dtype, as in
/// ATen. Errors: kInvalidType naming 'out', its dtype and the requested one.
inline Status check_out_matches_dtype(bool has_dtype, ScalarType dtype, const NamedTensor& out) {
  if (has_dtype && out.tensor.scalar_type() != dtype) {
    return Status::error(Error::kInvalidType,
                         "argument '%s' has dtype %s, but argument 'dtype' asks for %s", out.name,
                         to_string(out.tensor.scalar_type()), to_string(dtype));
  }
  return Error::kOk;
}

/// For ops whose out must have the input's dtype (amax, softmax...).
/// Errors: kInvalidType naming 'out' and both dtypes.
inline Status check_same_dtype(const NamedTensor& in, const NamedTensor& out) {
  if (in.tensor.scalar_type() != out.tensor.scalar_type()) {
    return Status::error(Error::kInvalidType,
                         "argument '%s' has dtype %s, expected %s (the dtype of '%s')", out.name,
                         to_string(out.tensor.scalar_type()), to_string(in.tensor.scalar_type()),
                         in.name);
  }
  return Error::kOk;
}

}  // namespace torchlight::portable

namespace torchlight::portable {

/// The accumulator of sum/prod/mean/cumsum into OUT: double for the
/// floating types (so long reductions lose nothing), OUT's opmath type
/// otherwise (integers wrap as ATen's do; bool sums are logical or).
template <typename OUT>
using ReduceAcc = std::conditional_t<std::is_floating_point_v<opmath_t<OUT>>, double, opmath_t<OUT>>;

/// For each output element: acc = init, then acc = op(acc, x) for every
/// reduced input element x (converted to OUT as ATen's reductions convert
/// their input to the result dtype, then to ReduceAcc<OUT>), then
/// out = finish(acc, count) converted to OUT. `out` already has
/// plan.out_sizes(). Errors: kInvalidType naming `in` when its dtype is not
/// a real type.
template <typename OUT, typename Op, typename Finish>
Status apply_reduction(const NamedTensor& in, const NamedTensor& out, const ReductionPlan& plan,
                       ReduceAcc<OUT> init, const Op& op, const Finish& finish) {
  using Acc = ReduceAcc<OUT>;
  const LoadFn<OUT> load = get_load_fn<OUT>(in.tensor.scalar_type());
  if (load == nullptr) {
    return unsupported_dtype(in.name, in.tensor.scalar_type(), kRealTypeNames);
  }
  const char* in_data = static_cast<const char*>(in.tensor.const_data_ptr());
  const int64_t in_size = static_cast<int64_t>(in.tensor.element_size());
  OUT* out_data = out.tensor.mutable_data_ptr<OUT>();
  const int64_t count = plan.reduced_numel();
  plan.for_each_output(in.tensor, out.tensor, [&](int64_t in_base, int64_t out_offset) {
    Acc acc = init;
    plan.for_each_reduced(in.tensor, in_base, [&](int64_t offset) {
      acc = op(acc, static_cast<Acc>(load(in_data + offset * in_size)));
    });
    out_data[out_offset] = convert<OUT>(finish(acc, count));
  });
  return Error::kOk;
}

}  // namespace torchlight::portable

namespace torchlight::portable {

/// For scans and normalisations along one dim (cumsum, softmax): calls
/// f(in_base, out_base, length, in_stride, out_stride) once per line of
/// `in` along `dim` (already normalised; 0 for a 0-d tensor, whose one line
/// has length 1). `out` has in's shape, in any layout.
template <typename F>
void for_each_line(const Tensor& in, const Tensor& out, size_t dim, F&& f) {
  if (in.dim() == 0) {
    f(int64_t{0}, int64_t{0}, int64_t{1}, int64_t{0}, int64_t{0});
    return;
  }
  int64_t sizes[kMaxTensorDim] = {};
  int64_t in_strides[kMaxTensorDim] = {};
  int64_t out_strides[kMaxTensorDim] = {};
  size_t n = 0;
  for (size_t d = 0; d < in.dim(); ++d) {
    if (d == dim) continue;
    sizes[n] = in.size(d);
    in_strides[n] = in.strides()[d];
    out_strides[n++] = out.strides()[d];
  }
  const int64_t length = in.size(dim);
  const int64_t in_stride = in.strides()[dim];
  const int64_t out_stride = out.strides()[dim];
  internal::walk_dims(n, sizes, in_strides, out_strides, 0, 0, [&](int64_t a, int64_t b) {
    f(a, b, length, in_stride, out_stride);
  });
}

}  // namespace torchlight::portable
