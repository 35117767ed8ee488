// Creation ops that fill out with one value: aten::full.out,
// full_like.out, zeros.out, ones.out, zeros_like.out, ones_like.out,
// scalar_tensor.out and fill.Scalar_out / fill.Tensor_out (self's shape;
// the Tensor form takes a 0-d tensor as the value); and aten::empty.out,
// empty_like.out and empty_strided.out, which only resize (out's dim order
// stands for the strides). The value must fit out's dtype as ATen's fill_ requires (an Int
// in range, a finite Double in range for integers...; see
// check_scalar_fits) and is then converted to it. Every dtype.
//
// Prepare (at load) checks what the program fixes: out's dtype, the
// memory_format, the rank of the shape (the size list's length, or the
// `like` tensor's rank, must be out's), and for fill.Tensor the value's rank
// and dtype. It installs an eval for out's dtype that resizes out and fills
// it; a value that does not fit, a size a dynamic dim made invalid or an
// out that cannot take the shape go to the reference eval, which reports it.
#include <algorithm>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/dense_copy.h"
#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/element_scalar.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/memory_format.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/strided_view.h"
#include "kernels/portable/util/tensor_checks.h"
#include "kernels/portable/util/type_promotion.h"

namespace torchlight::portable {

namespace {

// Resizes out to `sizes` and writes `value` (named `value_name`) into every
// element. The kernel name is added by the caller.
Status fill_out(const NamedTensor& out, Span<const SizesType> sizes, const EValue& value,
                const char* value_name) {
  const ScalarType type = out.tensor.scalar_type();
  if (!visit_real_type(type, [](auto) {})) return unsupported_dtype(out.name, type, kRealTypeNames);
  TL_RETURN_IF_ERROR(resize_tensor(out, sizes));
  TL_RETURN_IF_ERROR(check_scalar_fits(value, type, value_name));
  TL_RETURN_IF_ERROR(check_has_data(out));
  visit_real_type(type, [&](auto tag) {
    using CTYPE = typename decltype(tag)::type;
    const CTYPE element = scalar_to<CTYPE>(value);
    fill_view(StridedView(out.tensor), &element);
  });
  return Error::kOk;
}

Status fill_sized(Span<EValue*> args, size_t out_index, const EValue& value,
                  const char* value_name) {
  ShapeBuffer shape;
  TL_RETURN_IF_ERROR(sizes_from_list(args[0]->to_int_list(), "size", &shape));
  return fill_out({args[out_index]->to_tensor(), "out"}, shape.span(), value, value_name);
}

}  // namespace

void full_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_sized(args, 2, *args[1], "fill_value"));
}

void full_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 4, *args[3]);
  const NamedTensor out{args[3]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[2], out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out(out, args[0]->to_tensor().sizes(), *args[1], "fill_value"));
}

void zeros_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_sized(args, 1, EValue(int64_t{0}), "value"));
}

void ones_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_sized(args, 1, EValue(int64_t{1}), "value"));
}

void zeros_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out(out, args[0]->to_tensor().sizes(), EValue(int64_t{0}), "value"));
}

void ones_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out(out, args[0]->to_tensor().sizes(), EValue(int64_t{1}), "value"));
}

void scalar_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 2, *args[1]);
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_out({args[1]->to_tensor(), "out"}, {}, *args[0], "s"));
}

void fill_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, fill_out(out, args[0]->to_tensor().sizes(), *args[1], "value"));
}

void fill_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor value{args[1]->to_tensor(), "value"};
  TL_KERNEL_CHECK(ctx, value.tensor.dim() == 0, Error::kInvalidArgument,
                  "argument 'value' is %zu-D; fill takes a 0-d value tensor", value.tensor.dim());
  EValue scalar;
  TL_KERNEL_RETURN_IF_ERROR(ctx, element_to_scalar(value, 0, &scalar));
  TL_KERNEL_RETURN_IF_ERROR(
      ctx, fill_out({args[2]->to_tensor(), "out"}, args[0]->to_tensor().sizes(), scalar, "value"));
}

void empty_strided_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  const Span<const int64_t> size = args[0]->to_int_list();
  const Span<const int64_t> stride = args[1]->to_int_list();
  TL_KERNEL_CHECK(ctx, stride.size() == size.size(), Error::kInvalidArgument,
                  "argument 'stride' has %zu entries but 'size' has %zu", stride.size(),
                  size.size());
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(size, "size", &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
}

void empty_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  ShapeBuffer shape;
  TL_KERNEL_RETURN_IF_ERROR(ctx, sizes_from_list(args[0]->to_int_list(), "size", &shape));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, shape.span()));
}

