// The same unboxed kernel for PyTorch: TL_WRAP_TO_ATEN(my_op_out, N) is a
// function taking ATen types (at::Tensor, c10::Scalar, c10::IntArrayRef,
// ...) in place of Torchlight's, so one C++ source serves export (a torch
// extension registering the op with TORCH_LIBRARY) and the runtime
// (extension/kernel_util/unboxed_kernel.h). Upstream spells it WRAP_TO_ATEN
// (compat/include/executorch/extension/aten_util/).
//
//   Tensor& my_op_out(KernelContext& ctx, const Tensor& a, double alpha, Tensor& out);
//   TORCH_LIBRARY(my_ops, m) {
//     m.def("my_op.out(Tensor a, float alpha, *, Tensor(a!) out) -> Tensor(a!)",
//           TL_WRAP_TO_ATEN(my_op_out, 2));
//   }
//
// N is the position of the out tensor among the ATen function's parameters
// (a leading KernelContext is not one of them); the wrapper returns that
// at::Tensor. Without N the function must return void or a new Tensor.
//
// Tensors are viewed, not copied: an input that is not contiguous is made
// contiguous first; an out tensor must be contiguous, and may be shrunk by
// the kernel (a resize within its elements), which is applied to the
// at::Tensor after the call. A kernel failure (ctx.fail) raises a
// c10::Error (a RuntimeError in Python) with the kernel's message.
//
// Host-side code for torch extensions only: it uses the heap and exceptions,
// unlike the runtime.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

#include "extension/kernel_util/scalar.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::aten_bridge {

template <typename T>
using Decayed = std::remove_cv_t<std::remove_reference_t<T>>;

// The ATen type standing for a Torchlight value type.
template <typename T>
struct AtenOf {
  using type = T;  // int64_t, double, bool
};
template <>
struct AtenOf<Tensor> {
  using type = at::Tensor;
};
template <>
struct AtenOf<Scalar> {
  using type = c10::Scalar;
};
template <>
struct AtenOf<std::string_view> {
  using type = c10::string_view;
};
template <typename T>
struct AtenOf<Span<const T>> {
  using type = c10::ArrayRef<typename AtenOf<T>::type>;
};
template <typename T>
struct AtenOf<std::optional<T>> {
  using type = std::optional<typename AtenOf<T>::type>;
};

// The ATen parameter type for a Torchlight parameter type: references stay
// references (a Tensor& out becomes at::Tensor&).
template <typename P>
struct AtenParam {
  using type = typename AtenOf<Decayed<P>>::type;
};
template <typename P>
struct AtenParam<const P&> {
  using type = const typename AtenOf<Decayed<P>>::type&;
};
template <typename P>
struct AtenParam<P&> {
  using type = typename AtenOf<Decayed<P>>::type&;
};

// A Torchlight Tensor over an at::Tensor's memory (kept alive here).
class TensorView {
 public:
  TensorView(const at::Tensor& source, bool is_output) {
    TORCH_CHECK(source.device().is_cpu(), "Torchlight kernels take CPU tensors");
    TORCH_CHECK(!is_output || source.is_contiguous(), "the out tensor must be contiguous");
    storage_ = is_output ? source : source.contiguous();
    const size_t dim = static_cast<size_t>(storage_.dim());
    for (size_t d = 0; d < dim; ++d) {
      sizes_.push_back(static_cast<SizesType>(storage_.size(static_cast<int64_t>(d))));
      dim_order_.push_back(static_cast<DimOrderType>(d));
      strides_.push_back(storage_.stride(static_cast<int64_t>(d)));
    }
    impl_ = std::make_unique<TensorImpl>(static_cast<ScalarType>(storage_.scalar_type()), dim, sizes_.data(),
                                         storage_.data_ptr(), dim_order_.data(), strides_.data(),
                                         TensorShapeDynamism::kDynamicBound);
  }
  Tensor tensor() const { return Tensor(impl_.get()); }

  /// Applies a resize the kernel made to the at::Tensor it views.
  void sync_sizes_to(at::Tensor& target) const {
    std::vector<int64_t> sizes(impl_->sizes().begin(), impl_->sizes().end());
    if (target.sizes() != c10::IntArrayRef(sizes)) target.resize_(sizes);
  }

 private:
  at::Tensor storage_;
  std::vector<SizesType> sizes_;
  std::vector<DimOrderType> dim_order_;
  std::vector<StridesType> strides_;
  std::unique_ptr<TensorImpl> impl_;
};

// Reads one ATen argument as the Torchlight type T, keeping what it needs.
template <typename T>
struct FromAten {
  explicit FromAten(const T& value) : value_(value) {}
  T get() { return value_; }
  T value_;
};
template <>
struct FromAten<Tensor> {
  FromAten(const at::Tensor& value, bool is_output = false) : view_(value, is_output) {}
  Tensor get() { return view_.tensor(); }
  TensorView view_;
};
template <>
struct FromAten<Scalar> {
  explicit FromAten(const c10::Scalar& value)
      : value_(value.isFloatingPoint() ? Scalar(value.toDouble())
               : value.isBoolean()     ? Scalar(value.toBool())
                                       : Scalar(value.toLong())) {}
  Scalar get() { return value_; }
  Scalar value_;
};
template <>
struct FromAten<std::string_view> {
  explicit FromAten(c10::string_view value) : value_(value.data(), value.size()) {}
  std::string_view get() { return value_; }
  std::string_view value_;
};
template <typename T>
struct FromAten<Span<const T>> {
  explicit FromAten(c10::ArrayRef<typename AtenOf<T>::type> values) {
    for (const auto& v : values) items_.emplace_back(v);
    for (auto& item : items_) converted_.push_back(item.get());
  }
  Span<const T> get() { return Span<const T>(converted_.data(), converted_.size()); }
  std::vector<FromAten<T>> items_;
  std::vector<T> converted_;
};
template <>
struct FromAten<Span<const bool>> {  // std::vector<bool> has no data().
  explicit FromAten(c10::ArrayRef<bool> values) : values_(values) {}
  Span<const bool> get() { return Span<const bool>(values_.data(), values_.size()); }
  c10::ArrayRef<bool> values_;
};
template <typename T>
struct FromAten<std::optional<T>> {
  explicit FromAten(const std::optional<typename AtenOf<T>::type>& value) {
    if (value.has_value()) inner_ = std::make_unique<FromAten<T>>(*value);
  }
  std::optional<T> get() { return inner_ ? std::optional<T>(inner_->get()) : std::nullopt; }
  std::unique_ptr<FromAten<T>> inner_;
};

