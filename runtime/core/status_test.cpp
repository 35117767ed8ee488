// Tests for Error, Status and Result<T> (error.h, status.h, result.h),
// including the TL_* propagation macros.
#include "runtime/core/status.h"

#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/error.h"
#include "runtime/core/result.h"

namespace torchlight {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------------------------------------------------------------- Error

TEST(ErrorTest, ToStringNamesEveryCode) {
  const struct {
    Error code;
    uint32_t value;
    const char* name;
  } kCases[] = {
      {Error::kOk, 0x00, "Ok"},
      {Error::kInternal, 0x01, "Internal"},
      {Error::kInvalidState, 0x02, "InvalidState"},
      {Error::kEndOfMethod, 0x03, "EndOfMethod"},
      {Error::kNotSupported, 0x10, "NotSupported"},
      {Error::kNotImplemented, 0x11, "NotImplemented"},
      {Error::kInvalidArgument, 0x12, "InvalidArgument"},
      {Error::kInvalidType, 0x13, "InvalidType"},
      {Error::kOperatorMissing, 0x14, "OperatorMissing"},
      {Error::kBackendMissing, 0x15, "BackendMissing"},
      {Error::kNotFound, 0x20, "NotFound"},
      {Error::kMemoryAllocationFailed, 0x21, "MemoryAllocationFailed"},
      {Error::kAccessFailed, 0x22, "AccessFailed"},
      {Error::kInvalidProgram, 0x23, "InvalidProgram"},
      {Error::kInvalidExternalData, 0x24, "InvalidExternalData"},
      {Error::kOutOfResources, 0x25, "OutOfResources"},
      {Error::kDelegateInvalidCompatibility, 0x30, "DelegateInvalidCompatibility"},
      {Error::kDelegateMemoryAllocationFailed, 0x31, "DelegateMemoryAllocationFailed"},
      {Error::kDelegateInvalidHandle, 0x32, "DelegateInvalidHandle"},
  };
  std::set<std::string> names;
  for (const auto& c : kCases) {
    EXPECT_EQ(static_cast<uint32_t>(c.code), c.value) << c.name;
    ASSERT_NE(to_string(c.code), nullptr);
    EXPECT_STREQ(to_string(c.code), c.name);
    names.insert(to_string(c.code));
  }
  EXPECT_EQ(names.size(), sizeof(kCases) / sizeof(kCases[0])) << "names must be distinct";

  // Every other value in the used ranges has no name.
  std::set<uint32_t> known;
  for (const auto& c : kCases) known.insert(c.value);
  for (uint32_t v = 0; v < 0x100; ++v) {
    if (known.count(v) != 0) continue;
    EXPECT_STREQ(to_string(static_cast<Error>(v)), "Unknown") << v;
  }
  EXPECT_STREQ(to_string(static_cast<Error>(0xffffffffu)), "Unknown");
}

// ---------------------------------------------------------------- Status

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Error::kOk);
  EXPECT_STREQ(s.message(), "Ok");
}

TEST(StatusTest, CodeOnlyMessageIsCodeName) {
  Status s = Error::kInvalidProgram;
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_STREQ(s.message(), "InvalidProgram");
}

TEST(StatusTest, ErrorFormatsMessage) {
  Status s = Status::error(Error::kInvalidArgument, "value %d of '%s': expected %zu, got %.1f", 3,
                           "x", static_cast<size_t>(4), 2.5);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Error::kInvalidArgument);
  EXPECT_STREQ(s.message(), "value 3 of 'x': expected 4, got 2.5");
}

TEST(StatusTest, EmptyFormattedMessageFallsBackToCodeName) {
  Status s = Status::error(Error::kNotFound, "%s", "");
  EXPECT_STREQ(s.message(), "NotFound");
}

