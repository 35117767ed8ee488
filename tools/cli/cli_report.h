// Shared output helpers of the CLI: the one-line error report and the text
// forms of dtypes, shapes and scalar values used by every subcommand.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/evalue.h"
#include "runtime/core/status.h"
#include "runtime/executor/method_meta.h"

namespace torchlight {
namespace cli {

/// Exit status of every failure.
constexpr int kExitFailure = 1;

/// Prints "error: FILE: MESSAGE" as one line on stderr and returns
/// kExitFailure. FILE is left out when empty or when the message already
/// names it; newlines in the message are flattened so it stays one line.
int report_error(const std::string& file, const std::string& message);
int report_error(const std::string& file, const Status& status);

/// `status` with "FILE: " put in front of its message, unless the message
/// already names FILE. For errors whose cause is a particular file.
Status blame(const std::string& file, Status status);

/// "float32 [2, 3]"; a DYNAMIC_BOUND tensor marks its upper bounds, as in
/// "float32 [<=8, <=3]", and a DYNAMIC_UNBOUND one adds " (unbounded)".
std::string describe_tensor_info(const TensorInfo& info);

/// "[2, 3]" for a list of sizes.
std::string describe_sizes(Span<const SizesType> sizes);

/// An Int, Double or Bool as "Int 3", "Double 0.5", "Bool true"; other
/// values as their tag name.
std::string describe_scalar(const EValue& value);

/// 1234567 -> "1,234,567".
std::string with_commas(uint64_t n);

}  // namespace cli
}  // namespace torchlight
