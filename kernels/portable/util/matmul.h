// Matrix products for the matmul kernels (mm, bmm, addmm): C = A @ B over
// strided matrices of one dtype, accumulated in opmath (float for float16
// and bfloat16, as ATen's CPU gemm does; wrapping integer arithmetic for the
// integer types, which gives ATen's result modulo 2^bits in any order).
//
// Two loop orders, picked from B's layout so the innermost loop walks
// memory contiguously:
//  - B's rows contiguous (row-major, the usual mm/bmm case): each row of C
//    is built in a block of accumulators, adding A[i][p] * B[p][j0..j1] for
//    every p, so B is read row by row;
//  - B's columns contiguous (a transposed weight, as nn.Linear exports to
//    addmm(bias, x, permute(W))): C[i][j] is a dot product of a row of A
//    and a column of B, summed in several lanes so it can vectorize.
// The order of additions therefore differs from ATen's BLAS; float results
// agree to a few units in the last place of the accumulator.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/portable/util/convert.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"
#include "kernels/portable/util/opmath.h"
#include "kernels/portable/util/tensor_checks.h"
#include "runtime/core/result.h"
#include "runtime/core/status.h"
#include "runtime/core/tensor.h"

namespace torchlight::portable {

/// A strided 2-D view: element [r][c] is data[r * row_stride + c * col_stride].
/// `data` is borrowed and must outlive the view.
template <typename T>
struct MatrixView {
  const T* data;
  int64_t rows;
  int64_t cols;
  int64_t row_stride;
  int64_t col_stride;

  const T& at(int64_t r, int64_t c) const { return data[r * row_stride + c * col_stride]; }
};

/// The matrix of a 2-D tensor, or matrix `batch` of a 3-D one (its last two
/// dimensions). The tensor's data must outlive the view.
template <typename T>
MatrixView<T> matrix_of(const Tensor& t, int64_t batch = 0) {
  const size_t r = t.dim() - 2;
  const T* base = t.const_data_ptr<T>();
  if (r == 1 && base != nullptr) base += batch * t.strides()[0];
  return MatrixView<T>{base, t.size(r), t.size(r + 1), t.strides()[r], t.strides()[r + 1]};
}

namespace internal {

// The dot product of row i of A and column j of B (contiguous), summed in
// kLanes partial sums so the loop vectorizes. kUnitA: A's rows are
// contiguous too.
template <bool kUnitA, typename T>
opmath_t<T> dot_row_column(const MatrixView<T>& a, const MatrixView<T>& b, int64_t i, int64_t j) {
  using Acc = opmath_t<T>;
  constexpr int64_t kLanes = 8;
  const int64_t k = a.cols;
  const int64_t a_step = kUnitA ? 1 : a.col_stride;
  const T* a_row = a.data + i * a.row_stride;
  const T* b_col = b.data + j * b.col_stride;
  Acc lanes[kLanes] = {};
  int64_t p = 0;
  for (; p + kLanes <= k; p += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      lanes[l] = opmath_add(lanes[l], opmath_mul(convert<Acc>(a_row[(p + l) * a_step]),
                                                 convert<Acc>(b_col[p + l])));
    }
  }
  Acc acc = Acc(0);
  for (int64_t l = 0; l < kLanes; ++l) acc = opmath_add(acc, lanes[l]);
  for (; p < k; ++p) {
    acc = opmath_add(acc, opmath_mul(convert<Acc>(a_row[p * a_step]), convert<Acc>(b_col[p])));
  }
  return acc;
}

// Column j of B stays in cache while every row of A meets it.
template <bool kUnitA, typename T, typename Emit>
void dot_product_matmul(const MatrixView<T>& a, const MatrixView<T>& b, Emit& emit) {
  for (int64_t j = 0; j < b.cols; ++j) {
    for (int64_t i = 0; i < a.rows; ++i) emit(i, j, dot_row_column<kUnitA>(a, b, i, j));
  }
}

}  // namespace internal