TEST(StatusTest, LongMessageIsTruncatedAtMaxMessage) {
  const std::string long_text(Status::kMaxMessage * 2, 'a');
  Status s = Status::error(Error::kInternal, "%s!", long_text.c_str());
  const size_t len = std::strlen(s.message());
  EXPECT_EQ(len, Status::kMaxMessage - 1);
  EXPECT_EQ(std::string(s.message()), long_text.substr(0, Status::kMaxMessage - 1));
  EXPECT_EQ(s.code(), Error::kInternal);

  // Exactly kMaxMessage - 1 characters fit without loss.
  const std::string exact(Status::kMaxMessage - 1, 'b');
  Status e = Status::error(Error::kInternal, "%s", exact.c_str());
  EXPECT_EQ(std::string(e.message()), exact);
  // One more is cut.
  Status over = Status::error(Error::kInternal, "%sc", exact.c_str());
  EXPECT_EQ(std::string(over.message()), exact);
}

TEST(StatusTest, WithContextPrefixesMessage) {
  Status s = Status::error(Error::kInvalidProgram, "value %d is out of range", 7);
  Status& same = s.with_context("loading '%s'", "forward");
  EXPECT_EQ(&same, &s);
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_STREQ(s.message(), "loading 'forward': value 7 is out of range");
}

TEST(StatusTest, WithContextChainedTwice) {
  Status s = Status::error(Error::kNotFound, "no segment %d", 2);
  s.with_context("method '%s'", "forward").with_context("program '%s'", "m.pte");
  EXPECT_STREQ(s.message(), "program 'm.pte': method 'forward': no segment 2");
  EXPECT_EQ(s.code(), Error::kNotFound);
}

TEST(StatusTest, WithContextOnCodeOnlyStatusUsesCodeName) {
  Status s = Error::kOperatorMissing;
  s.with_context("instruction %d", 12);
  EXPECT_STREQ(s.message(), "instruction 12: OperatorMissing");
}

TEST(StatusTest, WithContextNeverCutsRootCause) {
  // A root cause that fills the buffer leaves no room for context at all.
  const std::string root(Status::kMaxMessage - 1, 'o');
  Status s = Status::error(Error::kInternal, "%s", root.c_str());
  s.with_context("ctx");
  EXPECT_EQ(std::string(s.message()), root);
  EXPECT_EQ(s.code(), Error::kInternal);
}

TEST(StatusTest, WithContextLongerThanBufferIsCutInTheMiddle) {
  const std::string ctx = "outer" + std::string(Status::kMaxMessage + 10, 'c') + "inner";
  Status s = Status::error(Error::kInternal, "root cause");
  s.with_context("%s", ctx.c_str());
  const std::string msg = s.message();
  EXPECT_EQ(msg.size(), Status::kMaxMessage - 1);
  EXPECT_THAT(msg, StartsWith("outer"));
  EXPECT_THAT(msg, HasSubstr("..."));
  // The context's own end is past the buffer, so vsnprintf already cut
  // "inner"; what is kept whole is the separator and the root cause.
  EXPECT_THAT(msg, ::testing::EndsWith("c: root cause"));
  EXPECT_EQ(s.code(), Error::kInternal);
}

TEST(StatusTest, WithContextFillingBufferExactlyKeepsRootCause) {
  const std::string ctx(Status::kMaxMessage - 1, 'c');
  Status s = Status::error(Error::kInternal, "inner");
  s.with_context("%s", ctx.c_str());
  const std::string msg = s.message();
  EXPECT_EQ(msg.size(), Status::kMaxMessage - 1);
  EXPECT_THAT(msg, HasSubstr("ccc...ccc"));
  EXPECT_THAT(msg, ::testing::EndsWith("ccc: inner"));
}

TEST(StatusTest, WithContextFittingExactlyIsNotCut) {
  // "<ctx>: root" with exactly kMaxMessage - 1 characters fits untouched.
  const std::string ctx(Status::kMaxMessage - 1 - 2 - 4, 'c');
  Status s = Status::error(Error::kInternal, "root");
  s.with_context("%s", ctx.c_str());
  EXPECT_EQ(std::string(s.message()), ctx + ": root");
  // One more character of context forces a cut, and the root survives it.
  Status t = Status::error(Error::kInternal, "root");
  t.with_context("%sc", ctx.c_str());
  const std::string msg = t.message();
  EXPECT_EQ(msg.size(), Status::kMaxMessage - 1);
  EXPECT_THAT(msg, HasSubstr("..."));
  EXPECT_THAT(msg, ::testing::EndsWith("c: root"));
}

