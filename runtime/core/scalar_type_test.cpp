// Tests for ScalarType (scalar_type.h). The promotion and casting tables
// below were produced by torch 2.6 in the toolchain, with:
//
//   names = ["uint8", "int8", "int16", "int32", "int64", "float16",
//            "float32", "float64", "bool", "bfloat16"]
//   [[str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
//     for b in names] for a in names]
//   (and torch.can_cast over kCastNames in the same way)
#include "runtime/core/scalar_type.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace torchlight {
namespace {

struct TypeInfo {
  int value;
  const char* name;
  size_t size;
};

// Every value the schema defines, with PyTorch's name and element size.
constexpr TypeInfo kValidTypes[] = {
    {0, "uint8", 1},           {1, "int8", 1},
    {2, "int16", 2},           {3, "int32", 4},
    {4, "int64", 8},           {5, "float16", 2},
    {6, "float32", 4},         {7, "float64", 8},
    {11, "bool", 1},           {12, "qint8", 1},
    {13, "quint8", 1},         {14, "qint32", 4},
    {15, "bfloat16", 2},       {16, "quint4x2", 1},
    {17, "quint2x4", 1},       {22, "bits16", 2},
    {23, "float8_e5m2", 1},    {24, "float8_e4m3fn", 1},
    {25, "float8_e5m2fnuz", 1}, {26, "float8_e4m3fnuz", 1},
    {27, "uint16", 2},         {28, "uint32", 4},
    {29, "uint64", 8},
};

const TypeInfo* find_valid(int value) {
  for (const TypeInfo& t : kValidTypes) {
    if (t.value == value) return &t;
  }
  return nullptr;
}

// The ScalarType PyTorch calls `name`; fails the test when there is none.
ScalarType type_named(const std::string& name) {
  for (const TypeInfo& t : kValidTypes) {
    if (name == t.name) return static_cast<ScalarType>(t.value);
  }
  ADD_FAILURE() << "no ScalarType named " << name;
  return ScalarType::kByte;
}

TEST(ScalarTypeTest, ElementSizeOfEveryValidType) {
  for (const TypeInfo& t : kValidTypes) {
    const ScalarType type = static_cast<ScalarType>(t.value);
    EXPECT_TRUE(is_valid(type)) << t.name;
    EXPECT_EQ(element_size(type), t.size) << t.name;
    EXPECT_STREQ(to_string(type), t.name);
  }
}

TEST(ScalarTypeTest, EveryOtherValueIsInvalid) {
  int valid = 0;
  for (int v = -128; v <= 127; ++v) {
    const ScalarType type = static_cast<ScalarType>(v);
    if (find_valid(v) != nullptr) {
      ++valid;
      continue;
    }
    EXPECT_FALSE(is_valid(type)) << v;
    EXPECT_EQ(element_size(type), 0u) << v;
    EXPECT_EQ(std::string(to_string(type)), "invalid(" + std::to_string(v) + ")");
    EXPECT_FALSE(is_floating_point(type)) << v;
    EXPECT_FALSE(is_integral(type)) << v;
  }
  EXPECT_EQ(valid, 23);
}

TEST(ScalarTypeTest, GapsInTheEnumAreInvalid) {
  for (int v : {8, 9, 10, 18, 19, 20, 21, 30, -1, 127}) {
    EXPECT_FALSE(is_valid(static_cast<ScalarType>(v))) << v;
    EXPECT_EQ(element_size(static_cast<ScalarType>(v)), 0u) << v;
  }
  EXPECT_STREQ(to_string(static_cast<ScalarType>(9)), "invalid(9)");
  EXPECT_STREQ(to_string(static_cast<ScalarType>(-7)), "invalid(-7)");
}

TEST(ScalarTypeTest, FloatingAndIntegralClasses) {
  const std::set<std::string> floating = {"float16", "float32", "float64", "bfloat16"};
  const std::set<std::string> integral = {"uint8", "int8",   "int16",  "int32",
                                          "int64", "uint16", "uint32", "uint64"};
  for (const TypeInfo& t : kValidTypes) {
    const ScalarType type = static_cast<ScalarType>(t.value);
    EXPECT_EQ(is_floating_point(type), floating.count(t.name) == 1) << t.name;
    EXPECT_EQ(is_integral(type), integral.count(t.name) == 1) << t.name;
  }
}

// Row/column order of kTorchPromotion.
constexpr ScalarType kPromoteOrder[10] = {
    ScalarType::kByte,  ScalarType::kChar,  ScalarType::kShort,  ScalarType::kInt,
    ScalarType::kLong,  ScalarType::kHalf,  ScalarType::kFloat,  ScalarType::kDouble,
    ScalarType::kBool,  ScalarType::kBFloat16,
};

// torch.promote_types(row, col).
const char* const kTorchPromotion[10][10] = {
    /* uint8 */ {"uint8", "int16", "int16", "int32", "int64", "float16", "float32", "float64",
                 "uint8", "bfloat16"},
    /* int8 */ {"int16", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
                "int8", "bfloat16"},
    /* int16 */ {"int16", "int16", "int16", "int32", "int64", "float16", "float32", "float64",
                 "int16", "bfloat16"},
    /* int32 */ {"int32", "int32", "int32", "int32", "int64", "float16", "float32", "float64",
                 "int32", "bfloat16"},
    /* int64 */ {"int64", "int64", "int64", "int64", "int64", "float16", "float32", "float64",
                 "int64", "bfloat16"},
    /* float16 */ {"float16", "float16", "float16", "float16", "float16", "float16", "float32",
                   "float64", "float16", "float32"},
    /* float32 */ {"float32", "float32", "float32", "float32", "float32", "float32", "float32",
                   "float64", "float32", "float32"},
    /* float64 */ {"float64", "float64", "float64", "float64", "float64", "float64", "float64",
                   "float64", "float64", "float64"},
    /* bool */ {"uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
                "bool", "bfloat16"},
    /* bfloat16 */ {"bfloat16", "bfloat16", "bfloat16", "bfloat16", "bfloat16", "float32",
                    "float32", "float64", "bfloat16", "bfloat16"},
};

TEST(ScalarTypeTest, PromoteTypesMatchesTorchFullTable) {
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      ScalarType out = ScalarType::kQInt8;  // Sentinel: never a promotion result.
      ASSERT_TRUE(promote_types(kPromoteOrder[i], kPromoteOrder[j], &out))
          << to_string(kPromoteOrder[i]) << ", " << to_string(kPromoteOrder[j]);
      EXPECT_EQ(out, type_named(kTorchPromotion[i][j]))
          << "promote_types(" << to_string(kPromoteOrder[i]) << ", "
          << to_string(kPromoteOrder[j]) << ") = " << to_string(out) << ", torch says "
          << kTorchPromotion[i][j];
    }
  }
}

