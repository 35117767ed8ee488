#include "runtime/core/error.h"

namespace torchlight {

const char* to_string(Error error) {
  switch (error) {
    case Error::kOk: return "Ok";
    case Error::kInternal: return "Internal";
    case Error::kInvalidState: return "InvalidState";
    case Error::kEndOfMethod: return "EndOfMethod";
    case Error::kNotSupported: return "NotSupported";
    case Error::kNotImplemented: return "NotImplemented";
    case Error::kInvalidArgument: return "InvalidArgument";
    case Error::kInvalidType: return "InvalidType";
    case Error::kOperatorMissing: return "OperatorMissing";
    case Error::kBackendMissing: return "BackendMissing";
    case Error::kNotFound: return "NotFound";
    case Error::kMemoryAllocationFailed: return "MemoryAllocationFailed";
    case Error::kAccessFailed: return "AccessFailed";
    case Error::kInvalidProgram: return "InvalidProgram";
    case Error::kInvalidExternalData: return "InvalidExternalData";
    case Error::kOutOfResources: return "OutOfResources";
    case Error::kDelegateInvalidCompatibility: return "DelegateInvalidCompatibility";
    case Error::kDelegateMemoryAllocationFailed: return "DelegateMemoryAllocationFailed";
    case Error::kDelegateInvalidHandle: return "DelegateInvalidHandle";
  }
  return "Unknown";
}

}  // namespace torchlight