template <auto Function, int kOut, bool kTakesContext, typename R, typename... Args>
struct Wrapper {
  static constexpr int kNumArgs = static_cast<int>(sizeof...(Args));
  static_assert(kOut == -1 || (kOut >= 0 && kOut < kNumArgs),
                "TL_WRAP_TO_ATEN(f, N): N must index one of f's parameters (after its KernelContext)");
  static_assert(kOut != -1 || !std::is_lvalue_reference_v<R>,
                "TL_WRAP_TO_ATEN(f, N): a function returning Tensor& needs N, the out tensor's position");
  static_assert(std::is_void_v<R> || std::is_same_v<Decayed<R>, Tensor>,
                "TL_WRAP_TO_ATEN: the function must return void, Tensor& or Tensor");

  template <size_t I>
  using Arg = std::tuple_element_t<I, std::tuple<Args...>>;
  using Return = std::conditional_t<kOut == -1, std::conditional_t<std::is_void_v<R>, void, at::Tensor>,
                                    at::Tensor&>;

  template <size_t I>
  static constexpr bool is_written() {
    using P = Arg<I>;
    return std::is_same_v<Decayed<P>, Tensor> && std::is_lvalue_reference_v<P> &&
           !std::is_const_v<std::remove_reference_t<P>>;
  }

  template <size_t I, typename A>
  static FromAten<Decayed<Arg<I>>> convert(A& value) {
    if constexpr (std::is_same_v<Decayed<Arg<I>>, Tensor>) {
      return FromAten<Tensor>(value, is_written<I>());
    } else {
      return FromAten<Decayed<Arg<I>>>(value);
    }
  }

  template <size_t... I>
  static Return call(std::index_sequence<I...>, typename AtenParam<Args>::type... args) {
    auto aten_args = std::forward_as_tuple(args...);
    // Kept in a tuple so the views outlive the call.
    std::tuple<FromAten<Decayed<Args>>...> converted{convert<I>(std::get<I>(aten_args))...};
    std::tuple<Decayed<Args>...> values{std::get<I>(converted).get()...};
    KernelContext ctx(nullptr, nullptr, "unboxed kernel (ATen)");
    Tensor result;
    if constexpr (std::is_void_v<R>) {
      if constexpr (kTakesContext) Function(ctx, std::get<I>(values)...);
      else Function(std::get<I>(values)...);
    } else {
      if constexpr (kTakesContext) result = Function(ctx, std::get<I>(values)...);
      else result = Function(std::get<I>(values)...);
    }
    TORCH_CHECK(!ctx.failed(), ctx.status().message());
    // Written tensors: apply any resize to the caller's at::Tensor.
    (sync_if_written<I>(std::get<I>(converted), std::get<I>(aten_args)), ...);
    if constexpr (kOut != -1) {
      return std::get<kOut>(aten_args);
    } else if constexpr (!std::is_void_v<R>) {
      // A new tensor: copy it out, its memory belongs to the kernel.
      std::vector<int64_t> sizes(result.sizes().begin(), result.sizes().end());
      return at::from_blob(result.mutable_data_ptr<void>(), sizes,
                           static_cast<c10::ScalarType>(result.scalar_type()))
          .clone();
    }
  }

  template <size_t I, typename C, typename A>
  static void sync_if_written(C& converted, A& aten) {
    if constexpr (is_written<I>()) converted.view_.sync_sizes_to(aten);
  }

  static Return wrap(typename AtenParam<Args>::type... args) {
    return call(std::index_sequence_for<Args...>{}, args...);
  }
};

template <auto Function, int kOut, typename Signature = decltype(Function)>
struct WrapperOf;
template <auto Function, int kOut, typename R, typename... Params>
struct WrapperOf<Function, kOut, R (*)(Params...)> {
  using type = Wrapper<Function, kOut, false, R, Params...>;
};
template <auto Function, int kOut, typename R, typename... Params>
struct WrapperOf<Function, kOut, R (*)(KernelContext&, Params...)> {
  using type = Wrapper<Function, kOut, true, R, Params...>;
};

}  // namespace torchlight::aten_bridge

#define TL_WRAP_TO_ATEN_2_(function, out_index) \
  (&::torchlight::aten_bridge::WrapperOf<&function, out_index>::type::wrap)
#define TL_WRAP_TO_ATEN_1_(function) (&::torchlight::aten_bridge::WrapperOf<&function, -1>::type::wrap)
#define TL_WRAP_TO_ATEN_PICK_(_1, _2, name, ...) name
/// TL_WRAP_TO_ATEN(function[, out_index]): see the top of this file.
#define TL_WRAP_TO_ATEN(...) \
  TL_WRAP_TO_ATEN_PICK_(__VA_ARGS__, TL_WRAP_TO_ATEN_2_, TL_WRAP_TO_ATEN_1_, unused)(__VA_ARGS__)
