#include "runtime/executor/method_meta.h"

#include <cstdio>

#include "runtime/executor/unaligned_vector.h"
#include "schema/program_generated.h"

namespace torchlight {
namespace {

size_t vector_size(const flatbuffers::Vector<int32_t>* v) { return v == nullptr ? 0 : v->size(); }

Tag tag_of(fb::KernelTypes type) {
  switch (type) {
    case fb::KernelTypes::NONE:
    case fb::KernelTypes::Null: return Tag::kNone;
    case fb::KernelTypes::Int: return Tag::kInt;
    case fb::KernelTypes::Bool: return Tag::kBool;
    case fb::KernelTypes::Double: return Tag::kDouble;
    case fb::KernelTypes::Tensor: return Tag::kTensor;
    case fb::KernelTypes::String: return Tag::kString;
    case fb::KernelTypes::IntList: return Tag::kIntList;
    case fb::KernelTypes::DoubleList: return Tag::kDoubleList;
    case fb::KernelTypes::BoolList: return Tag::kBoolList;
    case fb::KernelTypes::TensorList: return Tag::kTensorList;
    case fb::KernelTypes::OptionalTensorList: return Tag::kOptionalTensorList;
  }
  return Tag::kNone;
}

}  // namespace

std::string_view MethodMeta::name() const {
  return plan_->name() == nullptr ? std::string_view()
                                  : std::string_view(plan_->name()->c_str(), plan_->name()->size());
}

size_t MethodMeta::num_inputs() const { return vector_size(plan_->inputs()); }
size_t MethodMeta::num_outputs() const { return vector_size(plan_->outputs()); }

Result<Tag> MethodMeta::value_tag(int32_t value_index) const {
  const auto* values = plan_->values();
  TL_CHECK_OR_RETURN(values != nullptr && value_index >= 0 &&
                         static_cast<uint32_t>(value_index) < values->size() &&
                         values->Get(static_cast<uint32_t>(value_index)) != nullptr,
                     Error::kInvalidProgram, "value index %d is out of range", value_index);
  return tag_of(values->Get(static_cast<uint32_t>(value_index))->val_type());
}

Result<TensorInfo> MethodMeta::tensor_info(int32_t value_index) const {
  TL_ASSIGN_OR_RETURN(const Tag tag, value_tag(value_index));
  TL_CHECK_OR_RETURN(tag == Tag::kTensor, Error::kInvalidType, "value %d is %s, not a Tensor",
                     value_index, to_string(tag));
  const fb::Tensor* t =
      plan_->values()->Get(static_cast<uint32_t>(value_index))->val_as_Tensor();
  TL_CHECK_OR_RETURN(t != nullptr, Error::kInvalidProgram,
                     "value %d has type Tensor but no tensor data", value_index);
  TensorInfo info;
  info.dtype = static_cast<ScalarType>(t->scalar_type());
  TL_CHECK_OR_RETURN(is_valid(info.dtype), Error::kInvalidProgram,
                     "value %d has invalid scalar type %d", value_index,
                     static_cast<int>(t->scalar_type()));
  if (t->sizes() != nullptr) info.sizes = {t->sizes()->data(), t->sizes()->size()};
  if (t->dim_order() != nullptr) info.dim_order = {t->dim_order()->data(), t->dim_order()->size()};
  info.dynamism = static_cast<TensorShapeDynamism>(t->shape_dynamism());
  info.memory_planned = t->allocation_info() != nullptr;
  int64_t numel = 0;
  char text[128];
  TL_CHECK_OR_RETURN(compute_numel(info.sizes, &numel) &&
                         !__builtin_mul_overflow(static_cast<uint64_t>(numel),
                                                 element_size(info.dtype), &info.nbytes),
                     Error::kInvalidProgram, "value %d has invalid sizes %s", value_index,
                     format_sizes(info.sizes, text, sizeof(text)));
  return info;
}

Result<Tag> MethodMeta::input_tag(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_inputs(), Error::kInvalidArgument,
                     "input index %zu is out of range (%zu inputs)", index, num_inputs());
  return value_tag(plan_->inputs()->Get(static_cast<uint32_t>(index)));
}

