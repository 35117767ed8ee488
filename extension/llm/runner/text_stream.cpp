#include "extension/llm/runner/text_stream.h"

#include <algorithm>
#include <utility>

namespace torchlight {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the UTF-8 sequence a lead byte starts; 0 for a byte that cannot
// start one (a continuation byte, C0/C1, F5..FF).
size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether `byte` may follow `lead` as continuation number `index` (1-based).
// The second byte's range excludes overlongs, surrogates and values above
// U+10FFFF.
bool valid_continuation(unsigned char lead, size_t index, unsigned char byte) {
  if (index == 1) {
    if (lead == 0xE0) return byte >= 0xA0 && byte <= 0xBF;
    if (lead == 0xED) return byte >= 0x80 && byte <= 0x9F;
    if (lead == 0xF0) return byte >= 0x90 && byte <= 0xBF;
    if (lead == 0xF4) return byte >= 0x80 && byte <= 0x8F;
  }
  return byte >= 0x80 && byte <= 0xBF;
}

}  // namespace

TextStream::TextStream(std::vector<std::string> stop_strings)
    : stop_strings_(std::move(stop_strings)) {
  for (const std::string& stop : stop_strings_) longest_stop_ = std::max(longest_stop_, stop.size());
  pending_.reserve(2 * longest_stop_ + 64);
  utf8_tail_.reserve(64);
  out_.reserve(256);
}

void TextStream::reset() {
  pending_.clear();
  utf8_tail_.clear();
  out_.clear();
  matched_ = -1;
}

std::string_view TextStream::push(std::string_view bytes) {
  out_.clear();
  if (stopped()) return {};
  if (stop_strings_.empty()) {
    release(bytes);
    return out_;
  }
  pending_.append(bytes.data(), bytes.size());

  // The earliest complete stop string ends generation; text before it goes out.
  size_t first = std::string::npos;
  for (size_t i = 0; i < stop_strings_.size(); ++i) {
    const size_t at = pending_.find(stop_strings_[i]);
    if (at < first) {
      first = at;
      matched_ = static_cast<int>(i);
    }
  }
  if (first != std::string::npos) {
    release(std::string_view(pending_).substr(0, first));
    pending_.clear();
    return out_;
  }

  // Hold the longest suffix that is a proper prefix of some stop string.
  size_t hold = 0;
  const size_t max_hold = std::min(pending_.size(), longest_stop_ - 1);
  for (size_t len = max_hold; len > 0 && hold == 0; --len) {
    const std::string_view suffix = std::string_view(pending_).substr(pending_.size() - len);
    for (const std::string& stop : stop_strings_) {
      if (stop.size() > len && std::string_view(stop).substr(0, len) == suffix) {
        hold = len;
        break;
      }
    }
  }
  release(std::string_view(pending_).substr(0, pending_.size() - hold));
  pending_.erase(0, pending_.size() - hold);
  return out_;
}

std::string_view TextStream::finish() {
  out_.clear();
  if (!stopped()) release(pending_);
  pending_.clear();
  drain_utf8(/*final=*/true);
  return out_;
}

void TextStream::release(std::string_view bytes) {
  utf8_tail_.append(bytes.data(), bytes.size());
  drain_utf8(/*final=*/false);
}

void TextStream::drain_utf8(bool final) {
  const std::string& in = utf8_tail_;
  size_t i = 0;
  while (i < in.size()) {
    const auto lead = static_cast<unsigned char>(in[i]);
    const size_t length = sequence_length(lead);
    if (length == 0) {
      out_ += kReplacement;
      ++i;
      continue;
    }
    size_t valid = 1;  // Bytes of the sequence seen so far that fit.
    while (valid < length && i + valid < in.size() &&
           valid_continuation(lead, valid, static_cast<unsigned char>(in[i + valid]))) {
      ++valid;
    }
    if (valid == length) {
      out_.append(in, i, length);
      i += length;
    } else if (i + valid == in.size() && !final) {
      break;  // Incomplete so far: wait for the next token's bytes.
    } else {
      out_ += kReplacement;  // The maximal subpart that fit, as one U+FFFD.
      i += valid;
    }
  }
  utf8_tail_.erase(0, i);
}

}  // namespace torchlight