TEST(StatusTest, NestedLongContextsKeepLongRootCauseWhole) {
  // A missing-operator list is the root cause; loaders wrap it several
  // times with long contexts. The whole list must survive.
  std::string root = "missing operators:";
  for (int i = 0; i < 8; ++i) root += " aten::operator_number_" + std::to_string(i) + ".out,";
  ASSERT_LT(root.size(), Status::kMaxMessage - 40);
  Status s = Status::error(Error::kOperatorMissing, "%s", root.c_str());
  const std::string pad(60, 'x');
  for (int level = 0; level < 8; ++level) {
    s.with_context("level %d %s", level, pad.c_str());
    const std::string msg = s.message();
    ASSERT_LE(msg.size(), Status::kMaxMessage - 1) << level;
    EXPECT_THAT(msg, ::testing::EndsWith(": " + root)) << level;
    // The newest context stays in front.
    EXPECT_THAT(msg, StartsWith("level " + std::to_string(level) + " ")) << level;
  }
  const std::string msg = s.message();
  EXPECT_EQ(msg.size(), Status::kMaxMessage - 1);
  EXPECT_THAT(msg, HasSubstr("..."));
  // The innermost context just before the root is kept (its end, at least).
  EXPECT_THAT(msg, HasSubstr(pad.substr(0, 10) + ": missing operators:"));
  EXPECT_EQ(s.code(), Error::kOperatorMissing);
}

TEST(StatusTest, NestedContextsOnCodeOnlyStatusKeepCodeName) {
  Status s = Error::kOperatorMissing;
  const std::string pad(150, 'p');
  for (int level = 0; level < 5; ++level) s.with_context("%d %s", level, pad.c_str());
  const std::string msg = s.message();
  EXPECT_THAT(msg, StartsWith("4 p"));
  EXPECT_THAT(msg, ::testing::EndsWith("pp: OperatorMissing"));
  EXPECT_LE(msg.size(), Status::kMaxMessage - 1);
}

TEST(StatusTest, CopiedStatusCutsTheSameRootCause) {
  std::string root(300, 'r');
  Status a = Status::error(Error::kInvalidProgram, "%s", root.c_str());
  a.with_context("first");
  Status b = a;
  b.with_context("%s", std::string(200, 's').c_str());
  EXPECT_THAT(std::string(b.message()), ::testing::EndsWith(": " + root));
  EXPECT_THAT(std::string(b.message()), StartsWith("sss"));
}

TEST(StatusTest, CopyKeepsCodeAndMessage) {
  Status a = Status::error(Error::kAccessFailed, "read of '%s' failed", "f.bin");
  Status b = a;
  a.with_context("changed");
  EXPECT_EQ(b.code(), Error::kAccessFailed);
  EXPECT_STREQ(b.message(), "read of 'f.bin' failed");
  EXPECT_STREQ(a.message(), "changed: read of 'f.bin' failed");
}

// ---------------------------------------------------------------- Result

TEST(ResultTest, HoldsValue) {
  Result<int> r = 42;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.error(), Error::kOk);
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.get(), 42);
  EXPECT_EQ(*r, 42);
  *r = 7;
  EXPECT_EQ(r.get(), 7);
  const Result<int>& cr = r;
  EXPECT_EQ(cr.get(), 7);
  EXPECT_EQ(*cr, 7);
}

TEST(ResultTest, HoldsCopiedValue) {
  const std::string text = "hello";
  Result<std::string> r = text;
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, "hello");
  EXPECT_EQ(r->size(), 5u);
  EXPECT_EQ(text, "hello");
}

TEST(ResultTest, HoldsStatus) {
  Result<int> r = Status::error(Error::kNotFound, "no method '%s'", "fwd");
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), Error::kNotFound);
  EXPECT_STREQ(r.status().message(), "no method 'fwd'");
}

