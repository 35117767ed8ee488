#include "extension/npy/npy.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "extension/npy/npy_header.h"

namespace torchlight {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              ".npy reading/writing assumes a little-endian host");

// Where the .npy bytes come from: a file (pread) or memory (memcpy).
class FileSource {
 public:
  FileSource(int fd, size_t size, const char* name) : fd_(fd), size_(size), name_(name) {}
  size_t size() const { return size_; }
  // Reads [offset, offset + n); the caller has checked the range.
  Status read(size_t offset, size_t n, void* out) const {
    size_t done = 0;
    while (done < n) {
      const ssize_t got = ::pread(fd_, static_cast<char*>(out) + done, n - done,
                                  static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        return Status::error(Error::kAccessFailed, "'%s': reading %zu bytes at offset %zu: %s",
                             name_, n, offset, std::strerror(errno));
      }
      if (got == 0) {
        return Status::error(Error::kAccessFailed,
                             "'%s': short read at offset %zu (file truncated while reading?)",
                             name_, offset + done);
      }
      done += static_cast<size_t>(got);
    }
    return Error::kOk;
  }

 private:
  int fd_;
  size_t size_;
  const char* name_;
};

class MemorySource {
 public:
  explicit MemorySource(Span<const uint8_t> bytes) : bytes_(bytes) {}
  size_t size() const { return bytes_.size(); }
  Status read(size_t offset, size_t n, void* out) const {
    if (n > 0) std::memcpy(out, bytes_.data() + offset, n);
    return Error::kOk;
  }

 private:
  Span<const uint8_t> bytes_;
};

template <typename Source>
Result<OwnedTensor> read_from(const Source& source, const char* name) {
  const size_t file_size = source.size();
  uint8_t prefix[kNpyPrefixSize];
  const size_t prefix_size = file_size < kNpyPrefixSize ? file_size : kNpyPrefixSize;
  TL_RETURN_IF_ERROR(source.read(0, prefix_size, prefix));
  TL_ASSIGN_OR_RETURN(const size_t header_size, npy_header_size({prefix, prefix_size}, name));
  // Checked before allocating: a corrupt length must not cost 4 GiB.
  TL_CHECK_OR_RETURN(header_size <= file_size, Error::kInvalidExternalData,
                     "'%s': truncated .npy file: the header needs %zu bytes, the file has %zu",
                     name, header_size, file_size);
  std::vector<uint8_t> header_bytes(header_size);
  TL_RETURN_IF_ERROR(source.read(0, header_size, header_bytes.data()));
  TL_ASSIGN_OR_RETURN(NpyHeader header,
                      parse_npy_header({header_bytes.data(), header_bytes.size()}, name));

  if (file_size - header.data_offset < header.data_nbytes) {
    char shape[160];
    return Status::error(Error::kInvalidExternalData,
                         "'%s': truncated .npy data: shape %s of %s needs %zu bytes, the file "
                         "has %zu after the header",
                         name, format_sizes({header.sizes.data(), header.sizes.size()}, shape,
                                            sizeof(shape)),
                         to_string(header.type), header.data_nbytes,
                         file_size - header.data_offset);
  }
  Result<OwnedTensor> made = OwnedTensor::make(header.type, header.sizes);
  if (!made.ok()) {
    // A valid file whose shape a tensor cannot hold (e.g. zero elements but
    // strides beyond int64), or no memory for the data.
    Status status = made.status();
    return status.with_context("'%s'", name);
  }
  OwnedTensor tensor = std::move(*made);
  void* data = tensor.tensor().mutable_data_ptr();
  TL_RETURN_IF_ERROR(source.read(header.data_offset, header.data_nbytes, data));
  if (header.type == ScalarType::kBool) {
    // Kernels assume a bool byte is 0 or 1.
    auto* bytes = static_cast<uint8_t*>(data);
    for (size_t i = 0; i < header.data_nbytes; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
  }
  return tensor;
}

Status check_writable(const Tensor& tensor) {
  TL_CHECK_OR_RETURN(tensor.defined(), Error::kInvalidArgument,
                     "cannot save an undefined tensor as .npy");
  TL_CHECK_OR_RETURN(tensor.const_data_ptr() != nullptr || tensor.numel() == 0,
                     Error::kInvalidArgument,
                     "cannot save a tensor with %lld elements but no data as .npy",
                     static_cast<long long>(tensor.numel()));
  return Error::kOk;
}

// Appends the tensor's elements in logical (C) order.
void append_logical(const Tensor& tensor, std::vector<uint8_t>* out) {
  const size_t element = tensor.element_size();
  const auto* data = tensor.const_data_ptr<uint8_t>();
  const size_t numel = static_cast<size_t>(tensor.numel());
  if (numel == 0) return;
  if (is_contiguous_dim_order(tensor.dim_order())) {
    out->insert(out->end(), data, data + numel * element);
    return;
  }
  const size_t dim = tensor.dim();
  const Span<const SizesType> sizes = tensor.sizes();
  const Span<const StridesType> strides = tensor.strides();
  int64_t index[kMaxTensorDim] = {};
  int64_t offset = 0;
  const size_t start = out->size();
  out->resize(start + numel * element);
  uint8_t* dst = out->data() + start;
  for (size_t i = 0; i < numel; ++i) {
    std::memcpy(dst + i * element, data + static_cast<size_t>(offset) * element, element);
    for (size_t d = dim; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < sizes[d]) break;
      offset -= strides[d] * index[d];
      index[d] = 0;
    }
  }
}

}  // namespace

Result<OwnedTensor> read_npy(const std::string& path) {
  const char* name = path.c_str();
  const int fd = ::open(name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status::error(err == ENOENT ? Error::kNotFound : Error::kAccessFailed,
                         "cannot open '%s': %s", name, std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::error(Error::kAccessFailed, "cannot stat '%s': %s", name, std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::error(Error::kAccessFailed, "cannot read '%s': it is a directory", name);
  }
  Result<OwnedTensor> result =
      read_from(FileSource(fd, static_cast<size_t>(st.st_size), name), name);
  ::close(fd);
  return result;
}

Result<OwnedTensor> read_npy_bytes(Span<const uint8_t> bytes, const char* name) {
  return read_from(MemorySource(bytes), name != nullptr ? name : "<memory>");
}

Result<std::vector<uint8_t>> encode_npy(const Tensor& tensor) {
  TL_RETURN_IF_ERROR(check_writable(tensor));
  TL_ASSIGN_OR_RETURN(std::string header,
                      format_npy_header(tensor.scalar_type(), tensor.sizes()));
  std::vector<uint8_t> out;
  out.reserve(header.size() + tensor.nbytes());
  out.insert(out.end(), header.begin(), header.end());
  append_logical(tensor, &out);
  return out;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  TL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, encode_npy(tensor));
  const char* name = path.c_str();
  const int fd = ::open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return Status::error(Error::kAccessFailed, "cannot create '%s': %s", name,
                         std::strerror(errno));
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : EIO;
      ::close(fd);
      return Status::error(Error::kAccessFailed, "writing '%s': %s", name, std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) {
    return Status::error(Error::kAccessFailed, "writing '%s': %s", name, std::strerror(errno));
  }
  return Error::kOk;
}

}  // namespace torchlight
