#include "kernels/portable/util/strided_view.h"

#include <cstring>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/out_resize.h"
#include "runtime/core/result.h"
#include "runtime/platform/assert.h"

namespace torchlight::portable {

StridedView::StridedView(const Tensor& tensor)
    : data_(tensor.mutable_data_ptr<char>()),
      element_size_(tensor.element_size()),
      dim_(tensor.dim()) {
  for (size_t d = 0; d < dim_; ++d) {
    sizes_[d] = tensor.sizes()[d];
    strides_[d] = tensor.strides()[d];
  }
}

int64_t StridedView::numel() const {
  int64_t n = 1;
  for (size_t d = 0; d < dim_; ++d) n *= sizes_[d];
  return n;
}

char* StridedView::first() const {
  return data_ == nullptr ? nullptr : data_ + offset_ * static_cast<int64_t>(element_size_);
}

void StridedView::select(size_t d, int64_t index) {
  TL_DEBUG_ASSERT(d < dim_ && index >= 0 && index < sizes_[d]);
  offset_ += index * strides_[d];
  remove(d);
}

void StridedView::remove(size_t d) {
  TL_DEBUG_ASSERT(d < dim_);
  for (size_t i = d + 1; i < dim_; ++i) {
    sizes_[i - 1] = sizes_[i];
    strides_[i - 1] = strides_[i];
  }
  --dim_;
}

void StridedView::narrow(size_t d, int64_t start, int64_t length, int64_t step) {
  TL_DEBUG_ASSERT(d < dim_ && start >= 0 && length >= 0 && step > 0);
  TL_DEBUG_ASSERT(length == 0 || start + (length - 1) * step < sizes_[d]);
  if (length > 0) offset_ += start * strides_[d];
  sizes_[d] = length;
  // The step only separates two elements: then step < size and the
  // product fits; a huge step taking one element must not overflow it.
  if (length > 1) strides_[d] *= step;
}

void StridedView::flip(size_t d) {
  TL_DEBUG_ASSERT(d < dim_);
  if (sizes_[d] > 0) offset_ += (sizes_[d] - 1) * strides_[d];
  strides_[d] = -strides_[d];
}

void StridedView::permute(const size_t* order) {
  int64_t sizes[kMaxDim];
  int64_t strides[kMaxDim];
  for (size_t i = 0; i < dim_; ++i) {
    TL_DEBUG_ASSERT(order[i] < dim_);
    sizes[i] = sizes_[order[i]];
    strides[i] = strides_[order[i]];
  }
  for (size_t i = 0; i < dim_; ++i) {
    sizes_[i] = sizes[i];
    strides_[i] = strides[i];
  }
}

void StridedView::insert(size_t d, int64_t size, int64_t stride) {
  TL_DEBUG_ASSERT(d <= dim_ && dim_ < kMaxDim && size >= 0);
  for (size_t i = dim_; i > d; --i) {
    sizes_[i] = sizes_[i - 1];
    strides_[i] = strides_[i - 1];
  }
  sizes_[d] = size;
  strides_[d] = stride;
  ++dim_;
}

void StridedView::split(size_t d, int64_t outer, int64_t inner) {
  TL_DEBUG_ASSERT(d < dim_ && outer * inner == sizes_[d]);
  const int64_t stride = strides_[d];
  insert(d, outer, stride * inner);
  sizes_[d + 1] = inner;
}

void StridedView::set(size_t d, int64_t size, int64_t stride) {
  TL_DEBUG_ASSERT(d < dim_ && size >= 0);
  sizes_[d] = size;
  strides_[d] = stride;
}

void StridedView::broadcast_to(Span<const SizesType> shape) {
  TL_DEBUG_ASSERT(shape.size() >= dim_ && shape.size() <= kMaxDim);
  while (dim_ < shape.size()) insert(0, 1, 0);
  for (size_t d = 0; d < dim_; ++d) {
    if (sizes_[d] != shape[d]) {
      TL_DEBUG_ASSERT(sizes_[d] == 1);
      sizes_[d] = shape[d];
      strides_[d] = 0;
    }
  }
}

void StridedView::sizes(SizesType* out) const {
  TL_DEBUG_ASSERT(dim_ <= kMaxTensorDim);
  for (size_t d = 0; d < dim_; ++d) out[d] = static_cast<SizesType>(sizes_[d]);
}

namespace {

// A row-major walk over a view: dimensions of size 1 dropped, neighbours
// merged where the outer stride is the inner one times its size, so that
// the innermost run is as long as the layout allows.
class Walker {
 public:
  Walker(const StridedView& view, int64_t start) : base_(view.first()) {
    for (size_t d = 0; d < view.dim(); ++d) {
      const int64_t size = view.size(d);
      const int64_t stride = view.stride(d);
      if (size == 1) continue;
      if (dim_ > 0 && strides_[dim_ - 1] == stride * size) {
        sizes_[dim_ - 1] *= size;
        strides_[dim_ - 1] = stride;
      } else {
        sizes_[dim_] = size;
        strides_[dim_] = stride;
        ++dim_;
      }
    }
    if (dim_ == 0) {  // A single element.
      sizes_[0] = 1;
      strides_[0] = 1;
      dim_ = 1;
    }
    for (size_t d = dim_; d-- > 0;) {
      index_[d] = start % sizes_[d];
      start /= sizes_[d];
      offset_ += index_[d] * strides_[d];
    }
  }

