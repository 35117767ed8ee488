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
  char old[kMaxMessage];
  snprintf(old, sizeof(old), "%s", message());
  va_list args;
  va_start(args, format);
  int written = vsnprintf(message_, sizeof(message_), format, args);
  va_end(args);
  if (written >= 0 && static_cast<size_t>(written) < sizeof(message_)) {
    snprintf(message_ + written, sizeof(message_) - written, ": %s", old);
  }
  return *this;
}

}  // namespace torchlight
