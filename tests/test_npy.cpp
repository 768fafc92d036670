// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "resident/npy.hpp"
#include "support/data_file.hpp"
#include "support/temp_npy.hpp"
#include "support/unprivileged.hpp"

namespace {

namespace npy = resident::npy;
using resident::FormatError;
using resident::Shape;

using resident::testing::data_file;
using resident::testing::scratch;

// A version-1.0 file with the given header dict text (padded as NumPy pads it) and data.
std::string npy_file(const std::string& dict, const std::string& data = "") {
  std::string header = dict;
  const std::size_t padded = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(padded - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\0';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + data;
}

template <class T>
void round_trip(const T* values, const Shape& shape) {
  const std::string path = scratch(std::string(npy::dtype_code(npy::dtype_of<T>())) + ".npy");
  npy::save(path, values, shape);
  const npy::Array array = npy::load(path);
  EXPECT_EQ(array.dtype(), npy::dtype_of<T>());
  EXPECT_EQ(array.shape(), shape);
  ASSERT_EQ(array.bytes(), shape.elements() * sizeof(T));
  EXPECT_EQ(std::memcmp(array.data(), values, array.bytes()), 0);
  std::remove(path.c_str());
}

template <class T>
void round_trip_shapes() {
  for (const Shape& shape :
       {Shape{}, Shape{0}, Shape{5}, Shape{2, 3}, Shape{2, 0, 4}, Shape{1, 2, 2, 2}}) {
    SCOPED_TRACE(std::string(npy::dtype_code(npy::dtype_of<T>())) + " " + shape.to_string());
    // Not a std::vector: std::vector<bool> has no data().
    const std::unique_ptr<T[]> values(new T[shape.elements() + 1]{});
    for (std::size_t i = 0; i < shape.elements(); ++i)
      values[i] = static_cast<T>(i % 2 == 0 ? i : 1);
    round_trip(values.get(), shape);
  }
}

TEST(Npy, RoundTripsEveryDtypeAndShape) {
  round_trip_shapes<bool>();
  round_trip_shapes<std::int8_t>();
  round_trip_shapes<std::uint8_t>();
  round_trip_shapes<std::int16_t>();
  round_trip_shapes<std::uint16_t>();
  round_trip_shapes<std::int32_t>();
  round_trip_shapes<std::uint32_t>();
  round_trip_shapes<std::int64_t>();
  round_trip_shapes<std::uint64_t>();
  round_trip_shapes<float>();
  round_trip_shapes<double>();
}

TEST(Npy, SavedHeaderIsNumPysAndDataIs64ByteAligned) {
  const std::vector<float> values{1, 2, 3};
  const std::string path = scratch("header.npy");
  npy::save(path, resident::HostTensor<const float>(values.data(), {3}));
  std::ifstream in(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ((bytes.size() - 12) % 64, 0u);
  EXPECT_NE(bytes.find("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"),
            std::string::npos);
  EXPECT_TRUE(npy::load(path).mapped());
}

TEST(Npy, ReadsWhatNumPyWrote) {
  const auto f4 = npy::load(data_file("f4_c.npy"));
  const auto tensor = f4.as<float>();
  EXPECT_EQ(tensor.shape(), (Shape{2, 3}));
  EXPECT_EQ(std::vector<float>(tensor.data(), tensor.data() + 6),
            (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_TRUE(f4.mapped());  // little-endian C order: the file itself, not a copy

  const auto big = npy::load(data_file("f8_big_endian.npy"));
  EXPECT_FALSE(big.mapped());
  const auto doubles = big.as<double>();
  EXPECT_EQ(std::vector<double>(doubles.data(), doubles.data() + 4),
            (std::vector<double>{0.5, 1.5, 2.5, 3.5}));

  const auto fortran = npy::load(data_file("i4_fortran.npy"));
  EXPECT_TRUE(fortran.fortran_order());
  const auto ints = fortran.as<std::int32_t>();
  EXPECT_EQ(std::vector<std::int32_t>(ints.data(), ints.data() + 6),
            (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}));  // C order, as NumPy shows it

  // The tensors view the arrays' memory: keep each array alive while its tensor is read.
  const auto flag_array = npy::load(data_file("b1.npy"));
  const auto flags = flag_array.as<bool>();
  EXPECT_EQ(std::vector<bool>(flags.data(), flags.data() + 3),
            (std::vector<bool>{true, false, true}));
  EXPECT_EQ(npy::load(data_file("f2.npy")).dtype(), npy::DType::f2);
  const auto scalar = npy::load(data_file("u1_scalar.npy"));
  EXPECT_EQ(scalar.shape().rank(), 0u);
  EXPECT_EQ(std::to_integer<int>(scalar.data()[0]), 7);
  EXPECT_EQ(npy::load(data_file("i8_empty.npy")).shape(), (Shape{0, 5}));
  const auto v2 = npy::load(data_file("u2_v2.npy"));
  EXPECT_EQ(v2.as<std::uint16_t>().data()[4], 4);
  const auto v3 = npy::load(data_file("i2_v3.npy"));
  EXPECT_EQ(v3.as<std::int16_t>().data()[2], 2);
}

TEST(Npy, AsChecksTheDtypeAndTheRank) {
  const auto array = npy::load(data_file("f4_c.npy"));
  try {
    (void)array.as<double>();
    FAIL() << "f4 data read as f8";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("holds f4 elements but as<T>() asked for f8"),
              std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)npy::load(data_file("u1_scalar.npy")).as<std::uint8_t>(), FormatError);
}

struct Malformed {
  const char* name;
  std::string bytes;
  const char* reason;
};

std::string with_version(unsigned char major, unsigned char minor) {
  std::string file = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd");
  file[6] = static_cast<char>(major);
  file[7] = static_cast<char>(minor);
  return file;
}

TEST(Npy, RefusesMalformedFilesWithTheReason) {
  const std::string f4 = "'descr': '<f4', 'fortran_order': False, ";
  std::string no_newline = npy_file("{" + f4 + "'shape': (1,), }", "abcd");
  no_newline[10 + 117] = ' ';  // the header's final newline
  std::string nul = npy_file("{" + f4 + "'shape': (1,), }", "abcd");
  nul[20] = '\0';
  std::string long_header = npy_file("{" + f4 + "'shape': (1,), }", "abcd");
  long_header[8] = '\xff';
  long_header[9] = '\x7f';
  std::string huge_v2 = "\x93NUMPY\x02";
  huge_v2 += std::string("\0\0\0\0\x40", 5) + "xxxxxxxxxx";
  const std::vector<Malformed> cases = {
      {"empty", "", "the file is empty"},
      {"short", "\x93NUM", "too short"},
      {"magic", "\x93NUMPX" + with_version(1, 0).substr(6), "magic string"},
      {"version_4", with_version(4, 0), "version 4.0 is not supported"},
      {"version_1_1", with_version(1, 1), "version 1.1 is not supported"},
      {"header_past_end", long_header, "runs past the end of the file"},
      {"header_over_cap", huge_v2, "over the 1 MiB"},
      {"no_newline", no_newline, "does not end with a newline"},
      {"nul", nul, "NUL byte"},
      {"not_a_dict", npy_file("['descr', '<f4']"), "expected '{'"},
      {"no_descr", npy_file("{'fortran_order': False, 'shape': (1,), }", "abcd"), "no 'descr'"},
      {"no_order", npy_file("{'descr': '<f4', 'shape': (1,), }", "abcd"), "no 'fortran_order'"},
      {"no_shape", npy_file("{'descr': '<f4', 'fortran_order': False, }", "abcd"), "no 'shape'"},
      {"extra_key", npy_file("{" + f4 + "'shape': (1,), 'x': 1, }", "abcd"), "unexpected key 'x'"},
      {"twice", npy_file("{" + f4 + "'shape': (1,), 'shape': (1,), }", "abcd"), "appears twice"},
      {"object", npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"),
       "never unpickles"},
      {"structured", npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"),
       "structured (record) dtypes"},
      {"complex", npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"),
       "'<c8' is not supported"},
      {"unicode", npy_file("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }"),
       "'<U3' is not supported"},
      {"no_byte_order", npy_file("{'descr': 'f4', 'fortran_order': False, 'shape': (1,), }"),
       "no byte-order character"},
      {"pipe_multibyte", npy_file("{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }"),
       "'not applicable'"},
      {"negative", npy_file("{" + f4 + "'shape': (-1,), }"), "negative"},
      {"fraction", npy_file("{" + f4 + "'shape': (2.5,), }"), "not an integer"},
      {"string_dim", npy_file("{" + f4 + "'shape': ('2',), }"), "not a non-negative integer"},
      {"order_word", npy_file("{'descr': '<f4', 'fortran_order': yes, 'shape': (1,), }"),
       "True or False"},
      {"no_tuple_comma", npy_file("{" + f4 + "'shape': (1), }", "abcd"), "trailing comma"},
      {"count_overflow", npy_file("{" + f4 + "'shape': (4294967296, 4294967296), }"),
       "overflows 64 bits"},
      {"dim_overflow", npy_file("{" + f4 + "'shape': (99999999999999999999999,), }"),
       "overflows 64 bits"},
      {"short_data", npy_file("{" + f4 + "'shape': (2,), }", "abcd"), "shorter than the shape"},
      {"long_data", npy_file("{" + f4 + "'shape': (1,), }", "abcdef"), "longer than the shape"},
      {"bool_byte",
       npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", "\x01\x02"),
       "neither 0 nor 1"},
      {"rank_9", npy_file("{" + f4 + "'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1), }", "abcd"), "rank 9"},
      {"open_string", npy_file("{'descr': '<f4, 'fortran_order': False, 'shape': (1,), }"),
       "malformed"},
      {"trailing_text", npy_file("{" + f4 + "'shape': (1,), } x", "abcd"), "unexpected text"},
      {"escape", npy_file("{'descr': '<f\\4', 'fortran_order': False, 'shape': (1,), }"),
       "escape sequences"},
      {"shape_not_tuple", npy_file("{" + f4 + "'shape': [1], }", "abcd"), "'(' to open the shape"},
  };
  ASSERT_GE(cases.size(), 30u);
  for (const Malformed& bad : cases) {
    SCOPED_TRACE(bad.name);
    const std::string path = scratch(std::string("bad_") + bad.name + ".npy");
    resident::testing::write_file(path, bad.bytes);
    try {
      (void)npy::load(path);
      ADD_FAILURE() << "accepted";
    } catch (const FormatError& error) {
      EXPECT_NE(std::string(error.what()).find(bad.reason), std::string::npos) << error.what();
      EXPECT_EQ(error.path(), path);
    }
    std::remove(path.c_str());
  }
}

TEST(Npy, RefusesWhatIsNotAReadableFile) {
  try {
    (void)npy::load(scratch("does_not_exist.npy"));
    FAIL() << "a missing file loaded";
  } catch (const FormatError& error) {
    EXPECT_NE(std::string(error.what()).find("No such file or directory"), std::string::npos)
        << error.what();
  }
  EXPECT_THROW((void)npy::load(::testing::TempDir()), FormatError);  // a directory
}

/// Mode bits of the file at `path`.
::mode_t mode_of(const std::string& path) {
  struct ::stat status {};
  EXPECT_EQ(::stat(path.c_str(), &status), 0) << path;
  return status.st_mode & 07777;
}

// A save writes a temporary beside the file and renames it into place: a new file gets the
// mode open() would give it (not a temporary's 0600), an old one keeps its mode, and nothing
// else is left in the folder.
TEST(NpySave, GivesTheUsualModeAndLeavesNoTemporary) {
  const std::vector<float> values{1, 2, 3};
  const std::string path = scratch("mode.npy");
  std::remove(path.c_str());
  const ::mode_t mask = ::umask(022);
  npy::save(path, values.data(), Shape{3});
  EXPECT_EQ(mode_of(path), 0644u);
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  npy::save(path, values.data(), Shape{3});
  EXPECT_EQ(mode_of(path), 0640u);
  ::umask(mask);
  EXPECT_EQ(resident::testing::temporaries_left(::testing::TempDir()), std::vector<std::string>{});
  std::remove(path.c_str());
}

// A refused save leaves the old file as it was and no partial file anywhere.
TEST(NpySave, AFailedSaveLeavesTheOldFileAndNoPartialFile) {
  const std::vector<float> values{1, 2, 3};
  const std::string missing = scratch("no_such_folder/x.npy");
  try {
    npy::save(missing, values.data(), Shape{3});
    FAIL() << "saved into a folder that does not exist";
  } catch (const resident::Error& error) {
    EXPECT_NE(std::string(error.what()).find(missing), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("No such file or directory"), std::string::npos)
        << error.what();
  }
  struct ::stat status {};
  EXPECT_NE(::stat(missing.c_str(), &status), 0);

  const std::string path = scratch("kept.npy");
  npy::save(path, values.data(), Shape{3});
  // A shape whose byte size overflows: refused before anything is written.
  EXPECT_THROW(npy::save(path, values.data(), Shape{std::size_t{1} << 62, 8}),
               resident::InvalidArgument);
  const npy::Array kept = npy::load(path);
  ASSERT_EQ(kept.shape(), Shape{3});
  EXPECT_EQ(kept.as<float>().data()[2], 3.0f);
  EXPECT_EQ(resident::testing::temporaries_left(::testing::TempDir()), std::vector<std::string>{});
  std::remove(path.c_str());
}

// Root writes into read-only folders: as root, the save runs as `nobody`.
TEST(NpySave, AReadOnlyFolderIsRefusedAndLeftEmpty) {
  const std::string folder = scratch("read_only");
  ASSERT_EQ(::mkdir(folder.c_str(), 0555), 0);
  const std::vector<float> values{1, 2, 3};
  resident::testing::as_unprivileged([&] {
    EXPECT_THROW(npy::save(folder + "/x.npy", values.data(), Shape{3}), resident::Error);
  });
  DIR* dir = ::opendir(folder.c_str());
  ASSERT_NE(dir, nullptr);
  std::size_t entries = 0;
  while (::readdir(dir) != nullptr) ++entries;
  ::closedir(dir);
  EXPECT_EQ(entries, 2u);  // . and ..
  ::rmdir(folder.c_str());
}

}  // namespace
