// Tests for TestBackend (test_backend.h): blobs built by hand, run without a
// program file, plus the checks that keep a corrupt blob from running.
#include "backends/test_backend/test_backend.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "extension/memory/malloc_allocator.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;

// A float32 tensor over owned storage.
class FloatTensor {
 public:
  FloatTensor(std::vector<SizesType> sizes, std::vector<float> values)
      : sizes_(std::move(sizes)), data_(std::move(values)), dim_order_(sizes_.size()),
        strides_(sizes_.size()) {
    for (size_t d = 0; d < sizes_.size(); ++d) dim_order_[d] = static_cast<DimOrderType>(d);
    EXPECT_TRUE(compute_strides({sizes_.data(), sizes_.size()},
                                {dim_order_.data(), dim_order_.size()}, strides_.data()));
    impl_ = std::make_unique<TensorImpl>(ScalarType::kFloat, sizes_.size(), sizes_.data(),
                                         data_.data(), dim_order_.data(), strides_.data());
  }
  EValue value() const { return EValue(Tensor(impl_.get())); }
  const std::vector<float>& data() const { return data_; }

 private:
  std::vector<SizesType> sizes_;
  std::vector<float> data_;
  std::vector<DimOrderType> dim_order_;
  std::vector<StridesType> strides_;
  std::unique_ptr<TensorImpl> impl_;
};

