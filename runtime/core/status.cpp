#include "runtime/core/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace torchlight {

Status Status::error(Error code, const char* format, ...) {
  Status status(code);
  va_list args;
  va_start(args, format);
  vsnprintf(status.message_, sizeof(status.message_), format, args);
  va_end(args);
  return status;
}

const char* Status::message() const {
  return message_[0] != '\0' ? message_ : to_string(code_);
}

Status& Status::with_context(const char* format, ...) {
  // Keep the old message, write the context, then append ": <old>", cutting
  // whatever does not fit.
  char old[kMaxMessage];
  const char* previous = message();
  const size_t old_len = strnlen(previous, kMaxMessage - 1);
  std::memcpy(old, previous, old_len);
  old[old_len] = '\0';

  va_list args;
  va_start(args, format);
  const int written = vsnprintf(message_, sizeof(message_), format, args);
  va_end(args);
  size_t used = written < 0 ? 0 : static_cast<size_t>(written);
  if (used > kMaxMessage - 1) used = kMaxMessage - 1;
  const char* parts[2] = {": ", old};
  for (const char* part : parts) {
    const size_t room = kMaxMessage - 1 - used;
    const size_t len = strnlen(part, room);
    std::memcpy(message_ + used, part, len);
    used += len;
  }
  message_[used] = '\0';
  return *this;
}

}  // namespace torchlight
