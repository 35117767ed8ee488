// aten::gather.out: out[i][j][k] = self[i][index[i][j][k]][k] (for dim 1),
// out having index's shape. index is int64 with self's rank; outside `dim`
// it may not be larger than self; every value must be in [0, self.size(dim))
// and is checked before it is used. Any dtype.
//
// The prepare step checks the dim and the dtypes at load; for dense
// tensors of rank 1 or more it installs an eval that copies elements of a
// fixed size along index's rows, after checking every index value, and
// hands anything else (shapes a dynamic dim made invalid, a value out of
// range, overlapping memory) to the reference.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/portable/util/scatter_gather.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void gather_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 5, *args[4]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor index{args[2]->to_tensor(), "index"};
  const NamedTensor out{args[4]->to_tensor(), "out"};
  size_t dim = 0;
  TL_KERNEL_RETURN_IF_ERROR(ctx, wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_scatter_gather_shapes(self, dim, index, nullptr));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, index.tensor.sizes()));
  if (index.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(index));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  const int64_t size = static_cast<int64_t>(self.tensor.element_size());
  const char* from = self.tensor.const_data_ptr<char>();
  char* to = out.tensor.mutable_data_ptr<char>();
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, for_each_scatter_gather(self.tensor, dim, index.tensor, out.tensor,
                                   [&](int64_t self_at, int64_t out_at) {
                                     std::memcpy(to + out_at * size, from + self_at * size,
                                                 static_cast<size_t>(size));
                                   }));
}

namespace {

// The prepared eval for dense tensors whose elements are kSize bytes. out
// is dense with index's shape, so element i of index fills element i of
// out; the walk keeps self's offset for index's coordinates outside `dim`.
template <size_t kSize>
void gather_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor self = args[0]->to_tensor();
  const Tensor index = args[2]->to_tensor();
  const Tensor out = args[4]->to_tensor();
  const size_t rank = self.dim();
  const int64_t wrapped = args[1]->to_int() < 0 ? args[1]->to_int() + static_cast<int64_t>(rank)
                                                : args[1]->to_int();
  if (wrapped < 0 || wrapped >= static_cast<int64_t>(rank) || index.dim() != rank) {
    return gather_out(ctx, args);
  }
  const size_t dim = static_cast<size_t>(wrapped);
  for (size_t d = 0; d < rank; ++d) {
    if (d != dim && index.size(d) > self.size(d)) return gather_out(ctx, args);
  }
  if (!dense_path::fit_out(index, out)) return gather_out(ctx, args);
  const int64_t n = index.numel();
  if (n == 0) return set_return(args, 5, *args[4]);
  const char* from = static_cast<const char*>(self.const_data_ptr());
  const int64_t* at = index.const_data_ptr<int64_t>();
  char* to = static_cast<char*>(out.mutable_data_ptr());
  if (from == nullptr || at == nullptr || to == nullptr || storage_overlaps(out, index) ||
      self.numel() == 0) {
    return gather_out(ctx, args);
  }
  const uint64_t size_dim = static_cast<uint64_t>(self.size(dim));
  for (int64_t i = 0; i < n; ++i) {
    if (static_cast<uint64_t>(at[i]) >= size_dim) return gather_out(ctx, args);
  }
  set_return(args, 5, *args[4]);
  const int64_t stride_dim = self.strides()[dim];
  const int64_t row = index.size(rank - 1);
  int64_t coord[kMaxTensorDim] = {};
  int64_t base = 0;  // self's offset of the current row, without `dim`.
  for (int64_t i = 0; i < n; i += row) {
    const bool along_row = dim == rank - 1;
    for (int64_t k = 0; k < row; ++k) {
      const int64_t from_at = base + (along_row ? 0 : k) + at[i + k] * stride_dim;
      std::memcpy(to + (i + k) * static_cast<int64_t>(kSize),
                  from + from_at * static_cast<int64_t>(kSize), kSize);
    }
    for (size_t d = rank - 1; d-- > 0;) {
      const int64_t step = d == dim ? 0 : self.strides()[d];
      if (++coord[d] < index.size(d)) {
        base += step;
        break;
      }
      base -= step * (index.size(d) - 1);
      coord[d] = 0;
    }
  }
}

}  // namespace

// `dim`, index's dtype and out's dtype are the program's: checked at load,
// with the reference's messages. The shapes and index values may change
// with dynamic dims, so the eval keeps checking those.
Status gather_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor self{args[0]->to_tensor(), "self"};
  size_t dim = 0;
  TL_RETURN_IF_ERROR(wrap_dim(args[1]->to_int(), self.tensor.dim(), "dim", &dim));
  const Tensor index = args[2]->to_tensor();
  TL_RETURN_IF_ERROR(check_index_dtype({index, "index"}, /*allow_int32=*/false));
  const Tensor out = args[4]->to_tensor();
  TL_RETURN_IF_ERROR(check_same_dtype({out, "out"}, self.tensor.scalar_type(), "self"));
  if (self.tensor.dim() == 0 || !dense_path::is_dense(self.tensor) ||
      !dense_path::is_dense(index) || !dense_path::is_dense(out)) {
    return Error::kOk;
  }
  switch (self.tensor.element_size()) {
    case 1: call->eval = &gather_dense_eval<1>; break;
    case 2: call->eval = &gather_dense_eval<2>; break;
    case 4: call->eval = &gather_dense_eval<4>; break;
    case 8: call->eval = &gather_dense_eval<8>; break;
    default: break;
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
