// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief A strict `.npy` reader and writer: NumPy's own files in, files NumPy reads out;
/// everything else refused with a `FormatError` that says where and why. Never unpickles.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "resident/config.hpp"
#include "resident/detail/checked_math.hpp"
#include "resident/detail/io/file_io.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/shape.hpp"

#if RESIDENT_HAS_CUDA
#include <cuda_fp16.h>
#endif

#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#else
#error "resident/npy.hpp reads files through POSIX (open, pread, mmap)"
#endif

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "resident/npy.hpp assumes a little-endian host"
#endif

namespace resident::npy {

/// @brief The element types resident reads and writes, named by NumPy's type codes.
enum class DType { b1, i1, u1, i2, u2, i4, u4, i8, u8, f2, f4, f8 };

/// @brief NumPy's code for the type: "f4", "u1", ...
constexpr const char* dtype_code(DType dtype) noexcept {
  constexpr const char* codes[] = {"b1", "i1", "u1", "i2", "u2", "i4",
                                   "u4", "i8", "u8", "f2", "f4", "f8"};
  return codes[static_cast<int>(dtype)];
}

/// @brief Bytes of one element: the digit of its code.
constexpr std::size_t dtype_size(DType dtype) noexcept {
  return static_cast<std::size_t>(dtype_code(dtype)[1] - '0');
}

/// @brief The `DType` of C++ type `T` (`bool`, fixed-width integers, `float`, `double`, and
/// `__half` with CUDA).
template <class T>
constexpr DType dtype_of() noexcept {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>)
    return DType::b1;
  else if constexpr (std::is_same_v<U, float>)
    return DType::f4;
  else if constexpr (std::is_same_v<U, double>)
    return DType::f8;
#if RESIDENT_HAS_CUDA
  else if constexpr (std::is_same_v<U, __half>)
    return DType::f2;
#endif
  else {
    static_assert(std::is_integral_v<U> &&
                      (sizeof(U) == 1 || sizeof(U) == 2 || sizeof(U) == 4 || sizeof(U) == 8),
                  "no .npy dtype for this type");
    constexpr DType signed_types[] = {DType::i1, DType::i2, DType::i1, DType::i4,
                                      DType::i1, DType::i1, DType::i1, DType::i8};
    constexpr DType unsigned_types[] = {DType::u1, DType::u2, DType::u1, DType::u4,
                                        DType::u1, DType::u1, DType::u1, DType::u8};
    if constexpr (std::is_signed_v<U>)
      return signed_types[sizeof(U) - 1];
    else
      return unsigned_types[sizeof(U) - 1];
  }
}

namespace detail {
struct ArrayFactory;
}  // namespace detail

/// @brief An array read from a `.npy` file: C-order, native byte order, owning its memory
/// (a read-only mapping of the file when it could be used as it is, else a converted copy).
/// An array moved from is empty, as `Array()` but of its dtype: no data, no elements, no file.
class Array {
 public:
  /// @brief An empty array: null `data()`, shape (0,), no elements, no file.
  Array() noexcept : shape_(Shape{}.prepend(0)) {}
  Array(const Array&) = default;             ///< Shares the data (and the mapping).
  Array& operator=(const Array&) = default;  ///< Shares the data (and the mapping).
  /// @brief Takes `other`'s data; `other` is left empty, not pointing into it.
  Array(Array&& other) noexcept : Array() {
    swap(other);
    other.dtype_ = dtype_;  // so that `as<T>()` of it is an empty tensor, not a dtype error
  }
  /// @brief Takes `other`'s data; `other` is left empty, not pointing into it.
  Array& operator=(Array&& other) noexcept {
    Array taken(std::move(other));
    swap(taken);
    return *this;
  }
  ~Array() = default;

