// aten::tril.out and aten::triu.out: copy self, zeroing the elements above
// (tril) or below (triu) the given diagonal of each matrix in the last two
// dimensions.
//
// ATen semantics: self has at least 2 dimensions (leading ones are
// batches); any dtype; out must have exactly self's dtype and takes its
// shape. Element (i, j) is kept when j - i <= diagonal (tril) or
// j - i >= diagonal (triu); diagonal may be any integer. Prepare (at load)
// checks the dtypes and the rank; the eval checks only what a run decides.
#include <cstdint>
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype_set.h"
#include "kernels/portable/util/elementwise_spec.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"

namespace torchlight::portable {

namespace {

enum class Triangle { kLower, kUpper };

// What the program fixes: self's dtype and rank, out's dtype. Checked at
// load by prepare, and on every call by the reference eval.
Status check_triangle_args(Span<EValue*> args) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const ScalarType type = self.tensor.scalar_type();
  TL_CHECK_OR_RETURN(in_dtype_set(type, DtypeSet::kReal), Error::kInvalidType,
                     "argument 'self' has dtype %s, which is not supported (supported: %s)",
                     to_string(type), kRealTypeNames);
  const size_t dim = self.tensor.dim();
  TL_CHECK_OR_RETURN(dim >= 2, Error::kInvalidArgument,
                     "argument 'self' has %zu dimensions, expected at least 2", dim);
  return check_out_dtype_rule(type, out, OutDtypeRule::kSame);
}

// out resized to this run's self and written; after check_triangle_args.
template <Triangle triangle>
void triangle_shaped(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const int64_t diagonal = args[1]->to_int();
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const size_t dim = self.tensor.dim();
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, self.tensor.sizes()));

  const NamedTensor operands[] = {out, self};
  BroadcastIndexer indexer;
  TL_KERNEL_RETURN_IF_ERROR(ctx, indexer.init(self.tensor.sizes(), operands));
  if (indexer.numel() == 0) return;
  const char* in = self.tensor.const_data_ptr<char>();
  char* dst = out.tensor.mutable_data_ptr<char>();
  TL_KERNEL_CHECK(ctx, in != nullptr && dst != nullptr, Error::kInvalidArgument,
                  "argument '%s' has elements but no data", in == nullptr ? "self" : "out");

  const int64_t rows = self.tensor.size(dim - 2);
  const int64_t cols = self.tensor.size(dim - 1);
  const int64_t element_size = static_cast<int64_t>(self.tensor.element_size());
  // Row-major walk: (row, col) of the current element, advanced by hand.
  int64_t row = 0;
  int64_t col = 0;
  indexer.for_each([&](const int64_t* offsets) {
    const int64_t offset = col - row;
    const bool keep = triangle == Triangle::kLower ? offset <= diagonal : offset >= diagonal;
    char* to = dst + offsets[0] * element_size;
    if (keep) {
      std::memmove(to, in + offsets[1] * element_size, static_cast<size_t>(element_size));
    } else {
      std::memset(to, 0, static_cast<size_t>(element_size));  // Zero bits are 0 in every dtype.
    }
    if (++col == cols) {
      col = 0;
      if (++row == rows) row = 0;
    }
  });
}

template <Triangle triangle>
void triangle_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_triangle_args(args));
  triangle_shaped<triangle>(ctx, args);
}

}  // namespace

void tril_out(KernelContext& ctx, Span<EValue*> args) { triangle_out<Triangle::kLower>(ctx, args); }

void triu_out(KernelContext& ctx, Span<EValue*> args) { triangle_out<Triangle::kUpper>(ctx, args); }

Status tril_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_triangle_args(args));
  call->eval = &triangle_shaped<Triangle::kLower>;
  return Error::kOk;
}

Status triu_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  TL_RETURN_IF_ERROR(check_triangle_args(args));
  call->eval = &triangle_shaped<Triangle::kUpper>;
  return Error::kOk;
}

}  // namespace torchlight::portable