  // Elements left in the current innermost run.
  int64_t run() const { return sizes_[dim_ - 1] - index_[dim_ - 1]; }
  int64_t inner_stride() const { return strides_[dim_ - 1]; }
  char* address(size_t element_size) const {
    return base_ + offset_ * static_cast<int64_t>(element_size);
  }

  // Moves `n` (<= run()) elements on, carrying into outer dimensions.
  void advance(int64_t n) {
    const size_t last = dim_ - 1;
    index_[last] += n;
    offset_ += n * strides_[last];
    if (index_[last] < sizes_[last]) return;
    offset_ -= sizes_[last] * strides_[last];
    index_[last] = 0;
    for (size_t d = last; d-- > 0;) {
      ++index_[d];
      offset_ += strides_[d];
      if (index_[d] < sizes_[d]) return;
      offset_ -= sizes_[d] * strides_[d];
      index_[d] = 0;
    }
  }

 private:
  char* base_;
  size_t dim_ = 0;
  int64_t offset_ = 0;
  int64_t sizes_[StridedView::kMaxDim] = {};
  int64_t strides_[StridedView::kMaxDim] = {};
  int64_t index_[StridedView::kMaxDim] = {};
};

template <size_t kSize>
void copy_run_fixed(char* dst, int64_t dst_stride, const char* src, int64_t src_stride, int64_t n) {
  const int64_t dst_step = dst_stride * static_cast<int64_t>(kSize);
  const int64_t src_step = src_stride * static_cast<int64_t>(kSize);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst, src, kSize);
    dst += dst_step;
    src += src_step;
  }
}

// n elements of `size` bytes, each side with its own stride (in elements).
void copy_run(char* dst, int64_t dst_stride, const char* src, int64_t src_stride, int64_t n,
              size_t size) {
  if (dst_stride == 1 && src_stride == 1) {
    std::memmove(dst, src, static_cast<size_t>(n) * size);  // memmove: dst may equal src.
    return;
  }
  switch (size) {
    case 1: copy_run_fixed<1>(dst, dst_stride, src, src_stride, n); return;
    case 2: copy_run_fixed<2>(dst, dst_stride, src, src_stride, n); return;
    case 4: copy_run_fixed<4>(dst, dst_stride, src, src_stride, n); return;
    case 8: copy_run_fixed<8>(dst, dst_stride, src, src_stride, n); return;
    default: break;
  }
  const int64_t step = static_cast<int64_t>(size);
  for (int64_t i = 0; i < n; ++i) {
    std::memmove(dst + i * dst_stride * step, src + i * src_stride * step, size);
  }
}

using ConvertFn = void (*)(const void* src, void* dst);

template <typename From, typename To>
void convert_element(const void* src, void* dst) {
  internal::write_element<To>(convert<To>(internal::read_element<From>(src)), dst);
}

ConvertFn get_convert_fn(ScalarType from, ScalarType to) {
  ConvertFn fn = nullptr;
  visit_real_type(from, [&](auto from_tag) {
    visit_real_type(to, [&](auto to_tag) {
      fn = &convert_element<typename decltype(from_tag)::type, typename decltype(to_tag)::type>;
    });
  });
  return fn;
}

