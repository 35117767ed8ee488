// Elementwise kernels: out = op(inputs...) with broadcasting, any real input
// and output dtypes, and ATen's conversions.
//
// The kernel picks the common dtype (type_promotion.h), dispatches on it
// (dtype_dispatch.h) and calls apply_*_elementwise<CTYPE_COMMON>. Each input
// element is converted to the common dtype and then to its opmath type, `op`
// computes in opmath, and the result is rounded to the common dtype and then
// converted to out's dtype: exactly ATen's TensorIterator pipeline. When every
// operand has the common dtype, elements are read and written directly;
// otherwise loads and stores go through one function pointer per operand
// dtype, so a kernel instantiates its arithmetic twice per common dtype
// rather than once per combination of operand dtypes.
//
// Inputs and out keep their own strides (any dim order). out may be the same
// memory as an input with the same layout (in-place); partial overlap is not
// supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"

namespace torchlight::portable {

/// Reads one element of some dtype and returns it as opmath_t<CTYPE_COMMON>.
template <typename CTYPE_COMMON>
using LoadFn = opmath_t<CTYPE_COMMON> (*)(const void* element);
/// Writes an opmath_t<CTYPE_COMMON> result as one element of some dtype.
template <typename CTYPE_COMMON>
using StoreFn = void (*)(opmath_t<CTYPE_COMMON> value, void* element);

namespace internal {

// Element memory is read and written with memcpy: tensor data need not be
// aligned for its type, and a bool byte other than 0/1 must not be loaded
// as bool.
template <typename T>
T read_element(const void* p) {
  if constexpr (std::is_same_v<T, bool>) {
    uint8_t byte;
    std::memcpy(&byte, p, 1);
    return byte != 0;
  } else {
    T value;
    std::memcpy(&value, p, sizeof(T));
    return value;
  }
}

template <typename T>
void write_element(T value, void* p) {
  std::memcpy(p, &value, sizeof(T));
}

template <typename From, typename Common>
opmath_t<Common> load_as(const void* element) {
  return convert<opmath_t<Common>>(convert<Common>(read_element<From>(element)));
}

template <typename Common, typename To>
void store_as(opmath_t<Common> value, void* element) {
  write_element<To>(convert<To>(convert<Common>(value)), element);
}

// Same-dtype fast path: every operand already has the common dtype, so
// elements are read directly instead of through a LoadFn.
template <typename Common, size_t N, typename Op, size_t... I>
opmath_t<Common> call_op_same_dtype(const Op& op, const char* const* data,
                                    const int64_t* offsets, std::index_sequence<I...>) {
  return op(convert<opmath_t<Common>>(read_element<Common>(
      data[I] + offsets[I] * static_cast<int64_t>(sizeof(Common))))...);
}

template <typename Common, size_t N, typename Op, size_t... I>
opmath_t<Common> call_op(const Op& op, const LoadFn<Common>* loads, const char* const* data,
                         const size_t* element_sizes, const int64_t* offsets,
                         std::index_sequence<I...>) {
  return op(loads[I](data[I] + offsets[I] * static_cast<int64_t>(element_sizes[I]))...);
}

}  // namespace internal

/// The loader from `type` (a real dtype) to CTYPE_COMMON's opmath type, or
/// null for any other dtype.
template <typename CTYPE_COMMON>
LoadFn<CTYPE_COMMON> get_load_fn(ScalarType type) {
  LoadFn<CTYPE_COMMON> fn = nullptr;
  visit_real_type(type, [&](auto tag) {
    fn = &internal::load_as<typename decltype(tag)::type, CTYPE_COMMON>;
  });
  return fn;
}

/// The storer from CTYPE_COMMON's opmath type to `type`, or null.
template <typename CTYPE_COMMON>
StoreFn<CTYPE_COMMON> get_store_fn(ScalarType type) {
  StoreFn<CTYPE_COMMON> fn = nullptr;
  visit_real_type(type, [&](auto tag) {
    fn = &internal::store_as<CTYPE_COMMON, typename decltype(tag)::type>;
  });
  return fn;
}

/// out[i] = op(inputs[0][i], ..., inputs[N-1][i]) over out's shape, each
/// input broadcast to it. `op` takes N opmath_t<CTYPE_COMMON> and returns
/// one. The caller has already resized out (out_resize.h) and checked that
/// the common dtype may be cast to out's (check_out_dtype).
/// Errors: kInvalidType for an operand whose dtype is not a real type;
/// kInvalidArgument for an input that does not broadcast to out's shape, or
/// an operand with elements but no data; each names the argument.
template <typename CTYPE_COMMON, size_t N, typename Op>
Status apply_elementwise(const NamedTensor (&inputs)[N], const NamedTensor& out, const Op& op) {
  using Compute = opmath_t<CTYPE_COMMON>;
  static_assert(N + 1 <= BroadcastIndexer::kMaxOperands, "too many operands");

  NamedTensor operands[N + 1] = {};
  operands[0] = out;
  for (size_t i = 0; i < N; ++i) operands[i + 1] = inputs[i];

  LoadFn<CTYPE_COMMON> loads[N];
  const char* in_data[N];
  size_t in_sizes[N];
  for (size_t i = 0; i < N; ++i) {
    const Tensor& t = inputs[i].tensor;
    loads[i] = get_load_fn<CTYPE_COMMON>(t.scalar_type());
    if (loads[i] == nullptr) {
      return unsupported_dtype(inputs[i].name, t.scalar_type(), kRealTypeNames);
    }
    in_data[i] = t.const_data_ptr<char>();
    in_sizes[i] = t.element_size();
  }
  const StoreFn<CTYPE_COMMON> store = get_store_fn<CTYPE_COMMON>(out.tensor.scalar_type());
  if (store == nullptr) return unsupported_dtype(out.name, out.tensor.scalar_type(), kRealTypeNames);
  char* out_data = out.tensor.mutable_data_ptr<char>();
  const int64_t out_size = static_cast<int64_t>(out.tensor.element_size());

  BroadcastIndexer indexer;
  TL_RETURN_IF_ERROR(indexer.init(out.tensor.sizes(), Span<const NamedTensor>(operands)));
  if (indexer.numel() == 0) return Error::kOk;
  for (const NamedTensor& operand : operands) {
    TL_CHECK_OR_RETURN(operand.tensor.const_data_ptr() != nullptr, Error::kInvalidArgument,
                       "argument '%s' has %lld elements but no data", operand.name,
                       static_cast<long long>(operand.tensor.numel()));
  }

  constexpr ScalarType kCommon = kScalarTypeOf<CTYPE_COMMON>;
  bool same_dtype = out.tensor.scalar_type() == kCommon;
  for (const NamedTensor& input : inputs) {
    same_dtype = same_dtype && input.tensor.scalar_type() == kCommon;
  }
  if (same_dtype) {
    indexer.for_each([&](const int64_t* offsets) {
      const Compute result = internal::call_op_same_dtype<CTYPE_COMMON, N>(
          op, in_data, offsets + 1, std::make_index_sequence<N>{});
      internal::write_element<CTYPE_COMMON>(convert<CTYPE_COMMON>(result),
                                            out_data + offsets[0] * out_size);
    });
    return Error::kOk;
  }
  indexer.for_each([&](const int64_t* offsets) {
    const Compute result = internal::call_op<CTYPE_COMMON, N>(
        op, loads, in_data, in_sizes, offsets + 1, std::make_index_sequence<N>{});
    store(result, out_data + offsets[0] * out_size);
  });
  return Error::kOk;
}

/// out = op(in), in broadcast to out's shape. See apply_elementwise.
template <typename CTYPE_COMMON, typename Op>
Status apply_unary_elementwise(const NamedTensor& in, const NamedTensor& out, const Op& op) {
  const NamedTensor inputs[1] = {in};
  return apply_elementwise<CTYPE_COMMON>(inputs, out, op);
}

/// out = op(a, b), a and b broadcast to out's shape. See apply_elementwise.
template <typename CTYPE_COMMON, typename Op>
Status apply_binary_elementwise(const NamedTensor& a, const NamedTensor& b,
                                const NamedTensor& out, const Op& op) {
  const NamedTensor inputs[2] = {a, b};
  return apply_elementwise<CTYPE_COMMON>(inputs, out, op);
}

/// out = op(a, b, c), each broadcast to out's shape. See apply_elementwise.
template <typename CTYPE_COMMON, typename Op>
Status apply_ternary_elementwise(const NamedTensor& a, const NamedTensor& b,
                                 const NamedTensor& c, const NamedTensor& out, const Op& op) {
  const NamedTensor inputs[3] = {a, b, c};
  return apply_elementwise<CTYPE_COMMON>(inputs, out, op);
}

}  // namespace torchlight::portable
