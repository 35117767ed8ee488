#include "runtime/core/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace torchlight {

namespace {

constexpr char kSeparator[] = ": ";
constexpr size_t kSeparatorLength = sizeof(kSeparator) - 1;
// Marks where contexts were cut.
constexpr char kCut[] = "...";
constexpr size_t kCutLength = sizeof(kCut) - 1;

}  // namespace

const char* Status::message() const {
  return message_[0] != '\0' ? message_ : to_string(code_);
}

#if !TORCHLIGHT_NO_ERROR_MESSAGES
Status Status::error(Error code, const char* format, ...) {
  Status status(code);
  va_list args;
  va_start(args, format);
  vsnprintf(status.message_, sizeof(status.message_), format, args);
  va_end(args);
  status.root_length_ = static_cast<uint16_t>(strnlen(status.message_, kMaxMessage - 1));
  return status;
}

Status& Status::with_context(const char* format, ...) {
  // The message is "<contexts><root>", where contexts is "ctx: ctx: ... "
  // (each ending in the separator). Build "<new>: <contexts>" and, if the
  // whole does not fit, cut the contexts in the middle, never the root.
  const char* previous = message();
  const size_t previous_length = strnlen(previous, kMaxMessage - 1);
  const size_t root_length = message_[0] != '\0' ? root_length_ : previous_length;
  const size_t old_contexts_length = previous_length - root_length;

  char contexts[2 * kMaxMessage];
  va_list args;
  va_start(args, format);
  const int written = vsnprintf(contexts, kMaxMessage, format, args);
  va_end(args);
  size_t contexts_length = written < 0 ? 0 : static_cast<size_t>(written);
  if (contexts_length > kMaxMessage - 1) contexts_length = kMaxMessage - 1;
  std::memcpy(contexts + contexts_length, kSeparator, kSeparatorLength);
  contexts_length += kSeparatorLength;
  std::memcpy(contexts + contexts_length, previous, old_contexts_length);
  contexts_length += old_contexts_length;

  char result[kMaxMessage];
  size_t used = 0;
  const size_t room = kMaxMessage - 1 - root_length;
  if (contexts_length <= room) {
    std::memcpy(result, contexts, contexts_length);
    used = contexts_length;
  } else if (room > kCutLength + kSeparatorLength) {
    // Keep the outermost and the innermost context; the tail still ends in
    // the separator before the root.
    const size_t head = (room - kCutLength) / 2;
    const size_t tail = room - kCutLength - head;
    std::memcpy(result, contexts, head);
    std::memcpy(result + head, kCut, kCutLength);
    std::memcpy(result + head + kCutLength, contexts + contexts_length - tail, tail);
    used = room;
  }  // Else the root alone fills the buffer: drop every context.
  std::memcpy(result + used, previous + old_contexts_length, root_length);
  used += root_length;
  result[used] = '\0';

  std::memcpy(message_, result, used + 1);
  root_length_ = static_cast<uint16_t>(root_length);
  return *this;
}

#endif  // !TORCHLIGHT_NO_ERROR_MESSAGES

}  // namespace torchlight
