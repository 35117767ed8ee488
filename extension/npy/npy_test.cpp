#include "extension/npy/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "extension/data_loader/temp_file_for_test.h"
#include "extension/npy/npy_header.h"
#include "extension/tensor/tensor_fill.h"
#include "extension/tensor/tensor_format.h"
#include "runtime/core/half.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

// Files written by numpy 2.2 (np.save / numpy.lib.format.write_array) in the
// toolchain, embedded byte for byte.
// F4x2x3: np.save(np.arange(6, dtype='<f4').reshape(2, 3) * 0.5)
const std::string kF4x2x3(
    "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape':"
    " (2, 3), }                                                          \x0a"
    "\x00\x00\x00\x00\x00\x00\x00\x3f\x00\x00\x80\x3f\x00\x00\xc0\x3f\x00\x00"
    "\x00@\x00\x00 @",
    152);
// B1: np.save(np.array([True, False, True]))
const std::string kB1(
    "\x93NUMPY\x01\x00v\x00{'descr': '|b1', 'fortran_order': False, 'shape':"
    " (3,), }                                                            \x0a"
    "\x01\x00\x01",
    131);
// I8Scalar: np.save(np.array(-7, dtype='<i8'))
const std::string kI8Scalar(
    "\x93NUMPY\x01\x00v\x00{'descr': '<i8', 'fortran_order': False, 'shape':"
    " (), }                                                              \x0a"
    "\xf9\xff\xff\xff\xff\xff\xff\xff",
    136);
// U1Empty: np.save(np.zeros((0, 3), dtype='|u1'))
const std::string kU1Empty(
    "\x93NUMPY\x01\x00v\x00{'descr': '|u1', 'fortran_order': False, 'shape':"
    " (0, 3), }                                                          \x0a",
    128);
// F2V2: format.write_array(np.array([1.0, -2.5], dtype='<f2'), version=(2, 0))
const std::string kF2V2(
    "\x93NUMPY\x02\x00t\x00\x00\x00{'descr': '<f2', 'fortran_order': False, "
    "'shape': (2,), }                                                       "
    "   \x0a\x00<\x00\xc1",
    132);
// U2V3: format.write_array(np.array([[1], [65535]], dtype='<u2'), version=(3, 0))
const std::string kU2V3(
    "\x93NUMPY\x03\x00t\x00\x00\x00{'descr': '<u2', 'fortran_order': False, "
    "'shape': (2, 1), }                                                     "
    "   \x0a\x01\x00\xff\xff",
    132);
// BigEndian: np.save(np.array([1.0], dtype='>f4'))
const std::string kBigEndian(
    "\x93NUMPY\x01\x00v\x00{'descr': '>f4', 'fortran_order': False, 'shape':"
    " (1,), }                                                            \x0a"
    "\x3f\x80\x00\x00",
    132);
// Fortran: np.save(np.asfortranarray(np.arange(4, dtype='<i4').reshape(2, 2)))
const std::string kFortran(
    "\x93NUMPY\x01\x00v\x00{'descr': '<i4', 'fortran_order': True, 'shape': "
    "(2, 2), }                                                           \x0a"
    "\x00\x00\x00\x00\x02\x00\x00\x00\x01\x00\x00\x00\x03\x00\x00\x00",
    144);
// I2Column: np.save(np.array([-2, 3, -2], dtype='<i2').reshape(3, 1))
const std::string kI2Column(
    "\x93NUMPY\x01\x00v\x00{'descr': '<i2', 'fortran_order': False, 'shape':"
    " (3, 1), }                                                          \x0a"
    "\xfe\xff\x03\x00\xfe\xff",
    134);
// F8WideFirstDim: np.save(np.zeros((2147483647, 0), dtype='<f8'))
const std::string kF8WideFirstDim(
    "\x93NUMPY\x01\x00v\x00{'descr': '<f8', 'fortran_order': False, 'shape':"
    " (2147483647, 0), }                                                 \x0a",
    128);
// U4SixteenDims: np.save(np.zeros((1,) * 15 + (0,), dtype='<u4'))
const std::string kU4SixteenDims(
    "\x93NUMPY\x01\x00\xb6\x00{'descr': '<u4', 'fortran_order': False, 'shap"
    "e': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0), }                "
    "                                                                \x0a",
    192);
// I1Rows: np.save(np.zeros((0, 1234567), dtype='|i1'))
const std::string kI1Rows(
    "\x93NUMPY\x01\x00v\x00{'descr': '|i1', 'fortran_order': False, 'shape':"
    " (0, 1234567), }                                                    \x0a",
    128);

Span<const uint8_t> span_of(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
std::vector<uint8_t> vec_of(const std::string& s) { return {s.begin(), s.end()}; }

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = t.const_data_ptr<uint8_t>();
  return std::vector<uint8_t>(p, p + t.nbytes());
}

