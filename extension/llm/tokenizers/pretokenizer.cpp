#include "extension/llm/tokenizers/pretokenizer.h"

#include "extension/llm/tokenizers/unicode_class.h"

namespace torchlight {
namespace {

// One decoded character with its classes.
struct Ch {
  uint32_t cp = kInvalidCodePoint;
  size_t size = 0;  // 0: past the end
  UnicodeClass cls = UnicodeClass::kOther;
  bool ws = false;

  bool end() const { return size == 0; }
  bool letter() const { return !end() && is_letter(cls); }
  bool number() const { return !end() && cls == UnicodeClass::kNumber; }
  // [^\s\p{L}\p{N}]
  bool other() const { return !end() && !ws && !is_letter(cls) && cls != UnicodeClass::kNumber; }
  bool cr_or_lf() const { return cp == '\r' || cp == '\n'; }
  // [^\r\n\p{L}\p{N}]
  bool prefix() const {
    return !end() && !cr_or_lf() && !is_letter(cls) && cls != UnicodeClass::kNumber;
  }
  // o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
  bool upper_ish() const {
    return !end() && (cls == UnicodeClass::kLu || cls == UnicodeClass::kLt ||
                      cls == UnicodeClass::kLm || cls == UnicodeClass::kLo ||
                      cls == UnicodeClass::kMark);
  }
  // o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}]
  bool lower_ish() const {
    return !end() && (cls == UnicodeClass::kLl || cls == UnicodeClass::kLm ||
                      cls == UnicodeClass::kLo || cls == UnicodeClass::kMark);
  }
};

Ch char_at(std::string_view text, size_t pos) {
  Ch c;
  const Utf8Char u = decode_utf8(text, pos);
  c.cp = u.code_point;
  c.size = u.size;
  if (c.size != 0) {
    c.cls = unicode_class(c.cp);
    c.ws = is_unicode_whitespace(c.cp);
  }
  return c;
}

// End of the run of characters satisfying `pred` starting at `pos`.
template <typename Pred>
size_t run_end(std::string_view text, size_t pos, Pred pred) {
  while (true) {
    const Ch c = char_at(text, pos);
    if (!pred(c)) return pos;
    pos += c.size;
  }
}

bool ascii_ci_eq(uint32_t cp, char lower) {
  return cp == static_cast<uint32_t>(lower) || cp == static_cast<uint32_t>(lower - 'a' + 'A');
}

// Length of 's|'t|'re|'ve|'m|'ll|'d at `pos` (0 when none). Case-insensitive
// for the (?i:...) groups: ASCII case only, which is what the reference
// implementations match for these letters.
size_t contraction(std::string_view text, size_t pos, bool ignore_case) {
  if (pos >= text.size() || text[pos] != '\'') return 0;
  const Ch a = char_at(text, pos + 1);
  if (a.end()) return 0;
  auto is = [ignore_case](const Ch& c, char lower) {
    return ignore_case ? ascii_ci_eq(c.cp, lower) : c.cp == static_cast<uint32_t>(lower);
  };
  if (is(a, 's') || is(a, 't') || is(a, 'm') || is(a, 'd')) return 1 + a.size;
  const Ch b = char_at(text, pos + 1 + a.size);
  if ((is(a, 'r') && is(b, 'e')) || (is(a, 'v') && is(b, 'e')) || (is(a, 'l') && is(b, 'l'))) {
    return 1 + a.size + b.size;
  }
  return 0;
}

// The whitespace alternatives shared by every pattern, at a whitespace
// character: [\s*[\r\n]+ |] \s+(?!\S) | \s+.
size_t whitespace_piece(std::string_view text, bool newline_alternative) {
  size_t pos = 0;
  size_t last_start = 0;        // start of the run's last character
  size_t after_newline = 0;     // end of the run's last \r or \n, 0 if none
  size_t chars = 0;
  while (true) {
    const Ch c = char_at(text, pos);
    if (c.end() || !c.ws) break;
    last_start = pos;
    pos += c.size;
    ++chars;
    if (c.cr_or_lf()) after_newline = pos;
  }
  // \s*[\r\n]+: backtracking \s* stops just before the run's last newline.
  if (newline_alternative && after_newline != 0) return after_newline;
  // \s+(?!\S): the whole run at the end of the text, else all but its last
  // character (which is then followed by whitespace, not \S).
  if (pos == text.size()) return pos;
  if (chars >= 2) return last_start;
  // \s+
  return pos;
}

size_t gpt2_piece(std::string_view text) {
  if (const size_t n = contraction(text, 0, /*ignore_case=*/false)) return n;
  const Ch c0 = char_at(text, 0);
  const bool space = c0.cp == ' ';
  const Ch c1 = space ? char_at(text, 1) : Ch();
  const size_t start = space ? 1 : 0;
  const Ch& first = space ? c1 : c0;
  //  ?\p{L}+ |  ?\p{N}+ |  ?[^\s\p{L}\p{N}]+ (the space is tried first, then
  // the bare class at c0, which for a space never matches).
  if (first.letter()) return run_end(text, start, [](const Ch& c) { return c.letter(); });
  if (first.number()) return run_end(text, start, [](const Ch& c) { return c.number(); });
  if (first.other()) return run_end(text, start, [](const Ch& c) { return c.other(); });
  return whitespace_piece(text, /*newline_alternative=*/false);
}

size_t cl100k_piece(std::string_view text) {
  if (const size_t n = contraction(text, 0, /*ignore_case=*/true)) return n;
  const Ch c0 = char_at(text, 0);
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (c0.prefix()) {
    const Ch c1 = char_at(text, c0.size);
    if (c1.letter()) return run_end(text, c0.size, [](const Ch& c) { return c.letter(); });
  }
  if (c0.letter()) return run_end(text, 0, [](const Ch& c) { return c.letter(); });
  // \p{N}{1,3}
  if (c0.number()) {
    size_t pos = 0;
    for (int i = 0; i < 3; ++i) {
      const Ch c = char_at(text, pos);
      if (!c.number()) break;
      pos += c.size;
    }
    return pos;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  const size_t start = (c0.cp == ' ' && char_at(text, 1).other()) ? 1 : 0;
  if (char_at(text, start).other()) {
    const size_t pos = run_end(text, start, [](const Ch& c) { return c.other(); });
    return run_end(text, pos, [](const Ch& c) { return c.cr_or_lf(); });
  }
  return whitespace_piece(text, /*newline_alternative=*/true);
}

// o200k's letter alternatives from `pos`: [Upper]*[Lower]+ (first) or
// [Upper]+[Lower]* (second), each followed by an optional contraction.
// Returns the end offset, or 0 when the alternative does not match.
size_t o200k_upper_star_lower_plus(std::string_view text, size_t pos) {
  // [Upper]* is greedy; on failure it backtracks to the last character that
  // is in both classes (Lm, Lo, M), which then starts [Lower]+.
  size_t cur = pos;
  size_t last_both = SIZE_MAX;
  while (true) {
    const Ch c = char_at(text, cur);
    if (!c.upper_ish()) break;
    if (c.lower_ish()) last_both = cur;
    cur += c.size;
  }
  size_t end = 0;
  if (char_at(text, cur).lower_ish()) {
    end = run_end(text, cur, [](const Ch& c) { return c.lower_ish(); });
  } else if (last_both != SIZE_MAX) {
    // Everything after last_both in the run is Lu/Lt, so [Lower]+ is one char.
    end = last_both + char_at(text, last_both).size;
  } else {
    return 0;
  }
  return end + contraction(text, end, /*ignore_case=*/true);
}

size_t o200k_upper_plus_lower_star(std::string_view text, size_t pos) {
  const size_t upper_end = run_end(text, pos, [](const Ch& c) { return c.upper_ish(); });
  if (upper_end == pos) return 0;
  const size_t end = run_end(text, upper_end, [](const Ch& c) { return c.lower_ish(); });
  return end + contraction(text, end, /*ignore_case=*/true);
}

size_t o200k_piece(std::string_view text) {
  const Ch c0 = char_at(text, 0);
  // Each letter alternative tries the optional prefix first, then without.
  if (c0.prefix()) {
    if (const size_t n = o200k_upper_star_lower_plus(text, c0.size)) return n;
  }
  if (const size_t n = o200k_upper_star_lower_plus(text, 0)) return n;
  if (c0.prefix()) {
    if (const size_t n = o200k_upper_plus_lower_star(text, c0.size)) return n;
  }
  if (const size_t n = o200k_upper_plus_lower_star(text, 0)) return n;
  if (c0.number()) {
    size_t pos = 0;
    for (int i = 0; i < 3; ++i) {
      const Ch c = char_at(text, pos);
      if (!c.number()) break;
      pos += c.size;
    }
    return pos;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*
  const size_t start = (c0.cp == ' ' && char_at(text, 1).other()) ? 1 : 0;
  if (char_at(text, start).other()) {
    const size_t pos = run_end(text, start, [](const Ch& c) { return c.other(); });
    return run_end(text, pos, [](const Ch& c) { return c.cr_or_lf() || c.cp == '/'; });
  }
  return whitespace_piece(text, /*newline_alternative=*/true);
}

}  // namespace

const char* to_string(PretokenizePattern pattern) {
  switch (pattern) {
    case PretokenizePattern::kGpt2:
      return "gpt2";
    case PretokenizePattern::kCl100k:
      return "cl100k";
    case PretokenizePattern::kO200k:
      return "o200k";
  }
  return "unknown";
}

bool pretokenize_pattern_from_regex(std::string_view regex, PretokenizePattern* pattern) {
  static constexpr std::string_view kGpt2Regex =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  static constexpr std::string_view kCl100kRegex =
      R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
  if (regex == kGpt2Regex) {
    *pattern = PretokenizePattern::kGpt2;
  } else if (regex == kCl100kRegex) {
    *pattern = PretokenizePattern::kCl100k;
  } else {
    return false;
  }
  return true;
}

size_t next_pretoken(PretokenizePattern pattern, std::string_view text) {
  if (text.empty()) return 0;
  size_t n = 0;
  switch (pattern) {
    case PretokenizePattern::kGpt2:
      n = gpt2_piece(text);
      break;
    case PretokenizePattern::kCl100k:
      n = cl100k_piece(text);
      break;
    case PretokenizePattern::kO200k:
      n = o200k_piece(text);
      break;
  }
  // Every character matches some alternative; guard progress regardless.
  return n == 0 ? char_at(text, 0).size : n;
}

}  // namespace torchlight