void empty_like_out(KernelContext& ctx, Span<EValue*> args) {
  set_return(args, 3, *args[2]);
  const NamedTensor out{args[2]->to_tensor(), "out"};
  TL_KERNEL_RETURN_IF_ERROR(ctx, check_memory_format(*args[1], out));
  TL_KERNEL_RETURN_IF_ERROR(ctx, resize_tensor(out, args[0]->to_tensor().sizes()));
}

namespace {

// Where a fill op finds the shape of out, its value and out.
struct FillArgs {
  int size_list;  // Position of the int[] `size`, or -1.
  int like;       // Position of the tensor whose shape out takes, or -1 (with
                  // no size list either: out is 0-d).
  int value;      // Position of the Scalar value, or -1 for `constant`.
  int64_t constant;
  bool value_is_tensor;  // fill.Tensor: a 0-d tensor holds the value.
  size_t out;
};

constexpr FillArgs kFull{0, -1, 1, 0, false, 2};
constexpr FillArgs kZeros{0, -1, -1, 0, false, 1};
constexpr FillArgs kOnes{0, -1, -1, 1, false, 1};
constexpr FillArgs kFullLike{-1, 0, 1, 0, false, 3};
constexpr FillArgs kZerosLike{-1, 0, -1, 0, false, 2};
constexpr FillArgs kOnesLike{-1, 0, -1, 1, false, 2};
constexpr FillArgs kScalarTensor{-1, -1, 0, 0, false, 1};
constexpr FillArgs kFillScalar{-1, 0, 1, 0, false, 2};
constexpr FillArgs kFillTensor{-1, 0, 1, 0, true, 2};
// The empty family only resizes (no value).
constexpr FillArgs kEmpty{0, -1, -1, 0, false, 2};
constexpr FillArgs kEmptyLike{-1, 0, -1, 0, false, 2};
constexpr FillArgs kEmptyStrided{0, -1, -1, 0, false, 2};

// Gives out the shape kArgs names; false when it cannot (the reference
// eval then reports why).
template <const FillArgs& kArgs>
bool fit_shape(Span<EValue*> args, const Tensor& out) {
  if constexpr (kArgs.size_list >= 0) {
    const Span<const int64_t> list = args[kArgs.size_list]->to_int_list();
    if (list.size() != out.dim()) return false;
    SizesType sizes[kMaxTensorDim];
    for (size_t d = 0; d < list.size(); ++d) {
      if (list[d] < 0 || list[d] > INT32_MAX) return false;
      sizes[d] = static_cast<SizesType>(list[d]);
    }
    return dense_copy::fit_sizes({sizes, list.size()}, out);
  } else if constexpr (kArgs.like >= 0) {
    return dense_path::fit_out(args[kArgs.like]->to_tensor(), out);
  } else {
    return out.dim() == 0;
  }
}

// The value as T when it fits T as the reference requires.
template <typename T, const FillArgs& kArgs>
bool value_as(Span<EValue*> args, ScalarType type, T* element) {
  if constexpr (kArgs.value < 0) {
    *element = scalar_to<T>(EValue(kArgs.constant));
    return true;
  } else if constexpr (kArgs.value_is_tensor) {
    EValue scalar;
    const Tensor value = args[kArgs.value]->to_tensor();
    if (value.const_data_ptr() == nullptr ||
        !element_to_scalar({value, "value"}, 0, &scalar).ok() || !scalar_fits(scalar, type)) {
      return false;
    }
    *element = scalar_to<T>(scalar);
    return true;
  } else {
    const EValue& value = *args[kArgs.value];
    if (!scalar_fits(value, type)) return false;
    *element = scalar_to<T>(value);
    return true;
  }
}

// out (packed in its dim order, of dtype T) resized and filled.
template <typename T, const FillArgs& kArgs, KernelFunction reference>
void fill_eval(KernelContext& ctx, Span<EValue*> args) {
  const Tensor out = args[kArgs.out]->to_tensor();
  T element;
  if (!value_as<T, kArgs>(args, out.scalar_type(), &element) || !fit_shape<kArgs>(args, out)) {
    return reference(ctx, args);
  }
  T* data = out.mutable_data_ptr<T>();
  const int64_t n = out.numel();
  if (n > 0 && data == nullptr) return reference(ctx, args);
  std::fill(data, data + n, element);
  set_return(args, kArgs.out + 1, *args[kArgs.out]);
}

// The empty family: out only takes the shape.
template <const FillArgs& kArgs, KernelFunction reference>
void resize_eval(KernelContext& ctx, Span<EValue*> args) {
  if (!fit_shape<kArgs>(args, args[kArgs.out]->to_tensor())) return reference(ctx, args);
  set_return(args, kArgs.out + 1, *args[kArgs.out]);
}

// The shape's rank against out's: both fixed by the program.
template <const FillArgs& kArgs>
Status check_rank(Span<EValue*> args) {
  const size_t rank = args[kArgs.out]->to_tensor().dim();
  if constexpr (kArgs.size_list >= 0) {
    const size_t entries = args[kArgs.size_list]->to_int_list().size();
    TL_CHECK_OR_RETURN(entries == rank, Error::kInvalidArgument,
                       "argument 'size' has %zu entries, but 'out' is %zu-D", entries, rank);
  } else if constexpr (kArgs.like >= 0) {
    const size_t like = args[kArgs.like]->to_tensor().dim();
    TL_CHECK_OR_RETURN(like == rank, Error::kInvalidArgument,
                       "argument 'self' is %zu-D, but 'out' is %zu-D", like, rank);
  } else {
    TL_CHECK_OR_RETURN(rank == 0, Error::kInvalidArgument,
                       "argument 'out' is %zu-D; a scalar tensor is 0-d", rank);
  }
  return Error::kOk;
}

// `memory_format`: the position of the MemoryFormat? argument, or -1.
template <const FillArgs& kArgs, KernelFunction reference>
Status prepare_fill(Span<EValue*> args, int memory_format, PreparedCall* call) {
  const NamedTensor out{args[kArgs.out]->to_tensor(), "out"};
  const ScalarType type = out.tensor.scalar_type();
  if (memory_format >= 0) TL_RETURN_IF_ERROR(check_memory_format(*args[memory_format], out));
  TL_RETURN_IF_ERROR(check_rank<kArgs>(args));
  if constexpr (kArgs.value_is_tensor) {
    const NamedTensor value{args[kArgs.value]->to_tensor(), "value"};
    TL_CHECK_OR_RETURN(value.tensor.dim() == 0, Error::kInvalidArgument,
                       "argument 'value' is %zu-D; fill takes a 0-d value tensor",
                       value.tensor.dim());
    if (!visit_real_type(value.tensor.scalar_type(), [](auto) {})) {
      return unsupported_dtype(value.name, value.tensor.scalar_type(), kRealTypeNames);
    }
  }
  KernelFunction eval = nullptr;
  const bool supported = visit_real_type(type, [&](auto tag) {
    eval = &fill_eval<typename decltype(tag)::type, kArgs, reference>;
  });
  if (!supported) return unsupported_dtype(out.name, type, kRealTypeNames);
  if (dense_path::is_packed(out.tensor)) call->eval = eval;  // Else the strided reference.
  return Error::kOk;
}

template <const FillArgs& kArgs, KernelFunction reference>
Status prepare_resize(Span<EValue*> args, int memory_format, PreparedCall* call) {
  if (memory_format >= 0) {
    TL_RETURN_IF_ERROR(check_memory_format(*args[memory_format], {args[kArgs.out]->to_tensor(), "out"}));
  }
  TL_RETURN_IF_ERROR(check_rank<kArgs>(args));
  call->eval = &resize_eval<kArgs, reference>;
  return Error::kOk;
}

}  // namespace