TEST(ScalarTypeTest, PromoteTypesRejectsOtherTypesWithoutWriting) {
  const ScalarType others[] = {ScalarType::kQInt8,      ScalarType::kQUInt8,
                               ScalarType::kQInt32,     ScalarType::kQUInt4x2,
                               ScalarType::kQUInt2x4,   ScalarType::kBits16,
                               ScalarType::kFloat8e5m2, ScalarType::kFloat8e4m3fn,
                               ScalarType::kUInt16,     ScalarType::kUInt32,
                               ScalarType::kUInt64,     static_cast<ScalarType>(9),
                               static_cast<ScalarType>(-1)};
  for (ScalarType other : others) {
    for (ScalarType known : kPromoteOrder) {
      ScalarType out = ScalarType::kBool;
      EXPECT_FALSE(promote_types(other, known, &out)) << to_string(other);
      EXPECT_FALSE(promote_types(known, other, &out)) << to_string(other);
      EXPECT_EQ(out, ScalarType::kBool);
    }
  }
}

// Row/column order of kTorchCanCast: every schema type torch can name.
const char* const kCastNames[23] = {
    "uint8",         "int8",            "int16",           "int32",    "int64",
    "float16",       "float32",         "float64",         "bool",     "bfloat16",
    "uint16",        "uint32",          "uint64",          "float8_e5m2",
    "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz", "qint8",    "quint8",
    "qint32",        "quint4x2",        "quint2x4",        "bits16",
};

// torch.can_cast(row, col).
constexpr bool kTorchCanCast[23][23] = {
    /* uint8 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* int8 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* int16 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* int32 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* int64 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float16 */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float32 */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float64 */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* bool */ {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* bfloat16 */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* uint16 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* uint32 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* uint64 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float8_e5m2 */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float8_e4m3fn */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float8_e5m2fnuz */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* float8_e4m3fnuz */ {0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* qint8 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* quint8 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* qint32 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* quint4x2 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* quint2x4 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    /* bits16 */ {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
};

TEST(ScalarTypeTest, CanCastMatchesTorchFullTable) {
  for (int i = 0; i < 23; ++i) {
    for (int j = 0; j < 23; ++j) {
      const ScalarType from = type_named(kCastNames[i]);
      const ScalarType to = type_named(kCastNames[j]);
      EXPECT_EQ(can_cast(from, to), kTorchCanCast[i][j])
          << "can_cast(" << kCastNames[i] << ", " << kCastNames[j] << ")";
    }
  }
}

}  // namespace
}  // namespace torchlight
