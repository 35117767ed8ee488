// TextStream: turns the bytes of generated tokens into text that is safe to
// print as it arrives.
//
// Two things are held back until they are settled:
//   - bytes that could be the start of a stop string: if the stop string
//     completes, nothing from it on is ever printed; if it does not, the
//     held bytes are released as soon as they cannot begin one;
//   - an incomplete UTF-8 character at the end (a byte-level or
//     byte-fallback token may carry part of one), released when complete.
// Invalid UTF-8 is replaced by U+FFFD, one per maximal invalid subpart (as
// Python's errors="replace" does), so the output is always valid UTF-8.
//
// Stop strings match raw token bytes, so one may span token boundaries.
// All buffers are reserved up front; push() allocates only when a single
// piece is longer than anything seen before.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace torchlight {

class TextStream {
 public:
  /// `stop_strings` must not be empty strings (the generator checks).
  explicit TextStream(std::vector<std::string> stop_strings = {});

  /// Forgets held bytes and a matched stop string; keeps the stop strings.
  void reset();

  /// Adds the bytes of one token. Returns the text that is now ready to
  /// print, possibly empty; the view is valid until the next call. After a
  /// stop string completes, stopped() is true, the returned text ends just
  /// before it, and further pushes return "".
  std::string_view push(std::string_view bytes);

  /// Releases what is held at the end of generation: bytes that were
  /// waiting for a stop string that never completed, and an incomplete
  /// UTF-8 character (as U+FFFD). The view is valid until the next call.
  std::string_view finish();

  bool stopped() const { return matched_ >= 0; }
  /// Index into the stop strings of the one that completed, -1 if none.
  int matched_stop() const { return matched_; }

 private:
  // Validates `bytes` as UTF-8 after the held incomplete character and
  // appends the printable part to out_.
  void release(std::string_view bytes);
  // Appends the UTF-8 complete prefix of utf8_tail_ to out_ and keeps the
  // rest; with `final`, an incomplete rest becomes U+FFFD.
  void drain_utf8(bool final);

  std::vector<std::string> stop_strings_;
  size_t longest_stop_ = 0;
  std::string pending_;     // bytes that may begin a stop string
  std::string utf8_tail_;   // released bytes not yet validated as UTF-8
  std::string out_;         // what the last call returned
  int matched_ = -1;
};

}  // namespace torchlight