TEST(ResultTest, HoldsBareErrorCode) {
  Result<int> r = Error::kInvalidType;
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.error(), Error::kInvalidType);
  EXPECT_STREQ(r.status().message(), "InvalidType");
}

TEST(ResultTest, OkStatusBecomesInternalError) {
  Result<int> a = Status();
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(a.error(), Error::kInternal);
  EXPECT_THAT(a.status().message(), HasSubstr("ok Status"));
  Result<int> b = Error::kOk;
  EXPECT_FALSE(b.ok());
  EXPECT_EQ(b.error(), Error::kInternal);
}

TEST(ResultTest, MoveOnlyPayload) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(5);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(**r, 5);
  int* raw = r->get();

  Result<std::unique_ptr<int>> moved = std::move(r);
  ASSERT_TRUE(moved.ok());
  EXPECT_EQ(moved->get(), raw);
  std::unique_ptr<int> taken = std::move(moved.get());
  EXPECT_EQ(taken.get(), raw);
  EXPECT_EQ(moved->get(), nullptr);

  Result<std::unique_ptr<int>> err = Status::error(Error::kNotFound, "x");
  Result<std::unique_ptr<int>> err2 = std::move(err);
  EXPECT_FALSE(err2.ok());
  EXPECT_EQ(err2.error(), Error::kNotFound);
  EXPECT_STREQ(err2.status().message(), "x");
}

// Counts live instances, so we can check Result constructs and destroys
// its payload exactly once.
struct Tracked {
  static int live;
  static int destroyed;
  int value;
  explicit Tracked(int v) : value(v) { ++live; }
  Tracked(Tracked&& other) noexcept : value(other.value) {
    other.value = -1;
    ++live;
  }
  Tracked(const Tracked&) = delete;
  Tracked& operator=(const Tracked&) = delete;
  ~Tracked() {
    --live;
    ++destroyed;
  }
};
int Tracked::live = 0;
int Tracked::destroyed = 0;

TEST(ResultTest, PayloadDestroyedExactlyOnce) {
  Tracked::live = 0;
  Tracked::destroyed = 0;
  {
    Result<Tracked> r = Tracked(1);
    EXPECT_EQ(Tracked::live, 1);
    EXPECT_EQ(r->value, 1);
  }
  EXPECT_EQ(Tracked::live, 0);
  {
    Result<Tracked> r = Error::kNotFound;  // No payload ever constructed.
    EXPECT_EQ(Tracked::live, 0);
  }
  EXPECT_EQ(Tracked::live, 0);
}

TEST(ResultTest, MoveAssignDestroysOldPayload) {
  Tracked::live = 0;
  {
    Result<Tracked> a = Tracked(1);
    Result<Tracked> b = Tracked(2);
    EXPECT_EQ(Tracked::live, 2);
    a = std::move(b);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->value, 2);
    EXPECT_EQ(b->value, -1);  // Moved-from, still alive until b dies.
    EXPECT_EQ(Tracked::live, 2);

    // Assigning an error over a value destroys the value.
    a = Result<Tracked>(Status::error(Error::kAccessFailed, "gone"));
    EXPECT_FALSE(a.ok());
    EXPECT_EQ(a.error(), Error::kAccessFailed);
    EXPECT_STREQ(a.status().message(), "gone");
    EXPECT_EQ(Tracked::live, 1);

    // And a value over an error.
    a = Result<Tracked>(Tracked(3));
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->value, 3);
    EXPECT_TRUE(a.status().ok());
    EXPECT_EQ(Tracked::live, 2);

    // Self-move leaves the value in place.
    Result<Tracked>& self = a;
    a = std::move(self);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->value, 3);
  }
  EXPECT_EQ(Tracked::live, 0);
}

static_assert(!std::is_copy_constructible<Result<int>>::value, "Result must be move-only");
static_assert(!std::is_copy_assignable<Result<int>>::value, "Result must be move-only");
static_assert(std::is_move_constructible<Result<std::unique_ptr<int>>>::value, "");