std::vector<SizesType> sizes_of(const OwnedTensor& t) {
  return std::vector<SizesType>(t.sizes().begin(), t.sizes().end());
}

TEST(NpyTest, ReadsNumpyFiles) {
  Result<OwnedTensor> f = read_npy_bytes(span_of(kF4x2x3), "f.npy");
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->scalar_type(), ScalarType::kFloat);
  EXPECT_EQ(sizes_of(*f), (std::vector<SizesType>{2, 3}));
  EXPECT_EQ(format_values(f->tensor(), 10), "[0, 0.5, 1, 1.5, 2, 2.5]");

  Result<OwnedTensor> b = read_npy_bytes(span_of(kB1));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scalar_type(), ScalarType::kBool);
  EXPECT_EQ(format_values(b->tensor(), 10), "[true, false, true]");

  Result<OwnedTensor> scalar = read_npy_bytes(span_of(kI8Scalar));
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->dim(), 0u);
  EXPECT_EQ(scalar->data<int64_t>()[0], -7);

  Result<OwnedTensor> empty = read_npy_bytes(span_of(kU1Empty));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->scalar_type(), ScalarType::kByte);
  EXPECT_EQ(sizes_of(*empty), (std::vector<SizesType>{0, 3}));

  Result<OwnedTensor> column = read_npy_bytes(span_of(kI2Column));
  ASSERT_TRUE(column.ok());
  EXPECT_EQ(format_values(column->tensor(), 10), "[-2, 3, -2]");

  Result<OwnedTensor> sixteen = read_npy_bytes(span_of(kU4SixteenDims));
  ASSERT_TRUE(sixteen.ok());
  EXPECT_EQ(sixteen->dim(), 16u);
  EXPECT_EQ(sixteen->scalar_type(), ScalarType::kUInt32);
}

TEST(NpyTest, ReadsVersions2And3) {
  Result<OwnedTensor> v2 = read_npy_bytes(span_of(kF2V2));
  ASSERT_TRUE(v2.ok()) << v2.status().message();
  EXPECT_EQ(v2->scalar_type(), ScalarType::kHalf);
  EXPECT_EQ(format_values(v2->tensor(), 10), "[1, -2.5]");

  Result<OwnedTensor> v3 = read_npy_bytes(span_of(kU2V3));
  ASSERT_TRUE(v3.ok()) << v3.status().message();
  EXPECT_EQ(v3->scalar_type(), ScalarType::kUInt16);
  EXPECT_EQ(sizes_of(*v3), (std::vector<SizesType>{2, 1}));
  EXPECT_EQ(format_values(v3->tensor(), 10), "[1, 65535]");
}

TEST(NpyTest, RejectsBigEndianAndFortranOrderFromNumpy) {
  Result<OwnedTensor> big = read_npy_bytes(span_of(kBigEndian), "big.npy");
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big, ErrorIs(Error::kNotSupported, "'big.npy': big-endian dtype '>f4'"));
  Result<OwnedTensor> fortran = read_npy_bytes(span_of(kFortran), "f.npy");
  ASSERT_FALSE(fortran.ok());
  EXPECT_THAT(fortran, ErrorIs(Error::kNotSupported, "fortran_order True"));
}

TEST(NpyTest, WritesWhatNumpyWrites) {
  Result<OwnedTensor> f = OwnedTensor::from_values<float>({2, 3}, {0, 0.5, 1, 1.5, 2, 2.5});
  const bool flags[] = {true, false, true};
  Result<OwnedTensor> b = OwnedTensor::from_values<bool>({3}, Span<const bool>(flags));
  Result<OwnedTensor> scalar = OwnedTensor::from_values<int64_t>({}, {-7});
  Result<OwnedTensor> empty = OwnedTensor::make(ScalarType::kByte, {0, 3});
  Result<OwnedTensor> column = OwnedTensor::from_values<int16_t>({3, 1}, {-2, 3, -2});
  Result<OwnedTensor> wide = OwnedTensor::make(ScalarType::kDouble, {2147483647, 0});
  Result<OwnedTensor> sixteen = OwnedTensor::make(
      ScalarType::kUInt32, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0});
  Result<OwnedTensor> rows = OwnedTensor::make(ScalarType::kChar, {0, 1234567});
  const struct {
    const OwnedTensor& tensor;
    const std::string& golden;
    const char* name;
  } cases[] = {{*f, kF4x2x3, "F4x2x3"},      {*b, kB1, "B1"},
               {*scalar, kI8Scalar, "I8Scalar"}, {*empty, kU1Empty, "U1Empty"},
               {*column, kI2Column, "I2Column"}, {*wide, kF8WideFirstDim, "F8WideFirstDim"},
               {*sixteen, kU4SixteenDims, "U4SixteenDims"}, {*rows, kI1Rows, "I1Rows"}};
  for (const auto& c : cases) {
    Result<std::vector<uint8_t>> encoded = encode_npy(c.tensor.tensor());
    ASSERT_TRUE(encoded.ok()) << c.name << ": " << encoded.status().message();
    EXPECT_EQ(*encoded, vec_of(c.golden)) << c.name;
  }
}

