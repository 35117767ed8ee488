// aten::embedding.out: out[i..., :] = weight[indices[i...], :] (nn.Embedding;
// a GPT's token and position embeddings).
//
// ATen semantics: weight [V, D] of any dtype; indices int32 or int64 of any
// shape (0-d included); out [*indices.shape, D] with weight's dtype. Every
// index must be in [0, V) (no negative wrap-around); a bad one fails before
// anything is written. padding_idx, scale_grad_by_freq and sparse only
// affect gradients and are ignored. Rows are copied as raw elements, so any
// dtype and any layout of weight, indices and out work.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/dense_path.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/linear_offsets.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/overlap.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void embedding_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 6, *args[5]);
  const NamedTensor weight{args[0]->to_tensor(), "weight"};
  const NamedTensor indices{args[1]->to_tensor(), "indices"};
  const NamedTensor out{args[5]->to_tensor(), "out"};

  TL_KERNEL_RETURN_IF_ERROR(ctx, check_rank(weight, 2, "a matrix [num_embeddings, embedding_dim]"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_index_dtype(indices, /*allow_int32=*/true));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, weight.tensor.scalar_type(), "weight"));
  const size_t index_dims = indices.tensor.dim();
  TL_KERNEL_CHECK(ctx, index_dims + 1 <= kMaxTensorDim, Error::kInvalidArgument,
                  "argument 'indices' has %zu dimensions; out would have more than %zu",
                  index_dims, kMaxTensorDim);
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d < index_dims; ++d) sizes[d] = indices.tensor.size(d);
  sizes[index_dims] = weight.tensor.size(1);
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, {sizes, index_dims + 1}));
  for (const NamedTensor* t : {&weight, &indices, &out}) {
    TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(*t));
  }
  // Indices are read again while rows are written: an out planned over them
  // would turn copied weights into unchecked row numbers.
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_no_overlap(out, indices));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_no_overlap(out, weight));

  const int64_t rows = weight.tensor.size(0);
  const int64_t count = indices.tensor.numel();
  const LinearOffsets index_at(indices.tensor);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = load_index(indices.tensor, index_at.at(i));
    TL_KERNEL_CHECK(ctx, index >= 0 && index < rows, Error::kInvalidArgument,
                    "argument 'indices' holds %lld at position %lld, out of range for argument "
                    "'weight' with %lld rows",
                    static_cast<long long>(index), static_cast<long long>(i),
                    static_cast<long long>(rows));
  }
  if (out.tensor.numel() == 0) return;

  const int64_t dim = weight.tensor.size(1);
  const size_t element = weight.tensor.element_size();
  const int64_t w_row = weight.tensor.strides()[0];
  const int64_t w_col = weight.tensor.strides()[1];
  const int64_t o_col = out.tensor.strides()[index_dims];
  const LinearOffsets out_at(out.tensor, 0, index_dims);
  const char* src_base = weight.tensor.const_data_ptr<char>();
  char* dst_base = out.tensor.mutable_data_ptr<char>();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t index = load_index(indices.tensor, index_at.at(i));
    const char* src = src_base + index * w_row * static_cast<int64_t>(element);
    char* dst = dst_base + out_at.at(i) * static_cast<int64_t>(element);
    if (w_col == 1 && o_col == 1) {
      std::memcpy(dst, src, static_cast<size_t>(dim) * element);
      continue;
    }
    for (int64_t j = 0; j < dim; ++j) {
      std::memcpy(dst + j * o_col * static_cast<int64_t>(element),
                  src + j * w_col * static_cast<int64_t>(element), element);
    }
  }
}

namespace {

// The prepared eval: weight, indices and out dense (checked at load) and
// indices of type Index, so each row is one memcpy. Every index is checked
// before anything is written, as the reference does; a bad one, a failed
// resize, missing data or overlapping memory goes to the reference, which
// reports it.
template <typename Index>
void embedding_dense_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor weight = args[0]->to_tensor();
  const Tensor indices = args[1]->to_tensor();
  const Tensor out = args[5]->to_tensor();
  const size_t index_dims = indices.dim();
  SizesType sizes[kMaxTensorDim];
  for (size_t d = 0; d < index_dims; ++d) sizes[d] = indices.size(d);
  sizes[index_dims] = weight.size(1);
  if (!dense_copy::fit_sizes({sizes, index_dims + 1}, out)) return embedding_out(ctx, args);
  const int64_t count = indices.numel();
  if (count == 0) {
    set_return(args, 6, *args[5]);
    return;
  }
  const Index* index = indices.const_data_ptr<Index>();
  if (index == nullptr) return embedding_out(ctx, args);
  const int64_t rows = weight.size(0);
  for (int64_t i = 0; i < count; ++i) {
    if (index[i] < 0 || index[i] >= rows) return embedding_out(ctx, args);
  }
  if (out.numel() > 0) {
    const char* src = weight.const_data_ptr<char>();
    char* dst = out.mutable_data_ptr<char>();
    if (src == nullptr || dst == nullptr || storage_overlaps(out, indices) ||
        storage_overlaps(out, weight)) {
      return embedding_out(ctx, args);
    }
    const size_t row = static_cast<size_t>(weight.size(1)) * weight.element_size();
    for (int64_t i = 0; i < count; ++i, dst += row) {
      std::memcpy(dst, src + static_cast<size_t>(index[i]) * row, row);
    }
  }
  set_return(args, 6, *args[5]);
}

}  // namespace

// Weight's rank, the dtypes and the number of index dims are the
// program's: checked at load with the reference's messages.
Status embedding_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const NamedTensor weight{args[0]->to_tensor(), "weight"};
  const NamedTensor indices{args[1]->to_tensor(), "indices"};
  const NamedTensor out{args[5]->to_tensor(), "out"};
  TL_RETURN_IF_ERROR(check_rank(weight, 2, "a matrix [num_embeddings, embedding_dim]"));
  TL_RETURN_IF_ERROR(check_index_dtype(indices, /*allow_int32=*/true));
  TL_RETURN_IF_ERROR(check_same_dtype(out, weight.tensor.scalar_type(), "weight"));
  TL_CHECK_OR_RETURN(indices.tensor.dim() + 1 <= kMaxTensorDim, Error::kInvalidArgument,
                     "argument 'indices' has %zu dimensions; out would have more than %zu",
                     indices.tensor.dim(), kMaxTensorDim);
  if (!dense_path::is_dense(weight.tensor) || !dense_path::is_dense(indices.tensor) ||
      !dense_path::is_dense(out.tensor)) {
    return Error::kOk;
  }
  if (indices.tensor.scalar_type() == ScalarType::kLong) {
    call->eval = &embedding_dense_eval<int64_t>;
  } else {
    call->eval = &embedding_dense_eval<int32_t>;
  }
  return Error::kOk;
}

}  // namespace torchlight::portable