  /// @brief Element type.
  [[nodiscard]] DType dtype() const noexcept { return dtype_; }
  /// @brief The array's shape (rank 0 for a 0-d array).
  [[nodiscard]] const Shape& shape() const noexcept { return shape_; }
  /// @brief Whether the file stored the data in Fortran order (it is C order here).
  [[nodiscard]] bool fortran_order() const noexcept { return fortran_order_; }
  /// @brief Elements: `shape().elements()` (1 for a 0-d array).
  [[nodiscard]] std::size_t size() const noexcept { return shape_.elements(); }
  /// @brief Bytes of the data: `size() * dtype_size(dtype())`.
  [[nodiscard]] std::size_t bytes() const noexcept { return size() * dtype_size(dtype_); }
  /// @brief First byte of the data, in C order and native byte order.
  [[nodiscard]] const std::byte* data() const noexcept { return data_; }
  /// @brief Whether the data is the file itself, memory-mapped (no copy was made).
  [[nodiscard]] bool mapped() const noexcept { return mapped_; }
  /// @brief The file, as passed to `load`.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// @brief For a mapped array, refuses a file that changed since it was loaded (removed,
  /// replaced, truncated, extended or modified): reading the mapping of a truncated file faults,
  /// and a modified one mixes old and new data. `load_dataset` calls it between upload chunks.
  /// Does nothing for an array read into memory, which no change of the file can reach.
  /// @param during when the check runs, for the message ("while it was uploaded")
  /// @throws FormatError naming the file and what changed.
  void check_unchanged(const std::string& during) const {
    if (file_)
      file_->check_unchanged(during, "keep a file unchanged while it is loaded and uploaded");
  }

  /// @brief The array as a typed tensor, valid while this `Array` (or a copy) lives.
  /// @throws FormatError when `T` is not the array's dtype, or the array is 0-d; Error when an
  /// empty array (default-constructed or moved from) is asked for another type than its dtype.
  template <class T>
  [[nodiscard]] HostTensor<const T> as() const {
    if (dtype_of<T>() != dtype_ && !file_ && !owner_)
      throw Error(std::string("resident: this npy::Array is empty (default-constructed or moved "
                              "from): it holds no ") +
                  dtype_code(dtype_) + " elements to view as " + dtype_code(dtype_of<T>()) +
                  "; load an array with npy::load, or use the array it was moved to");
    if (dtype_of<T>() != dtype_)
      throw FormatError(path_, data_offset_,
                        std::string("the array holds ") + dtype_code(dtype_) +
                            " elements but as<T>() asked for " + dtype_code(dtype_of<T>()) +
                            "; use the matching C++ type or convert the file");
    if (shape_.rank() == 0)
      throw FormatError(path_, data_offset_,
                        "a 0-d array has no rows to make a tensor of; save it with shape (1,)");
    return HostTensor<const T>(reinterpret_cast<const T*>(data_), shape_);  // NOLINT
  }

 private:
  friend struct detail::ArrayFactory;

  void swap(Array& other) noexcept {
    std::swap(path_, other.path_);
    std::swap(dtype_, other.dtype_);
    std::swap(shape_, other.shape_);
    std::swap(fortran_order_, other.fortran_order_);
    std::swap(mapped_, other.mapped_);
    std::swap(data_offset_, other.data_offset_);
    std::swap(data_, other.data_);
    std::swap(owner_, other.owner_);
    std::swap(file_, other.file_);
  }

  std::string path_;
  DType dtype_ = DType::u1;
  Shape shape_;
  bool fortran_order_ = false;
  bool mapped_ = false;
  std::size_t data_offset_ = 0;
  const std::byte* data_ = nullptr;
  std::shared_ptr<const void> owner_;
  std::shared_ptr<const resident::detail::ReadFile> file_;  // held open while mapped
};

