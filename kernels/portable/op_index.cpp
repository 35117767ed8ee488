// aten::index.Tensor_out: self[indices] with ATen's advanced indexing
// (util/advanced_index.h): optional int64/int32 index tensors that
// broadcast together, bool/uint8 masks, negative indices counted from the
// end. A mask makes the result's size depend on the data, so out is resized
// at run time. Every index is checked before use. Any dtype.
#include <cstring>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/advanced_index.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

void index_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor self{args[0]->to_tensor(), "self"};
  const NamedTensor out{args[2]->to_tensor(), "out"};
  AdvancedIndex index;
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.init(self.tensor, args[1]->to_tensor_list(), "indices"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_same_dtype(out, self.tensor.scalar_type(), "self"));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, index.shape()));
  if (out.tensor.numel() == 0) return;
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(self));
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_has_data(out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, index.check_no_overlap_with(out));
  const int64_t size = static_cast<int64_t>(self.tensor.element_size());
  const char* from = self.tensor.const_data_ptr<char>();
  char* to = out.tensor.mutable_data_ptr<char>();
  int64_t out_strides[kMaxTensorDim];
  for (size_t d = 0; d < out.tensor.dim(); ++d) out_strides[d] = out.tensor.strides()[d];
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, index.for_each(self.tensor.strides(), {out_strides, out.tensor.dim()},
                          [&](int64_t self_at, int64_t out_at) {
                            std::memcpy(to + out_at * size, from + self_at * size,
                                        static_cast<size_t>(size));
                          }));
}

}  // namespace torchlight::portable