/// Calls emit(i, j, acc) for every element of the [a.rows, b.cols] product
/// of `a` and `b` (a.cols == b.rows, checked by the caller), where `acc` is
/// the sum over p of a[i][p] * b[p][j] in opmath_t<T>. Each (i, j) is
/// emitted exactly once; a.cols == 0 emits zeros.
template <typename T, typename Emit>
void matmul_strided(const MatrixView<T>& a, const MatrixView<T>& b, Emit&& emit) {
  using Acc = opmath_t<T>;
  // Rows of A handled together, so each element of B read from memory is
  // used kRows times.
  constexpr int64_t kRows = 4;
  const int64_t m = a.rows;
  const int64_t k = a.cols;
  const int64_t n = b.cols;
  if (b.row_stride == 1 && b.col_stride != 1 && k > 1) {
    // Dot products along contiguous columns of B.
    if (a.col_stride == 1) {
      internal::dot_product_matmul<true>(a, b, emit);
    } else {
      internal::dot_product_matmul<false>(a, b, emit);
    }
    return;
  }
  // Row blocks: acc[r][j0..j1) += A[i0 + r][p] * B[p][j0..j1), B read along
  // its rows.
  constexpr int64_t kBlock = 128;
  for (int64_t i0 = 0; i0 < m; i0 += kRows) {
    const int64_t rows = m - i0 < kRows ? m - i0 : kRows;
    for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
      const int64_t width = n - j0 < kBlock ? n - j0 : kBlock;
      Acc acc[kRows][kBlock] = {};
      for (int64_t p = 0; p < k; ++p) {
        const T* b_row = b.data + p * b.row_stride + j0 * b.col_stride;
        for (int64_t r = 0; r < rows; ++r) {
          const Acc a_value = convert<Acc>(a.at(i0 + r, p));
          Acc* acc_row = acc[r];
          if (b.col_stride == 1) {
            for (int64_t jj = 0; jj < width; ++jj) {
              acc_row[jj] = opmath_add(acc_row[jj], opmath_mul(a_value, convert<Acc>(b_row[jj])));
            }
          } else {
            for (int64_t jj = 0; jj < width; ++jj) {
              acc_row[jj] = opmath_add(
                  acc_row[jj], opmath_mul(a_value, convert<Acc>(b_row[jj * b.col_stride])));
            }
          }
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t jj = 0; jj < width; ++jj) emit(i0 + r, j0 + jj, acc[r][jj]);
      }
    }
  }
}

/// Checks the two factors of mm (dim 2) or bmm (dim 3): ranks, one dtype,
/// equal batch sizes, a's columns == b's rows, data present. Errors:
/// kInvalidArgument / kInvalidType naming the arguments and their shapes.
inline Status check_matmul_operands(const NamedTensor& a, const NamedTensor& b, size_t dim);

/// The part of check_matmul_operands a program fixes (ranks, one dtype),
/// for a prepare step at load.
inline Status check_matmul_ranks_and_dtypes(const NamedTensor& a, const NamedTensor& b,
                                            size_t dim) {
  TL_RETURN_IF_ERROR(check_rank(a, dim, dim == 2 ? "a matrix" : "a batch of matrices"));
  TL_RETURN_IF_ERROR(check_rank(b, dim, dim == 2 ? "a matrix" : "a batch of matrices"));
  return check_same_dtype(b, a.tensor.scalar_type(), a.name);
}

/// The rest, which a run's shapes decide: batch and inner sizes, data.
inline Status check_matmul_shapes(const NamedTensor& a, const NamedTensor& b, size_t dim) {
  const size_t r = dim - 2;
  char a_shape[128];
  char b_shape[128];
  if (dim == 3) {
    TL_CHECK_OR_RETURN(a.tensor.size(0) == b.tensor.size(0), Error::kInvalidArgument,
                       "argument '%s' of shape %s and argument '%s' of shape %s have different "
                       "batch sizes",
                       a.name, format_sizes(a.tensor.sizes(), a_shape, sizeof(a_shape)), b.name,
                       format_sizes(b.tensor.sizes(), b_shape, sizeof(b_shape)));
  }
  TL_CHECK_OR_RETURN(a.tensor.size(r + 1) == b.tensor.size(r), Error::kInvalidArgument,
                     "argument '%s' of shape %s cannot be multiplied by argument '%s' of shape %s: "
                     "%d columns vs %d rows",
                     a.name, format_sizes(a.tensor.sizes(), a_shape, sizeof(a_shape)), b.name,
                     format_sizes(b.tensor.sizes(), b_shape, sizeof(b_shape)),
                     a.tensor.size(r + 1), b.tensor.size(r));
  TL_RETURN_IF_ERROR(check_has_data(a));
  return check_has_data(b);
}

inline Status check_matmul_operands(const NamedTensor& a, const NamedTensor& b, size_t dim) {
  TL_RETURN_IF_ERROR(check_matmul_ranks_and_dtypes(a, b, dim));
  return check_matmul_shapes(a, b, dim);
}

/// What mm and bmm check at load: the operands' ranks and dtypes, a dtype
/// the loops take (real, not bool), out's dtype. Errors name the argument.
inline Status check_matmul_call(const NamedTensor& self, const NamedTensor& mat2,
                                const NamedTensor& out, size_t dim) {
  TL_RETURN_IF_ERROR(check_matmul_ranks_and_dtypes(self, mat2, dim));
  const ScalarType dtype = self.tensor.scalar_type();
  if (!visit_real_type_no_bool(dtype, [](auto) {})) {
    return unsupported_dtype(self.name, dtype, kRealTypeNoBoolNames);
  }
  return check_same_dtype(out, dtype, self.name);
}

}  // namespace torchlight::portable