namespace detail {

inline constexpr std::size_t max_header_bytes = std::size_t{1} << 20;  ///< A sane cap.

/// What a `.npy` header dict says, before any check of its meaning.
struct HeaderDict {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

/// @brief Parses the exact dict NumPy writes: `{'descr': <str>, 'fortran_order': <bool>,
/// 'shape': <tuple of ints>}`, keys in any order, each once, nothing else; Python literal
/// syntax for the values (quotes of either kind, `True`/`False`, tuples with an optional
/// trailing comma). Never evaluates anything.
/// @param fail called with (offset within the header, reason); must not return
template <class Fail>
HeaderDict parse_header_dict(std::string_view text, Fail&& fail) {
  std::size_t at = 0;
  const auto skip_space = [&] {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
      ++at;
  };
  const auto expect = [&](char c, const char* what) {
    skip_space();
    if (at >= text.size() || text[at] != c)
      fail(at, std::string("the header dict is malformed: expected ") + what);
    ++at;
  };
  const auto peek = [&](char c) {
    skip_space();
    return at < text.size() && text[at] == c;
  };
  const auto parse_string = [&]() -> std::string {
    skip_space();
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      fail(at, "expected a quoted string in the header dict");
    const char quote = text[at++];
    std::string value;
    while (at < text.size() && text[at] != quote) {
      if (text[at] == '\\') fail(at, "escape sequences are not part of a NumPy header");
      value += text[at++];
    }
    if (at >= text.size()) fail(at, "a string in the header dict is not closed");
    ++at;
    return value;
  };
  const auto parse_integer = [&]() -> std::size_t {
    skip_space();
    if (at < text.size() && text[at] == '-') fail(at, "a dimension of the shape is negative");
    if (at >= text.size() || text[at] < '0' || text[at] > '9')
      fail(at, "a dimension of the shape is not a non-negative integer");
    std::size_t value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      const auto digit = static_cast<std::size_t>(text[at] - '0');
      if (value > (std::numeric_limits<std::size_t>::max() - digit) / 10)
        fail(at, "a dimension of the shape overflows 64 bits");
      value = value * 10 + digit;
      ++at;
    }
    if (at < text.size() && (text[at] == '.' || text[at] == 'e' || text[at] == 'E' ||
                             text[at] == 'L' || text[at] == 'j'))
      fail(at, "a dimension of the shape is not an integer");
    return value;
  };

  HeaderDict header;
  bool seen_descr = false, seen_order = false, seen_shape = false;
  expect('{', "'{'");
  while (!peek('}')) {
    const std::size_t key_at = at;
    const std::string key = parse_string();
    expect(':', "':' after a key");
    if (key == "descr") {
      if (seen_descr) fail(key_at, "the key 'descr' appears twice");
      seen_descr = true;
      if (peek('['))
        fail(at,
             "structured (record) dtypes are not supported; save each field as an array of its "
             "own");
      header.descr = parse_string();
    } else if (key == "fortran_order") {
      if (seen_order) fail(key_at, "the key 'fortran_order' appears twice");
      seen_order = true;
      skip_space();
      if (text.substr(at, 4) == "True") {
        header.fortran_order = true;
        at += 4;
      } else if (text.substr(at, 5) == "False") {
        at += 5;
      } else {
        fail(at, "'fortran_order' must be True or False");
      }
    } else if (key == "shape") {
      if (seen_shape) fail(key_at, "the key 'shape' appears twice");
      seen_shape = true;
      expect('(', "'(' to open the shape tuple");
      while (!peek(')')) {
        header.shape.push_back(parse_integer());
        if (peek(',')) {
          ++at;
        } else if (!peek(')')) {
          fail(at, "the shape tuple is malformed: expected ',' or ')'");
        } else if (header.shape.size() == 1) {
          fail(at, "a one-element shape tuple needs its trailing comma, as (n,)");
        }
      }
      ++at;
    } else {
      fail(key_at, "unexpected key '" + key +
                       "' in the header dict (only 'descr', 'fortran_order', 'shape')");
    }
    if (peek(',')) {
      ++at;
    } else if (!peek('}')) {
      fail(at, "the header dict is malformed: expected ',' or '}'");
    }
  }
  ++at;
  if (!seen_descr) fail(at, "the header dict has no 'descr'");
  if (!seen_order) fail(at, "the header dict has no 'fortran_order'");
  if (!seen_shape) fail(at, "the header dict has no 'shape'");
  skip_space();
  if (at != text.size()) fail(at, "unexpected text after the header dict");
  return header;
}

/// The dtype a `descr` names, and whether it is big-endian; `fail(offset, reason)` throws.
template <class Fail>
DType parse_descr(std::size_t at, const std::string& descr, bool& big_endian, Fail&& fail) {
  if (descr.size() < 2) fail(at, "descr '" + descr + "' is not a NumPy type string");
  const char order = descr[0];
  if (order != '<' && order != '>' && order != '|' && order != '=')
    fail(at, "descr '" + descr + "' has no byte-order character ('<', '>', '|' or '=')");
  const std::string code = descr.substr(1);
  if (code.find('O') != std::string::npos)
    fail(at,
         "object arrays hold pickled Python objects, which resident never unpickles; save "
         "numeric data instead");
  constexpr DType all[] = {DType::b1, DType::i1, DType::u1, DType::i2, DType::u2, DType::i4,
                           DType::u4, DType::i8, DType::u8, DType::f2, DType::f4, DType::f8};
  for (const DType dtype : all) {
    if (code != dtype_code(dtype)) continue;
    if (order == '|' && dtype_size(dtype) != 1)
      fail(at, "descr '" + descr + "' says 'not applicable' for a multi-byte type");
    big_endian = order == '>' && dtype_size(dtype) > 1;
    return dtype;
  }
  fail(at,
       "dtype '" + descr +
           "' is not supported (b1 i1 u1 i2 u2 i4 u4 i8 u8 f2 f4 f8 are, in either byte order)");
  return DType::u1;  // not reached: `fail` throws
}

/// C order from Fortran order, element by element (`size` bytes each).
inline void fortran_to_c(const std::byte* from, std::byte* to, const Shape& shape,
                         std::size_t size) {
  const std::size_t rank = shape.rank();
  const std::size_t count = shape.elements();
  std::vector<std::size_t> index(rank, 0);
  std::vector<std::size_t> stride(rank, 1);  // Fortran strides, in elements
  for (std::size_t axis = 1; axis < rank; ++axis) stride[axis] = stride[axis - 1] * shape[axis - 1];
  for (std::size_t c = 0; c < count; ++c) {
    std::size_t f = 0;
    for (std::size_t axis = 0; axis < rank; ++axis) f += index[axis] * stride[axis];
    std::memcpy(to + c * size, from + f * size, size);
    for (std::size_t axis = rank; axis-- > 0;) {  // next C-order index: last axis fastest
      if (++index[axis] < shape[axis]) break;
      index[axis] = 0;
    }
  }
}

inline void swap_bytes(std::byte* data, std::size_t count, std::size_t size) {
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t a = 0, b = size - 1; a < b; ++a, --b)
      std::swap(data[i * size + a], data[i * size + b]);
}