Status full_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kFull, &full_out>(args, -1, call);
}
Status zeros_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kZeros, &zeros_out>(args, -1, call);
}
Status ones_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kOnes, &ones_out>(args, -1, call);
}
Status full_like_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kFullLike, &full_like_out>(args, 2, call);
}
Status zeros_like_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kZerosLike, &zeros_like_out>(args, 1, call);
}
Status ones_like_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kOnesLike, &ones_like_out>(args, 1, call);
}
Status scalar_tensor_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kScalarTensor, &scalar_tensor_out>(args, -1, call);
}
Status fill_scalar_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kFillScalar, &fill_scalar_out>(args, -1, call);
}
Status fill_tensor_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_fill<kFillTensor, &fill_tensor_out>(args, -1, call);
}
Status empty_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_resize<kEmpty, &empty_out>(args, 1, call);
}
Status empty_like_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  return prepare_resize<kEmptyLike, &empty_like_out>(args, 1, call);
}
Status empty_strided_out_prepare(PrepareContext&, Span<EValue*> args, PreparedCall* call) {
  const size_t size = args[0]->to_int_list().size();
  const size_t stride = args[1]->to_int_list().size();
  TL_CHECK_OR_RETURN(stride == size, Error::kInvalidArgument,
                     "argument 'stride' has %zu entries but 'size' has %zu", stride, size);
  return prepare_resize<kEmptyStrided, &empty_strided_out>(args, -1, call);
}

}  // namespace torchlight::portable