// ---------------------------------------------------------------- Macros

int g_evaluations = 0;
int g_reached_end = 0;

Status check_positive(int v) {
  ++g_evaluations;
  TL_CHECK_OR_RETURN(v > 0, Error::kInvalidArgument, "value %d must be positive", v);
  return Error::kOk;
}

Status two_checks(int a, int b) {
  TL_RETURN_IF_ERROR(check_positive(a));
  TL_RETURN_IF_ERROR(check_positive(b));
  ++g_reached_end;
  return Error::kOk;
}

TEST(MacroTest, CheckOrReturnFormatsMessage) {
  g_evaluations = 0;
  EXPECT_TRUE(check_positive(1).ok());
  Status s = check_positive(-4);
  EXPECT_EQ(s.code(), Error::kInvalidArgument);
  EXPECT_STREQ(s.message(), "value -4 must be positive");
  EXPECT_EQ(g_evaluations, 2);
}

TEST(MacroTest, ReturnIfErrorStopsAtFirstFailure) {
  g_evaluations = 0;
  g_reached_end = 0;
  EXPECT_TRUE(two_checks(1, 2).ok());
  EXPECT_EQ(g_evaluations, 2);
  EXPECT_EQ(g_reached_end, 1);

  g_evaluations = 0;
  g_reached_end = 0;
  Status s = two_checks(-1, 2);
  EXPECT_EQ(s.code(), Error::kInvalidArgument);
  EXPECT_STREQ(s.message(), "value -1 must be positive");
  EXPECT_EQ(g_evaluations, 1);  // Each expression evaluated once; b never checked.
  EXPECT_EQ(g_reached_end, 0);

  Status t = two_checks(3, 0);
  EXPECT_STREQ(t.message(), "value 0 must be positive");
  EXPECT_EQ(g_reached_end, 0);
}

Result<std::unique_ptr<int>> make_box(int v) {
  ++g_evaluations;
  if (v < 0) return Status::error(Error::kInvalidArgument, "negative box %d", v);
  return std::make_unique<int>(v);
}

// Unwraps in a function returning Result.
Result<int> sum_boxes(int a, int b) {
  TL_ASSIGN_OR_RETURN(std::unique_ptr<int> x, make_box(a));
  TL_ASSIGN_OR_RETURN(auto y, make_box(b));
  ++g_reached_end;
  return *x + *y;
}

// Unwraps into an existing variable in a function returning Status.
Status store_box(int v, std::unique_ptr<int>* out) {
  std::unique_ptr<int> local;
  TL_ASSIGN_OR_RETURN(local, make_box(v));
  *out = std::move(local);
  return Error::kOk;
}

TEST(MacroTest, AssignOrReturnUnwrapsMoveOnlyValues) {
  g_evaluations = 0;
  g_reached_end = 0;
  Result<int> r = sum_boxes(2, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 5);
  EXPECT_EQ(g_evaluations, 2);
  EXPECT_EQ(g_reached_end, 1);

  g_evaluations = 0;
  g_reached_end = 0;
  Result<int> e = sum_boxes(-2, 3);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.error(), Error::kInvalidArgument);
  EXPECT_STREQ(e.status().message(), "negative box -2");
  EXPECT_EQ(g_evaluations, 1);
  EXPECT_EQ(g_reached_end, 0);

  Result<int> e2 = sum_boxes(1, -9);
  EXPECT_STREQ(e2.status().message(), "negative box -9");
  EXPECT_EQ(g_reached_end, 0);
}

TEST(MacroTest, AssignOrReturnInStatusFunction) {
  std::unique_ptr<int> out;
  ASSERT_TRUE(store_box(8, &out).ok());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(*out, 8);
  std::unique_ptr<int> untouched;
  Status s = store_box(-1, &untouched);
  EXPECT_EQ(s.code(), Error::kInvalidArgument);
  EXPECT_THAT(s.message(), StartsWith("negative box"));
  EXPECT_EQ(untouched, nullptr);
}

}  // namespace
}  // namespace torchlight