/// Refuses b1 bytes other than 0 and 1 among `bytes` bytes at `data`, the first of which is at
/// offset `first` for `fail(offset, reason)`, which throws.
template <class Fail>
void check_bools(const std::byte* data, std::size_t bytes, std::size_t first, Fail&& fail) {
  for (std::size_t i = 0; i < bytes; ++i)
    if (std::to_integer<unsigned>(data[i]) > 1)
      fail(first + i, "a b1 (bool) element is neither 0 nor 1");
}

}  // namespace detail

/// @brief What a `.npy` file's header says: the array's type and shape, and where its data
/// lies in the file.
struct Header {
  DType dtype = DType::u1;      ///< Element type.
  Shape shape{};                ///< The array's shape.
  bool fortran_order = false;   ///< Data stored in Fortran (column-major) order.
  bool big_endian = false;      ///< Multi-byte elements stored big-endian.
  std::size_t data_offset = 0;  ///< Byte offset of the first element.
  std::size_t file_size = 0;    ///< Bytes of the file: `data_offset` plus the data, exactly.

  /// @brief Bytes of the data.
  [[nodiscard]] std::size_t data_bytes() const noexcept {
    return shape.elements() * dtype_size(dtype);
  }
  /// @brief Whether the data can be used as it is stored: little-endian and in C order.
  [[nodiscard]] bool native_c_order() const noexcept {
    return !big_endian && (!fortran_order || shape.rank() <= 1);
  }
};

