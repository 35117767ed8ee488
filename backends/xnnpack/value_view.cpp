#include "backends/xnnpack/value_view.h"

#include "schema/xnnpack_generated.h"

namespace torchlight {
namespace xnnpack {

Result<ValueView> view_value(const fb_xnnpack::XValue* value, uint32_t index) {
  TL_CHECK_OR_RETURN(value != nullptr, Error::kInvalidProgram, "XNNPACK value %u is missing",
                     index);
  ValueView view;
  switch (value->xvalue_union_type()) {
    case fb_xnnpack::XValueUnion::XNNTensorValue:
      view.tensor = value->xvalue_union_as_XNNTensorValue();
      break;
    case fb_xnnpack::XValueUnion::XNNQuantizedTensorValue:
      view.quantized = value->xvalue_union_as_XNNQuantizedTensorValue();
      view.tensor = view.quantized == nullptr ? nullptr : view.quantized->tensor_value();
      break;
    default:
      return Status::error(Error::kInvalidProgram, "XNNPACK value %u has unknown kind %u", index,
                           static_cast<unsigned>(value->xvalue_union_type()));
  }
  TL_CHECK_OR_RETURN(view.tensor != nullptr, Error::kInvalidProgram,
                     "XNNPACK value %u has no tensor description", index);
  return view;
}

}  // namespace xnnpack
}  // namespace torchlight