// Writes a blob in the layout test_backend.h documents.
class BlobWriter {
 public:
  BlobWriter& u32(uint32_t v) { return raw(&v, 4); }
  BlobWriter& f32(float v) { return raw(&v, 4); }
  BlobWriter& raw(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  BlobWriter& header(uint32_t inputs, uint32_t outputs, uint32_t slots, uint32_t constants,
                     uint32_t instructions, uint32_t version = kTestBackendVersion) {
    return raw("TLTB", 4).u32(version).u32(inputs).u32(outputs).u32(slots).u32(constants).u32(
        instructions);
  }
  BlobWriter& instruction(uint32_t op, uint32_t a, uint32_t b, uint32_t dst, float alpha = 1) {
    return u32(op).u32(a).u32(b).u32(dst).f32(alpha);
  }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// (x + 2 * y) * 0.5 - x: inputs x (slot 0), y (slot 1); constant 0.5 in slot 2.
std::vector<uint8_t> example_blob() {
  BlobWriter w;
  w.header(2, 2, 5, 1, 3);
  w.u32(2).f32(0.5f);
  w.instruction(1, 0, 1, 3, 2.0f);  // slot3 = x + 2y
  w.instruction(3, 3, 2, 4);        // slot4 = slot3 * 0.5
  w.instruction(2, 4, 0, 4);        // slot4 = slot4 - x
  w.u32(4).u32(3);                  // outputs: slot4, slot3
  return w.bytes();
}

const uint8_t kVersion1[] = {'1'};
const CompileSpec kSpecs[] = {{"version", {kVersion1, 1}}};

class TestBackendTest : public ::testing::Test {
 protected:
  Result<DelegateHandle*> init(const std::vector<uint8_t>& blob,
                               Span<const CompileSpec> specs = {kSpecs, 1}) {
    FreeableBuffer processed(blob.data(), blob.size(), nullptr);
    BackendInitContext context;
    context.runtime_allocator = &runtime_;
    return test_backend().init(context, &processed, specs);
  }
  Status execute(DelegateHandle* handle, std::vector<EValue> values) {
    std::vector<EValue*> args;
    for (EValue& v : values) args.push_back(&v);
    BackendExecutionContext context;
    context.temp_allocator = &temp_;
    return test_backend().execute(context, handle, {args.data(), args.size()});
  }

  MallocAllocator runtime_;
  MallocAllocator temp_;
};

TEST_F(TestBackendTest, RunsTheBlobsInstructions) {
  Result<DelegateHandle*> handle = init(example_blob());
  ASSERT_TRUE(handle.ok()) << handle.status().message();
  FloatTensor x({2, 2}, {1, 2, 3, 4});
  FloatTensor y({2, 2}, {10, 20, 30, 40});
  FloatTensor out0({2, 2}, {0, 0, 0, 0});
  FloatTensor out1({2, 2}, {0, 0, 0, 0});
  Status status = execute(handle.get(), {x.value(), y.value(), out0.value(), out1.value()});
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_THAT(out1.data(), ::testing::ElementsAre(21, 42, 63, 84));
  EXPECT_THAT(out0.data(), ::testing::ElementsAre(9.5f, 19, 28.5f, 38));
}

TEST_F(TestBackendTest, IsRegisteredUnderItsId) {
  BackendRegistry registry;
  ASSERT_TRUE(register_test_backend(registry).ok());
  EXPECT_EQ(registry.find(kTestBackendId), &test_backend());
  EXPECT_EQ(registry.find("TorchlightTestBackend"), &test_backend());
  EXPECT_FALSE(register_test_backend(registry).ok()) << "a second registration is a duplicate";
}

TEST_F(TestBackendTest, RejectsWrongOrMissingVersionSpec) {
  const uint8_t two[] = {'2'};
  const CompileSpec wrong[] = {{"version", {two, 1}}};
  Result<DelegateHandle*> handle = init(example_blob(), {wrong, 1});
  ASSERT_FALSE(handle.ok());
  EXPECT_THAT(handle, ErrorIs(Error::kDelegateInvalidCompatibility, "'version' is '2'"));

  Result<DelegateHandle*> missing = init(example_blob(), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing, ErrorIs(Error::kDelegateInvalidCompatibility, "no 'version' compile spec"));
}

TEST_F(TestBackendTest, RejectsCorruptBlobs) {
  std::vector<uint8_t> bad_magic = example_blob();
  bad_magic[0] = 'X';
  EXPECT_THAT(init(bad_magic),
              ErrorIs(Error::kDelegateInvalidCompatibility, "does not start with the TLTB header"));

  BlobWriter version2;
  version2.header(2, 2, 5, 1, 3, /*version=*/2);
  EXPECT_THAT(init(version2.bytes()),
              ErrorIs(Error::kDelegateInvalidCompatibility,
                      "the delegate blob is version 2, this backend implements 1"));

  std::vector<uint8_t> truncated = example_blob();
  truncated.pop_back();
  Result<DelegateHandle*> short_blob = init(truncated);
  EXPECT_THAT(short_blob, ErrorIs(Error::kInvalidProgram, "need exactly 104"));

  BlobWriter reads_undefined;  // Slot 2 is read before anything writes it.
  reads_undefined.header(1, 1, 3, 0, 1).instruction(1, 0, 2, 1).u32(1);
  Result<DelegateHandle*> undefined = init(reads_undefined.bytes());
  EXPECT_THAT(undefined, ErrorIs(Error::kInvalidProgram, "reads slots 0 and 2"));

  BlobWriter writes_input;
  writes_input.header(1, 1, 2, 0, 1).instruction(1, 0, 0, 0).u32(0);
  EXPECT_THAT(init(writes_input.bytes()),
              ErrorIs(Error::kInvalidProgram,
                      "instruction 0 writes slot 0; expected a temporary in [1, 2)"));

  BlobWriter bad_opcode;
  bad_opcode.header(1, 1, 2, 0, 1).instruction(9, 0, 0, 1).u32(1);
  EXPECT_THAT(init(bad_opcode.bytes()),
              ErrorIs(Error::kInvalidProgram, "instruction 0 has unknown opcode 9"));

  BlobWriter huge;
  huge.header(1, 1, 1u << 30, 0, 0).u32(0);
  EXPECT_THAT(init(huge.bytes()),
              ErrorIs(Error::kInvalidProgram, "delegate blob counts are out of range"));
}

TEST_F(TestBackendTest, ChecksArgumentsAtExecute) {
  Result<DelegateHandle*> handle = init(example_blob());
  ASSERT_TRUE(handle.ok());
  FloatTensor x({4}, {1, 2, 3, 4});
  FloatTensor y({3}, {1, 2, 3});
  FloatTensor out({4}, {0, 0, 0, 0});
  Status too_few = execute(handle.get(), {x.value(), x.value(), out.value()});
  EXPECT_THAT(too_few,
              ErrorIs(Error::kInvalidArgument,
                      "the delegate takes 2 inputs and 2 outputs, got 3 arguments"));
  Status mismatched = execute(handle.get(), {x.value(), y.value(), out.value(), out.value()});
  EXPECT_THAT(mismatched, ErrorIs(Error::kInvalidArgument, "has 3 elements, input 0 has 4"));
  Status not_tensor = execute(handle.get(), {x.value(), EValue(int64_t{3}), out.value(),
                                             out.value()});
  EXPECT_THAT(not_tensor,
              ErrorIs(Error::kInvalidType, "delegate argument 1 must be a float32 tensor"));
}

}  // namespace
}  // namespace torchlight