namespace detail {

/// @brief Reads and checks the header of a `.npy` image of `size` bytes (a file, or a member of
/// an `.npz` archive): see `load` for what is refused.
/// @param read called as `read(offset, bytes, into)` for bytes of the image, at increasing
/// offsets
/// @param fail called as `fail(offset, reason)`; must throw
template <class Read, class Fail>
Header parse_header(std::size_t size, Read&& read, Fail&& fail) {
  if (size == 0) fail(0, "the file is empty");
  if (size < 10) fail(0, "the file is too short to be a .npy file");

  unsigned char prefix[12] = {};
  read(0, std::min<std::size_t>(12, size), prefix);
  if (std::memcmp(prefix, "\x93NUMPY", 6) != 0)
    fail(0, "not a .npy file: the magic string \\x93NUMPY is missing");
  const unsigned major = prefix[6], minor = prefix[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    fail(6, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                " is not supported (1.0, 2.0 and 3.0 are)");
  std::size_t header_start = 10, header_bytes = prefix[8] | (std::size_t{prefix[9]} << 8);
  if (major >= 2) {
    if (size < 12) fail(8, "the file ends inside the header length");
    header_start = 12;
    header_bytes = prefix[8] | (std::size_t{prefix[9]} << 8) | (std::size_t{prefix[10]} << 16) |
                   (std::size_t{prefix[11]} << 24);
  }
  if (header_bytes > max_header_bytes)
    fail(8, "the header claims " + std::to_string(header_bytes) +
                " bytes, over the 1 MiB a NumPy header can sensibly need");
  if (header_start + header_bytes > size)
    fail(8, "the header length " + std::to_string(header_bytes) +
                " runs past the end of the file (" + std::to_string(size) +
                " bytes): the file is truncated; write it again");
  std::string text(header_bytes, '\0');
  read(header_start, header_bytes, text.data());
  if (text.empty() || text.back() != '\n')
    fail(header_start + header_bytes, "the header does not end with a newline");
  if (text.find('\0') != std::string::npos)
    fail(header_start + text.find('\0'), "the header holds a NUL byte");
  const HeaderDict parsed = parse_header_dict(
      text, [&](std::size_t at, const std::string& reason) { fail(header_start + at, reason); });

  Header header;
  header.file_size = size;
  header.dtype = parse_descr(header_start, parsed.descr, header.big_endian, fail);
  header.fortran_order = parsed.fortran_order;
  if (parsed.shape.size() > Shape::max_rank)
    fail(header_start, "rank " + std::to_string(parsed.shape.size()) + " is above the " +
                           std::to_string(Shape::max_rank) + " resident supports");
  try {
    header.shape = Shape(parsed.shape);
    (void)resident::detail::checked_shape_bytes(header.shape, dtype_size(header.dtype),
                                                "array byte size");
  } catch (const InvalidArgument&) {
    std::string shape;
    for (const std::size_t extent : parsed.shape)
      shape += (shape.empty() ? "" : ", ") + std::to_string(extent);
    fail(header_start, "the shape (" + shape +
                           ") has an element count or a byte size (of the array, or of one row "
                           "however few rows there are) that overflows 64 bits; no array "
                           "NumPy writes is so large: the header is damaged, write the file "
                           "again");
  }
  header.data_offset = header_start + header_bytes;
  const std::size_t bytes = header.data_bytes();
  if (size - header.data_offset < bytes)
    fail(size, "the data is shorter than the shape requires (" + std::to_string(bytes) +
                   " bytes for " + header.shape.to_string() + ", the file has " +
                   std::to_string(size - header.data_offset) +
                   "): the file is truncated; write it again");
  if (size - header.data_offset > bytes)
    fail(header.data_offset + bytes, "the data is longer than the shape requires (" +
                                         std::to_string(size - header.data_offset - bytes) +
                                         " trailing bytes): something was written after the "
                                         "array; write it again with numpy.save");
  return header;
}

/// Reads and checks the header of `file` (see `load` for what is refused), as the file was
/// when it was opened: a file that changed in between is refused.
inline Header read_header(const resident::detail::ReadFile& file) {
  const Header header = parse_header(
      file.identity().size,
      [&](std::size_t offset, std::size_t bytes, void* into) {
        resident::detail::read_exactly(file.path(), file.fd(), into, bytes, offset);
      },
      [&](std::size_t at, const std::string& reason) {
        throw FormatError(file.path(), at, reason);
      });
  file.check_unchanged("while its header was read", "keep a file unchanged while it is read");
  return header;
}

/// @brief Makes `Array`s: mapped from a file, or from data read into memory.
struct ArrayFactory {
  /// An array of `header` whose data is `data`, kept alive by `owner`; `file` for a mapping.
  static Array make(std::string path, const Header& header, std::size_t data_offset,
                    const std::byte* data, std::shared_ptr<const void> owner,
                    std::shared_ptr<const resident::detail::ReadFile> file) {
    Array array;
    array.path_ = std::move(path);
    array.dtype_ = header.dtype;
    array.shape_ = header.shape;
    array.fortran_order_ = header.fortran_order;
    array.data_offset_ = data_offset;
    array.data_ = data;
    array.owner_ = std::move(owner);
    array.mapped_ = file != nullptr;
    array.file_ = std::move(file);
    return array;
  }

  /// The array of data as it was stored (`raw`: `header.data_bytes()` bytes), converted to
  /// native byte order and C order; `data_offset` is where the data began, for messages.
  static Array converted(std::string path, const Header& header, std::size_t data_offset,
                         std::vector<std::byte> raw) {
    const std::size_t element = dtype_size(header.dtype);
    if (header.big_endian) swap_bytes(raw.data(), header.shape.elements(), element);
    if (header.fortran_order && header.shape.rank() > 1) {
      std::vector<std::byte> c_order(raw.size());
      fortran_to_c(raw.data(), c_order.data(), header.shape, element);
      raw = std::move(c_order);
    }
    auto owned = std::make_shared<std::vector<std::byte>>(std::move(raw));
    const std::byte* data = owned->data();
    return make(std::move(path), header, data_offset, data, std::move(owned), nullptr);
  }

  /// @brief The array of the `.npy` image at byte `image_offset` of `file`, whose header was
  /// read: mapped when the data is little-endian C-order and aligned for its type, else read and
  /// converted. `fail(offset, reason)` (which throws) refuses bool bytes other than 0 and 1.
  template <class Fail>
  static Array load(const std::shared_ptr<const resident::detail::ReadFile>& file,
                    const Header& header, std::size_t image_offset, Fail&& fail) {
    const std::size_t data_offset = image_offset + header.data_offset;
    const std::size_t bytes = header.data_bytes();
    Array array;
    resident::detail::MappedRange mapping;
    if (bytes == 0) {
      auto empty = std::make_shared<std::byte>();
      const std::byte* data = empty.get();
      array = make(file->path(), header, data_offset, data, std::move(empty), nullptr);
    } else if (header.native_c_order() && data_offset % dtype_size(header.dtype) == 0 &&
               (mapping = resident::detail::MappedRange::of(*file, data_offset, bytes)).owner) {
      array = make(file->path(), header, data_offset, mapping.data, std::move(mapping.owner), file);
    } else {
      std::vector<std::byte> raw(bytes);
      resident::detail::read_exactly(file->path(), file->fd(), raw.data(), bytes, data_offset);
      array = converted(file->path(), header, data_offset, std::move(raw));
    }
    // A file cut short after its header was read would fault where the mapping is read (the bool
    // check below, the caller later): refused here instead.
    file->check_unchanged("while it was loaded", "keep a file unchanged while it is loaded");
    if (header.dtype == DType::b1) check_bools(array.data(), bytes, data_offset, fail);
    return array;
  }
};

/// The bytes of a `.npy` file up to its data: version 1.0 (2.0 when the header needs more than
/// 65535 bytes), little-endian, C order, padded so that the data starts at a multiple of 64.
inline std::string prefix_bytes(DType dtype, const Shape& shape) {
  std::string dims = "(";
  for (std::size_t axis = 0; axis < shape.rank(); ++axis) {
    dims += std::to_string(shape[axis]);
    if (shape.rank() == 1 || axis + 1 < shape.rank()) dims += ",";
    if (axis + 1 < shape.rank()) dims += " ";
  }
  dims += ")";
  const char order = dtype_size(dtype) == 1 ? '|' : '<';
  std::string header = std::string("{'descr': '") + order + dtype_code(dtype) +
                       "', 'fortran_order': False, 'shape': " + dims + ", }";
  const bool version2 = header.size() + 11 > 65535;
  const std::size_t prefix = version2 ? 12 : 10;
  const std::size_t padded = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(padded - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string head = "\x93NUMPY";
  head += static_cast<char>(version2 ? 2 : 1);
  head += '\0';
  const std::size_t length = header.size();
  for (std::size_t byte = 0; byte < (version2 ? 4u : 2u); ++byte)
    head += static_cast<char>((length >> (8 * byte)) & 0xff);
  return head + header;
}

/// @brief Refuses to save `bytes` bytes of elements from a null pointer (a missing buffer),
/// before anything is written.
/// @throws InvalidArgument naming the file and the size.
inline void refuse_null_data(const std::string& path, const std::string& what, const void* data,
                             std::size_t bytes) {
  if (data == nullptr && bytes != 0)
    throw InvalidArgument("resident: cannot save " + what + " in " + path + ": its data pointer " +
                          "is null, for " + std::to_string(bytes) +
                          " bytes of elements; pass the address of the first element");
}

}  // namespace detail

/// @brief Reads the header of a `.npy` file and checks that its data is all there, without
/// reading the data.
/// @throws FormatError as `load` does for the header and the file's length.
inline Header read_header(const std::string& path) {
  return detail::read_header(resident::detail::ReadFile(path));
}

/// @brief Reads a `.npy` file (format 1.0, 2.0 or 3.0). Little-endian C-order data is
/// memory-mapped, not copied; big-endian or Fortran-order data is converted to native C order,
/// as NumPy would give it.
/// @throws FormatError for anything but a well-formed file of a supported dtype: bad magic,
/// unknown version, a header that runs past the file or over 1 MiB, a header that is not
/// exactly NumPy's dict, object/structured/unknown dtypes, bad or overflowing shapes, data
/// shorter or longer than the shape needs, bool bytes other than 0 and 1, unreadable files, and
/// anything that is not a regular file (a FIFO, socket, device or directory: refused before
/// anything can block on it, symbolic links followed); a file that changes while it is read.
/// @warning A mapped array shows the file as it is on disk: truncating the file in place while
/// the array lives makes reading the array raise SIGBUS. `save` never does that (it replaces the
/// file by a rename, which leaves the mapping its data), so saving over a loaded file is safe.
inline Array load(const std::string& path) {
  const auto file = std::make_shared<const resident::detail::ReadFile>(path);
  return detail::ArrayFactory::load(
      file, detail::read_header(*file), 0,
      [&](std::size_t at, const std::string& reason) { throw FormatError(path, at, reason); });
}

/// @brief Writes `shape.elements()` elements of `dtype` at `data` as a `.npy` file NumPy reads:
/// version 1.0 (2.0 when the header needs more than 65535 bytes), little-endian, C order, the
/// header padded so that the data starts at a multiple of 64 bytes. Any rank, 0-d included.
/// The file is written beside the path under a temporary name, synced and renamed over the path,
/// never truncated in place: an `Array` loaded from the old file (a mapping of it), or any
/// other reader, keeps the old data, and a crash or a failure mid-way leaves the old file whole.
/// A new file gets mode 0666 less the umask, an existing one keeps its mode; a symbolic link at
/// the path is followed.
/// @throws Error when the file cannot be written (with the system's reason; the temporary is
/// removed, the old file left as it was), or the path names something other than a regular
/// file (a FIFO, a device, a directory); InvalidArgument when the shape's byte size overflows
/// or `data` is null for a non-empty shape.
inline void save(const std::string& path, DType dtype, const void* data, const Shape& shape) {
  const std::string head = detail::prefix_bytes(dtype, shape);
  const std::size_t bytes =
      resident::detail::checked_shape_bytes(shape, dtype_size(dtype), "npy byte size");
  detail::refuse_null_data(path, "the array", data, bytes);
  resident::detail::replace_file(path, {{head.data(), head.size()}, {data, bytes}});
}

/// @brief Writes `shape.elements()` elements of type `T` at `data` (see above).
template <class T>
void save(const std::string& path, const T* data, const Shape& shape) {
  save(path, dtype_of<T>(), data, shape);
}

/// @brief Writes an array read by `load` (in C order, native byte order).
inline void save(const std::string& path, const Array& array) {
  save(path, array.dtype(), array.data(), array.shape());
}

/// @brief Writes a tensor as a `.npy` file (see the pointer overload).
template <class T>
void save(const std::string& path, const HostTensor<T>& tensor) {
  save(path, tensor.data(), tensor.shape());
}

}  // namespace resident::npy
