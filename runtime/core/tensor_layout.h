// TensorLayout: what a NamedDataMap knows about a blob that holds a tensor
// (upstream's runtime/core/tensor_layout.h): dtype, sizes, dim order and
// byte count. The spans point into the map's own data, which must outlive
// the layout.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"

namespace torchlight {

class TensorLayout {
 public:
  /// A layout whose sizes and dim order agree: as many entries each, no
  /// negative size, every dim once in the dim order, a byte count that
  /// fits size_t. Errors: kInvalidArgument naming the first disagreement.
  static Result<TensorLayout> create(ScalarType scalar_type, Span<const int32_t> sizes,
                                     Span<const uint8_t> dim_order) {
    TL_CHECK_OR_RETURN(is_valid(scalar_type), Error::kInvalidArgument,
                       "tensor layout has an unknown dtype %d", static_cast<int>(scalar_type));
    TL_CHECK_OR_RETURN(sizes.size() == dim_order.size(), Error::kInvalidArgument,
                       "tensor layout has %zu sizes but %zu dim order entries", sizes.size(),
                       dim_order.size());
    uint32_t seen = 0;
    size_t nbytes = element_size(scalar_type);
    for (size_t d = 0; d < sizes.size(); ++d) {
      TL_CHECK_OR_RETURN(sizes[d] >= 0, Error::kInvalidArgument,
                         "tensor layout size %zu is negative (%d)", d, static_cast<int>(sizes[d]));
      TL_CHECK_OR_RETURN(dim_order[d] < sizes.size() && dim_order[d] < 32 &&
                             (seen & (1u << dim_order[d])) == 0,
                         Error::kInvalidArgument,
                         "tensor layout dim order entry %zu (%u) is out of range or repeated", d,
                         static_cast<unsigned>(dim_order[d]));
      seen |= 1u << dim_order[d];
      TL_CHECK_OR_RETURN(!__builtin_mul_overflow(nbytes, static_cast<size_t>(sizes[d]), &nbytes),
                         Error::kInvalidArgument, "tensor layout's byte count overflows");
    }
    return TensorLayout(scalar_type, sizes, dim_order, nbytes);
  }

  ScalarType scalar_type() const { return scalar_type_; }
  Span<const int32_t> sizes() const { return sizes_; }
  Span<const uint8_t> dim_order() const { return dim_order_; }
  /// Bytes of the whole tensor.
  size_t nbytes() const { return nbytes_; }

 private:
  TensorLayout(ScalarType scalar_type, Span<const int32_t> sizes, Span<const uint8_t> dim_order,
               size_t nbytes)
      : scalar_type_(scalar_type), sizes_(sizes), dim_order_(dim_order), nbytes_(nbytes) {}

  ScalarType scalar_type_;
  Span<const int32_t> sizes_;
  Span<const uint8_t> dim_order_;
  size_t nbytes_;
};

}  // namespace torchlight