// The shared walk: calls run(dst_address, dst_stride, src_address,
// src_stride, n) for maximal runs that are contiguous-strided on both sides.
template <typename RunFn>
void walk_pair(const StridedView& dst, int64_t dst_start, const StridedView& src,
               int64_t src_start, int64_t count, const RunFn& run) {
  if (count <= 0) return;
  Walker d(dst, dst_start);
  Walker s(src, src_start);
  while (count > 0) {
    int64_t n = d.run() < s.run() ? d.run() : s.run();
    if (n > count) n = count;
    run(d.address(dst.element_size()), d.inner_stride(), s.address(src.element_size()),
        s.inner_stride(), n);
    d.advance(n);
    s.advance(n);
    count -= n;
  }
}

}  // namespace

void copy_view_range(const StridedView& dst, int64_t dst_start, const StridedView& src,
                     int64_t src_start, int64_t count) {
  TL_DEBUG_ASSERT(dst.element_size() == src.element_size());
  TL_DEBUG_ASSERT(dst_start >= 0 && src_start >= 0 && count >= 0);
  TL_DEBUG_ASSERT(dst_start + count <= dst.numel() && src_start + count <= src.numel());
  const size_t size = dst.element_size();
  walk_pair(dst, dst_start, src, src_start, count,
            [size](char* d, int64_t ds, const char* s, int64_t ss, int64_t n) {
              copy_run(d, ds, s, ss, n, size);
            });
}

void copy_view(const StridedView& dst, const StridedView& src) {
  TL_DEBUG_ASSERT(dst.numel() == src.numel());
  copy_view_range(dst, 0, src, 0, dst.numel());
}

Status copy_view_converting(const StridedView& dst, ScalarType dst_type, const char* dst_name,
                            const StridedView& src, ScalarType src_type, const char* src_name) {
  TL_DEBUG_ASSERT(dst.numel() == src.numel());
  const ConvertFn fn = get_convert_fn(src_type, dst_type);
  if (fn == nullptr) {
    const bool src_ok = visit_real_type(src_type, [](auto) {});
    return src_ok ? unsupported_dtype(dst_name, dst_type, kRealTypeNames)
                  : unsupported_dtype(src_name, src_type, kRealTypeNames);
  }
  if (src_type == dst_type) {
    copy_view(dst, src);
    return Error::kOk;
  }
  const int64_t dst_size = static_cast<int64_t>(dst.element_size());
  const int64_t src_size = static_cast<int64_t>(src.element_size());
  walk_pair(dst, 0, src, 0, dst.numel(),
            [&](char* d, int64_t ds, const char* s, int64_t ss, int64_t n) {
              for (int64_t i = 0; i < n; ++i) fn(s + i * ss * src_size, d + i * ds * dst_size);
            });
  return Error::kOk;
}

void fill_view(const StridedView& dst, const void* value) {
  const int64_t count = dst.numel();
  if (count == 0) return;
  const size_t size = dst.element_size();
  Walker d(dst, 0);
  int64_t left = count;
  while (left > 0) {
    const int64_t n = d.run() < left ? d.run() : left;
    char* p = d.address(size);
    const int64_t step = d.inner_stride() * static_cast<int64_t>(size);
    for (int64_t i = 0; i < n; ++i) std::memcpy(p + i * step, value, size);
    d.advance(n);
    left -= n;
  }
}

}  // namespace torchlight::portable

namespace torchlight::portable {

Status copy_view_to_out(const NamedTensor& self, const StridedView& view, const NamedTensor& out) {
  TL_CHECK_OR_RETURN(out.tensor.scalar_type() == self.tensor.scalar_type(), Error::kInvalidType,
                     "argument '%s' has dtype %s, expected %s (the dtype of '%s')", out.name,
                     to_string(out.tensor.scalar_type()), to_string(self.tensor.scalar_type()),
                     self.name);
  TL_DEBUG_ASSERT(view.dim() <= kMaxTensorDim);
  SizesType sizes[kMaxTensorDim];
  view.sizes(sizes);
  TL_RETURN_IF_ERROR(resize_tensor(out, {sizes, view.dim()}));
  if (view.numel() == 0) return Error::kOk;
  TL_CHECK_OR_RETURN(view.first() != nullptr, Error::kInvalidArgument,
                     "argument '%s' has %lld elements but no data", self.name,
                     static_cast<long long>(self.tensor.numel()));
  TL_CHECK_OR_RETURN(out.tensor.const_data_ptr() != nullptr, Error::kInvalidArgument,
                     "argument '%s' has %lld elements but no data", out.name,
                     static_cast<long long>(out.tensor.numel()));
  copy_view(StridedView(out.tensor), view);
  return Error::kOk;
}

}  // namespace torchlight::portable