Result<TensorInfo> MethodMeta::input_tensor_info(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_inputs(), Error::kInvalidArgument,
                     "input index %zu is out of range (%zu inputs)", index, num_inputs());
  return tensor_info(plan_->inputs()->Get(static_cast<uint32_t>(index)));
}

Result<Tag> MethodMeta::output_tag(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_outputs(), Error::kInvalidArgument,
                     "output index %zu is out of range (%zu outputs)", index, num_outputs());
  return value_tag(plan_->outputs()->Get(static_cast<uint32_t>(index)));
}

Result<TensorInfo> MethodMeta::output_tensor_info(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_outputs(), Error::kInvalidArgument,
                     "output index %zu is out of range (%zu outputs)", index, num_outputs());
  return tensor_info(plan_->outputs()->Get(static_cast<uint32_t>(index)));
}

size_t MethodMeta::num_planned_buffers() const {
  const auto* sizes = plan_->non_const_buffer_sizes();
  // Entry 0 is reserved by the format.
  return sizes == nullptr || sizes->size() == 0 ? 0 : sizes->size() - 1;
}

Result<int64_t> MethodMeta::planned_buffer_size(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_planned_buffers(), Error::kInvalidArgument,
                     "planned buffer index %zu is out of range (%zu buffers)", index,
                     num_planned_buffers());
  const int64_t size = unaligned_get(plan_->non_const_buffer_sizes(), index + 1);
  TL_CHECK_OR_RETURN(size >= 0, Error::kInvalidProgram, "planned buffer %zu has negative size %lld",
                     index, static_cast<long long>(size));
  return size;
}

size_t MethodMeta::num_operators() const {
  return plan_->operators() == nullptr ? 0 : plan_->operators()->size();
}

Result<const char*> MethodMeta::operator_name(size_t index, char* out, size_t out_size) const {
  TL_CHECK_OR_RETURN(index < num_operators(), Error::kInvalidArgument,
                     "operator index %zu is out of range (%zu operators)", index, num_operators());
  const fb::Operator* op = plan_->operators()->Get(static_cast<uint32_t>(index));
  TL_CHECK_OR_RETURN(op != nullptr && op->name() != nullptr, Error::kInvalidProgram,
                     "operator %zu has no name", index);
  const bool overload = op->overload() != nullptr && op->overload()->size() > 0;
  snprintf(out, out_size, "%s%s%s", op->name()->c_str(), overload ? "." : "",
           overload ? op->overload()->c_str() : "");
  return static_cast<const char*>(out);
}

size_t MethodMeta::num_backends() const {
  return plan_->delegates() == nullptr ? 0 : plan_->delegates()->size();
}

Result<std::string_view> MethodMeta::backend_name(size_t index) const {
  TL_CHECK_OR_RETURN(index < num_backends(), Error::kInvalidArgument,
                     "backend index %zu is out of range (%zu delegates)", index, num_backends());
  const fb::BackendDelegate* d = plan_->delegates()->Get(static_cast<uint32_t>(index));
  TL_CHECK_OR_RETURN(d != nullptr && d->id() != nullptr, Error::kInvalidProgram,
                     "delegate %zu has no backend id", index);
  return std::string_view(d->id()->c_str(), d->id()->size());
}

bool MethodMeta::uses_backend(std::string_view name) const {
  for (size_t i = 0; i < num_backends(); ++i) {
    Result<std::string_view> id = backend_name(i);
    if (id.ok() && id.get() == name) return true;
  }
  return false;
}

size_t MethodMeta::num_values() const {
  return plan_->values() == nullptr ? 0 : plan_->values()->size();
}

size_t MethodMeta::num_instructions() const {
  const auto* chains = plan_->chains();
  if (chains == nullptr || chains->size() == 0 || chains->Get(0) == nullptr ||
      chains->Get(0)->instructions() == nullptr) {
    return 0;
  }
  return chains->Get(0)->instructions()->size();
}

}  // namespace torchlight