const ScalarType kNumpyTypes[] = {
    ScalarType::kHalf,  ScalarType::kFloat,  ScalarType::kDouble, ScalarType::kChar,
    ScalarType::kShort, ScalarType::kInt,    ScalarType::kLong,   ScalarType::kByte,
    ScalarType::kUInt16, ScalarType::kUInt32, ScalarType::kUInt64, ScalarType::kBool};

TEST(NpyTest, FileRoundTripForEveryDtypeAndShape) {
  const std::vector<std::vector<SizesType>> shapes = {{}, {0}, {5}, {2, 3, 4}, {3, 0, 2}};
  uint64_t seed = 1;
  for (ScalarType type : kNumpyTypes) {
    for (const auto& shape : shapes) {
      Result<OwnedTensor> original = OwnedTensor::make(type, shape);
      ASSERT_TRUE(original.ok());
      ASSERT_TRUE(fill_random(original->tensor(), seed++).ok());
      TempFile file({});
      ASSERT_TRUE(write_npy(file.path(), original->tensor()).ok());
      Result<OwnedTensor> back = read_npy(file.path());
      ASSERT_TRUE(back.ok()) << to_string(type) << ": " << back.status().message();
      EXPECT_EQ(back->scalar_type(), type);
      EXPECT_EQ(sizes_of(*back), shape) << to_string(type);
      EXPECT_EQ(bytes_of(back->tensor()), bytes_of(original->tensor())) << to_string(type);
    }
  }
}

TEST(NpyTest, ChannelsLastIsWrittenInLogicalOrder) {
  Result<OwnedTensor> nhwc =
      OwnedTensor::make_with_dim_order(ScalarType::kInt, {2, 3, 2, 2}, {0, 2, 3, 1});
  ASSERT_TRUE(nhwc.ok());
  const Tensor t = nhwc->tensor();
  int32_t logical = 0;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 2; ++w) {
          nhwc->data<int32_t>()[n * t.strides()[0] + c * t.strides()[1] + h * t.strides()[2] +
                                w * t.strides()[3]] = logical++;
        }
  Result<std::vector<uint8_t>> encoded = encode_npy(t);
  ASSERT_TRUE(encoded.ok());
  Result<OwnedTensor> back = read_npy_bytes({encoded->data(), encoded->size()});
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(sizes_of(*back), (std::vector<SizesType>{2, 3, 2, 2}));
  EXPECT_TRUE(is_contiguous_dim_order(back->tensor().dim_order()));
  for (int32_t i = 0; i < 24; ++i) ASSERT_EQ(back->data<int32_t>()[i], i);
}

