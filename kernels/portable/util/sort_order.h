// Ordering for sort and topk: ATen's order on values (NaN above every
// number, so ascending puts NaNs last and descending first), with ties
// broken by position so the result is the stable one. Because that is a
// total order, an in-place heap sort gives exactly the stable result, with
// no allocation: the permutation is built in the int64 `indices` out
// tensor itself.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/coord_walk.h"
#include "kernels/portable/util/dim_index.h"
#include "kernels/portable/util/elementwise.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/tensor_checks.h"

namespace torchlight::portable {

/// One slice of a tensor along a dimension: `count` elements `stride`
/// elements apart. Borrowed memory; reads and writes by memcpy.
template <typename T>
struct StridedSlice {
  char* base;
  int64_t stride;  // In elements.

  T get(int64_t i) const {
    return internal::read_element<T>(base + i * stride * int64_t{sizeof(T)});
  }
  void set(int64_t i, T value) const {
    internal::write_element<T>(value, base + i * stride * int64_t{sizeof(T)});
  }
};

/// "a comes before b" for values of CTYPE at positions ia and ib.
template <typename CTYPE>
class SortOrder {
 public:
  SortOrder(StridedSlice<CTYPE> values, bool descending)
      : values_(values), descending_(descending) {}

  bool before(int64_t ia, int64_t ib) const {
    const Compute a = convert<Compute>(values_.get(ia));
    const Compute b = convert<Compute>(values_.get(ib));
    if (descending_) {
      if (less(b, a)) return true;
      if (less(a, b)) return false;
    } else {
      if (less(a, b)) return true;
      if (less(b, a)) return false;
    }
    return ia < ib;
  }

 private:
  using Compute = opmath_t<CTYPE>;
  static bool less(Compute a, Compute b) {
    if constexpr (std::is_floating_point_v<Compute>) {
      if (std::isnan(a)) return false;
      if (std::isnan(b)) return true;
    }
    return a < b;
  }

  StridedSlice<CTYPE> values_;
  bool descending_;
};

namespace internal {

// Restores the heap property below `root` in heap[0, size): every parent
// comes after its children in `order` (so the root comes last).
template <typename Order>
void sift_down(const StridedSlice<int64_t>& heap, int64_t root, int64_t size, const Order& order) {
  for (;;) {
    int64_t last = root;
    const int64_t left = 2 * root + 1;
    const int64_t right = left + 1;
    if (left < size && order.before(heap.get(last), heap.get(left))) last = left;
    if (right < size && order.before(heap.get(last), heap.get(right))) last = right;
    if (last == root) return;
    const int64_t t = heap.get(root);
    heap.set(root, heap.get(last));
    heap.set(last, t);
    root = last;
  }
}

template <typename Order>
void make_heap(const StridedSlice<int64_t>& heap, int64_t size, const Order& order) {
  for (int64_t i = size / 2; i-- > 0;) sift_down(heap, i, size, order);
}

// Sorts a heap of `size` positions into `order`.
template <typename Order>
void sort_heap(const StridedSlice<int64_t>& heap, int64_t size, const Order& order) {
  for (int64_t end = size; end-- > 1;) {
    const int64_t t = heap.get(0);
    heap.set(0, heap.get(end));
    heap.set(end, t);
    sift_down(heap, 0, end, order);
  }
}

}  // namespace internal

/// Writes into `perm` (n slots) the positions 0..n-1 sorted by `order`.
template <typename Order>
void sort_positions(const StridedSlice<int64_t>& perm, int64_t n, const Order& order) {
  for (int64_t i = 0; i < n; ++i) perm.set(i, i);
  internal::make_heap(perm, n, order);
  internal::sort_heap(perm, n, order);
}

/// Writes into `perm` (k slots) the first k of the positions 0..n-1 under
/// `order`, sorted: a heap of the best k seen so far, whose root is the
/// worst of them.
template <typename Order>
void top_positions(const StridedSlice<int64_t>& perm, int64_t n, int64_t k, const Order& order) {
  if (k == 0) return;
  for (int64_t i = 0; i < k; ++i) perm.set(i, i);
  internal::make_heap(perm, k, order);
  for (int64_t i = k; i < n; ++i) {
    if (order.before(i, perm.get(0))) {
      perm.set(0, i);
      internal::sift_down(perm, 0, k, order);
    }
  }
  internal::sort_heap(perm, k, order);
}

/// The outs of sort and topk: `values` of self's dtype, int64 `indices`.
/// Errors: kInvalidType naming the out.
inline Status check_sort_outs(const NamedTensor& self, const NamedTensor& values,
                              const NamedTensor& indices) {
  TL_RETURN_IF_ERROR(check_same_dtype(values, self.tensor.scalar_type(), "self"));
  TL_CHECK_OR_RETURN(indices.tensor.scalar_type() == ScalarType::kLong, Error::kInvalidType,
                     "argument '%s' has dtype %s, expected int64", indices.name,
                     to_string(indices.tensor.scalar_type()));
  return Error::kOk;
}

/// Calls fn(in, out, perm) for every slice along `dim` of self (CTYPE),
/// values (CTYPE, already resized) and indices (int64, values' shape), all
/// with data; a 0-d self is one slice of one element.
template <typename CTYPE, typename Fn>
void for_each_slice(const Tensor& self, const Tensor& values, const Tensor& indices, size_t dim,
                    Fn&& fn) {
  const bool scalar = self.dim() == 0;
  ShapeBuffer slices;  // values' shape with `dim` collapsed to 1.
  slices.dim = values.dim();
  for (size_t d = 0; d < slices.dim; ++d) slices.sizes[d] = d == dim ? 1 : values.size(d);
  const int64_t self_stride = scalar ? 1 : self.strides()[dim];
  const int64_t values_stride = scalar ? 1 : values.strides()[dim];
  const int64_t indices_stride = scalar ? 1 : indices.strides()[dim];
  constexpr int64_t kSize = sizeof(CTYPE);
  for (CoordWalk w(slices.span()); !w.done(); w.next()) {
    const StridedSlice<CTYPE> in{
        self.mutable_data_ptr<char>() + w.offset(self.strides()) * kSize, self_stride};
    const StridedSlice<CTYPE> out{
        values.mutable_data_ptr<char>() + w.offset(values.strides()) * kSize, values_stride};
    const StridedSlice<int64_t> perm{
        indices.mutable_data_ptr<char>() + w.offset(indices.strides()) * 8, indices_stride};
    fn(in, out, perm);
  }
}

}  // namespace torchlight::portable
