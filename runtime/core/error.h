// Error codes shared by every layer of the runtime.
//
// Codes are grouped by value range and are distinct wherever a caller could
// act on the difference: a corrupt file, a missing operator and a wrong input
// are different codes. The human-readable facts travel in Status (status.h).
#pragma once

#include <cstdint>

namespace torchlight {

enum class Error : uint32_t {
  kOk = 0x00,

  // System and internal state.
  kInternal = 0x01,      // A bug in Torchlight; an invariant did not hold.
  kInvalidState = 0x02,  // The object is not ready for this call.
  kEndOfMethod = 0x03,   // Stepping past the last instruction.

  // Caller errors: the call's arguments are wrong.
  kNotSupported = 0x10,     // Valid request this build does not support.
  kNotImplemented = 0x11,   // Recognised but not written yet.
  kInvalidArgument = 0x12,  // A value (shape, index, option) is out of range.
  kInvalidType = 0x13,      // A value has the wrong type or dtype.
  kOperatorMissing = 0x14,  // No kernel is registered for an operator.
  kBackendMissing = 0x15,   // No backend is registered under a delegate's id.

  // Resources and files.
  kNotFound = 0x20,                // A file, method or key does not exist.
  kMemoryAllocationFailed = 0x21,  // An allocator ran out of room.
  kAccessFailed = 0x22,            // Reading a file or segment failed.
  kInvalidProgram = 0x23,          // The .pte is corrupt or inconsistent.
  kInvalidExternalData = 0x24,     // External (.ptd / named) data is bad.
  kOutOfResources = 0x25,          // A fixed-capacity table is full.

  // Delegates.
  kDelegateInvalidCompatibility = 0x30,  // Blob made for another version.
  kDelegateMemoryAllocationFailed = 0x31,
  kDelegateInvalidHandle = 0x32,

  // Upstream ExecuTorch's spellings of the same codes, so code written
  // against executorch::runtime::Error compiles unchanged.
  Ok = kOk,
  Internal = kInternal,
  InvalidState = kInvalidState,
  EndOfMethod = kEndOfMethod,
  NotSupported = kNotSupported,
  NotImplemented = kNotImplemented,
  InvalidArgument = kInvalidArgument,
  InvalidType = kInvalidType,
  OperatorMissing = kOperatorMissing,
  NotFound = kNotFound,
  MemoryAllocationFailed = kMemoryAllocationFailed,
  AccessFailed = kAccessFailed,
  InvalidProgram = kInvalidProgram,
  InvalidExternalData = kInvalidExternalData,
  OutOfResources = kOutOfResources,
  DelegateInvalidCompatibility = kDelegateInvalidCompatibility,
  DelegateMemoryAllocationFailed = kDelegateMemoryAllocationFailed,
  DelegateInvalidHandle = kDelegateInvalidHandle,
};

/// A short static name for the code, e.g. "InvalidProgram". Never null.
const char* to_string(Error error);

}  // namespace torchlight
