#include "runtime/core/evalue.h"

namespace torchlight {

const char* to_string(Tag tag) {
  switch (tag) {
    case Tag::kNone: return "None";
    case Tag::kInt: return "Int";
    case Tag::kDouble: return "Double";
    case Tag::kBool: return "Bool";
    case Tag::kString: return "String";
    case Tag::kTensor: return "Tensor";
    case Tag::kIntList: return "IntList";
    case Tag::kDoubleList: return "DoubleList";
    case Tag::kBoolList: return "BoolList";
    case Tag::kTensorList: return "TensorList";
    case Tag::kOptionalTensorList: return "OptionalTensorList";
  }
  return "Unknown";
}

}  // namespace torchlight