TEST(NpyTest, WriteErrors) {
  TempFile file({});
  Result<OwnedTensor> bf16 = OwnedTensor::make(ScalarType::kBFloat16, {2});
  Status s = write_npy(file.path(), bf16->tensor());
  EXPECT_THAT(s, ErrorIs(Error::kNotSupported, "convert the tensor to float32"));
  struct stat st;
  ASSERT_EQ(::stat(file.path().c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 0) << "nothing is written for an unsupported dtype";

  EXPECT_THAT(write_npy(file.path(), Tensor()),
              ErrorIs(Error::kInvalidArgument, "cannot save an undefined tensor as .npy"));

  Result<OwnedTensor> f = OwnedTensor::make(ScalarType::kFloat, {2});
  Status missing_dir = write_npy("/tmp/torchlight_no_such_dir/out.npy", f->tensor());
  EXPECT_THAT(missing_dir, ErrorIs(Error::kAccessFailed));
  EXPECT_STREQ(missing_dir.message(),
               "cannot create '/tmp/torchlight_no_such_dir/out.npy': No such file or directory");
}

TEST(NpyTest, ReadFileErrors) {
  Result<OwnedTensor> missing = read_npy("/tmp/torchlight_no_such_file.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing, ErrorIs(Error::kNotFound));
  EXPECT_STREQ(missing.status().message(),
               "cannot open '/tmp/torchlight_no_such_file.npy': No such file or directory");
  Result<OwnedTensor> dir = read_npy("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_THAT(dir, ErrorIs(Error::kAccessFailed, "it is a directory"));

  // A header claiming ~4 GiB is rejected from the file size, before any
  // allocation of that size.
  TempFile huge_header(vec_of(std::string("\x93NUMPY\x02\x00\xf0\xff\xff\xff{}", 14)));
  Result<OwnedTensor> h = read_npy(huge_header.path());
  ASSERT_FALSE(h.ok());
  EXPECT_THAT(h, ErrorIs(Error::kInvalidExternalData, "the header needs 4294967292 bytes"));
}

TEST(NpyTest, DataShorterThanTheShapeNeeds) {
  std::string file = kF4x2x3.substr(0, kF4x2x3.size() - 1);
  Result<OwnedTensor> t = read_npy_bytes(span_of(file), "short.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t, ErrorIs(Error::kInvalidExternalData));
  EXPECT_STREQ(t.status().message(),
               "'short.npy': truncated .npy data: shape [2, 3] of float32 needs 24 bytes, the "
               "file has 23 after the header");
}

TEST(NpyTest, ShapeATensorCannotHoldIsAnErrorNamingTheFile) {
  // Zero elements, so the header is fine, but the strides overflow int64.
  const std::string dict =
      "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 2147483647, 2147483647, "
      "2147483647), }\n";
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(dict.size());
  file += '\0';
  file += dict;
  Result<OwnedTensor> t = read_npy_bytes(span_of(file), "zero.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t, ErrorIs(Error::kInvalidArgument, "'zero.npy': the strides of sizes"));
}

TEST(NpyTest, TrailingBytesAreIgnoredAndBoolsNormalised) {
  Result<OwnedTensor> t = read_npy_bytes(span_of(kI2Column + "junk"));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(format_values(t->tensor(), 10), "[-2, 3, -2]");

  std::string odd_bools = kB1;
  odd_bools[odd_bools.size() - 1] = '\x07';
  Result<OwnedTensor> b = read_npy_bytes(span_of(odd_bools));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->tensor().const_data_ptr<uint8_t>()[2], 1);
}

TEST(NpyTest, EveryTruncationIsACleanError) {
  Result<OwnedTensor> random = OwnedTensor::make(ScalarType::kDouble, {3, 2});
  ASSERT_TRUE(fill_random(random->tensor(), 5).ok());
  Result<std::vector<uint8_t>> encoded = encode_npy(random->tensor());
  ASSERT_TRUE(encoded.ok());
  const std::string written(encoded->begin(), encoded->end());
  for (const std::string* file : {&kF4x2x3, &kB1, &kI8Scalar, &kF2V2, &kU2V3, &written}) {
    for (size_t length = 0; length < file->size(); ++length) {
      const std::string prefix = file->substr(0, length);
      Result<OwnedTensor> t = read_npy_bytes(span_of(prefix), "cut.npy");
      ASSERT_FALSE(t.ok()) << "length " << length;
      EXPECT_THAT(t, ErrorIs(Error::kInvalidExternalData)) << t.status().message();
      EXPECT_EQ(std::string(t.status().message()).rfind("'cut.npy': ", 0), 0u)
          << t.status().message();
    }
    EXPECT_TRUE(read_npy_bytes(span_of(*file)).ok());
  }
  // The same through real files, for one of them.
  for (size_t length = 0; length < kF4x2x3.size(); ++length) {
    TempFile file(vec_of(kF4x2x3.substr(0, length)));
    Result<OwnedTensor> t = read_npy(file.path());
    ASSERT_FALSE(t.ok()) << "length " << length;
    EXPECT_THAT(t, ErrorIs(Error::kInvalidExternalData));
    EXPECT_NE(std::string(t.status().message()).find(file.path()), std::string::npos);
  }
}

TEST(NpyTest, CorruptedHeaderBytesNeverCrash) {
  // Every header byte replaced by characters that steer the parser into its
  // branches. Each read must return (ok or an error); ASan/UBSan catch any
  // out-of-bounds access or overflow on the way.
  const char replacements[] = {'\0', '\xff', ' ', '\'', '"', '(', ')', ',', ':', '{', '}',
                               '9',  '-',    'L', 'T',  '<', '>', '\n'};
  size_t accepted = 0;
  for (size_t i = 0; i < 128; ++i) {
    for (char r : replacements) {
      std::string file = kI2Column;
      file[i] = r;
      Result<OwnedTensor> t = read_npy_bytes(span_of(file), "fuzz.npy");
      if (t.ok()) {
        ++accepted;
        EXPECT_LE(t->nbytes(), file.size() - 128);
      } else {
        EXPECT_NE(std::string(t.status().message()).find("fuzz.npy"), std::string::npos);
      }
    }
  }
  // Replacing padding spaces by spaces/newlines keeps the file valid.
  EXPECT_GT(accepted, 0u);
}

}  // namespace
}  // namespace torchlight
