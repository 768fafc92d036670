// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// `.npz` archives as a stranger hands them over: what numpy.savez and Python's zipfile write
// (data descriptors, comments, keys with slashes, both byte orders, Fortran order), and
// hostile ones built byte by byte (names that clash, records that disagree, counts and offsets
// that lie, deflate streams that end early), and archives changed, replaced or moved from while
// in use. Each is read right or refused with a typed error naming the archive, the member and
// the reason; nothing crashes, hangs or returns another member's values.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "resident/npz.hpp"
#include "resident/resident.hpp"
#include "support/temp_npy.hpp"
#include "support/zip_builder.hpp"

namespace {

namespace npy = resident::npy;
namespace npz = resident::npz;
using resident::FormatError;
using resident::HostSpace;
using resident::Shape;
using resident::testing::build_zip;
using resident::testing::npy_image;
using resident::testing::patch;
using resident::testing::put;
using resident::testing::ZipMember;

/// A scratch archive path (holding `bytes` when given), removed at the end of the test.
struct Scratch {
  explicit Scratch(const std::string& name)
      : path(::testing::TempDir() + "resident_npzadv_" + name + "_" + std::to_string(::getpid()) +
             ".npz") {
    std::remove(path.c_str());
  }
  Scratch(const std::string& name, const std::string& bytes) : Scratch(name) {
    resident::testing::write_file(path, bytes);
  }
  ~Scratch() {
    std::remove(path.c_str());
    ::rmdir(path.c_str());
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::string path;
};

resident::DatasetOptions batches_of(std::size_t size) {
  resident::DatasetOptions options;
  options.batch_size = size;
  options.reserve_bytes = 0;
  return options;
}

template <class T>
std::vector<T> values_of(const npy::Array& array) {
  const T* first = reinterpret_cast<const T*>(array.data());  // NOLINT
  return std::vector<T>(first, first + array.size());
}

/// Field `F` of a host dataset, all its rows, as a vector.
template <std::size_t F, class Dataset>
auto field_values(const Dataset& dataset) {
  const auto view = dataset.template field<F>();
  using T = std::remove_const_t<std::remove_pointer_t<decltype(view.data())>>;
  return std::vector<T>(view.data(), view.data() + view.size());
}

/// Runs `load`, expecting a FormatError about `path` whose reason holds each of `words`.
template <class Load>
void expect_format_error(const std::string& path, const std::vector<std::string>& words,
                         Load load) {
  try {
    load();
    ADD_FAILURE() << "accepted " << path;
  } catch (const FormatError& error) {
    EXPECT_EQ(error.path(), path);
    for (const std::string& word : words)
      EXPECT_NE(error.reason().find(word), std::string::npos)
          << "'" << word << "' is missing from: " << error.what();
  }
}

/// The `.npy` image of `values` (shape `shape`) byte-swapped to big-endian.
template <class T>
std::string big_endian_image(const std::vector<T>& values, const Shape& shape) {
  std::string image = npy_image(values, shape);
  const std::string little = npy::detail::prefix_bytes(npy::dtype_of<T>(), shape);
  std::string head = little;
  head.replace(head.find("'<"), 2, "'>");
  std::string data = image.substr(little.size());
  for (std::size_t at = 0; at < data.size(); at += sizeof(T))
    for (std::size_t byte = 0; byte < sizeof(T) / 2; ++byte)
      std::swap(data[at + byte], data[at + sizeof(T) - 1 - byte]);
  return head + data;
}

/// The `.npy` image of a rows x cols int32 array stored in Fortran order (column by column),
/// whose C-order values are `0, 1, 2, ...`.
std::string fortran_image(std::size_t rows, std::size_t cols) {
  std::string head = npy::detail::prefix_bytes(npy::DType::i4, Shape{rows, cols});
  head.replace(head.find("'fortran_order': False"), 22, "'fortran_order': True ");
  std::vector<std::int32_t> by_column;
  for (std::size_t col = 0; col < cols; ++col)
    for (std::size_t row = 0; row < rows; ++row)
      by_column.push_back(static_cast<std::int32_t>(row * cols + col));
  return head + std::string(reinterpret_cast<const char*>(by_column.data()),  // NOLINT
                            by_column.size() * 4);
}

const std::vector<std::uint8_t> ones{1, 1, 1}, twos{2, 2, 2};

// ----- Defects these tests found, fixed since --------------------------------------------------

// numpy.load(path)["x.npy"] is the member named x.npy whenever there is one (NpzFile looks the
// name up first, the key second). An archive holding both x.npy.npy (key "x.npy") and x.npy
// (key "x") -- npz::save writes one from keys "x.npy" and "x" -- must give x.npy's values for
// "x.npy", as NumPy does, not those of the member listed first.
TEST(NpzKeys, AnExactMemberNameWinsOverAKeyEndingInNpy) {
  const Scratch file("clash");
  npz::save(file.path, {{"x.npy", npy::DType::u1, ones.data(), Shape{3}},
                        {"x", npy::DType::u1, twos.data(), Shape{3}}});
  const npz::Archive archive(file.path);
  ASSERT_EQ(archive.members().size(), 2u);
  EXPECT_EQ(archive.member("x.npy").name, "x.npy");
  EXPECT_EQ(values_of<std::uint8_t>(archive.load("x.npy")), twos) << "NumPy gives [2, 2, 2]";
  EXPECT_EQ(values_of<std::uint8_t>(archive.load("x.npy.npy")), ones);
  // Every listed member loads by its own name.
  for (const npz::Member& member : archive.members())
    EXPECT_EQ(archive.member(member.name).name, member.name);
}

// A moved-from Archive is valid but empty: asking it for a member is an InvalidArgument (it
// has none), never a null dereference. Run in a child process: it used to segfault.
TEST(NpzLifetime, AMovedFromArchiveRefusesLookupsInsteadOfCrashing) {
  const Scratch file("moved", build_zip({{"x.npy", npy_image(ones, Shape{3})}}).bytes);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::alarm(20);
        npz::Archive archive(file.path);
        const npz::Archive taken = std::move(archive);
        int typed = 0;
        try {
          (void)archive.member("x");  // NOLINT(bugprone-use-after-move): the point of the test
        } catch (const resident::Error&) {
          ++typed;
        }
        try {
          (void)archive.load("x");  // NOLINT(bugprone-use-after-move)
        } catch (const resident::Error&) {
          ++typed;
        }
        std::_Exit(typed == 2 && taken.contains("x") ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "")
      << "a moved-from Archive crashed (or accepted a lookup)";
}

// An archive cut short after it was opened: loading a deflated member must say which member
// and that the archive changed, not just "the file ended early".
TEST(NpzChanges, ArchiveTruncatedBeforeADeflatedLoadNamesTheMemberAndTheChange) {
  std::vector<std::uint8_t> many(4096);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<std::uint8_t>(i * 7 % 251);
  const Scratch file("cut_deflated",
                     build_zip({{"x.npy", npy_image(many, Shape{many.size()}), true}}).bytes);
  const npz::Archive archive(file.path);
  ASSERT_EQ(::truncate(file.path.c_str(), 200), 0) << std::strerror(errno);
  expect_format_error(file.path, {"member 'x.npy'", "truncated"}, [&] { (void)archive.load("x"); });
}

// The same for a stored big-endian member (read and converted, not mapped).
TEST(NpzChanges, ArchiveTruncatedBeforeAStoredReadNamesTheMemberAndTheChange) {
  std::vector<std::int32_t> values(1024);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i);
  const Scratch file("cut_stored",
                     build_zip({{"x.npy", big_endian_image(values, Shape{values.size()})}}).bytes);
  const npz::Archive archive(file.path);
  ASSERT_EQ(::truncate(file.path.c_str(), 300), 0) << std::strerror(errno);
  expect_format_error(file.path, {"member 'x.npy'", "truncated"}, [&] { (void)archive.load("x"); });
}

// ----- What was checked and holds -----------------------------------------------------------

TEST(NpzNames, NamesThatAreNotNumpyKeysAreRefusedByName) {
  const std::string data = npy_image(ones, Shape{3});
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"x", "not <key>.npy"},
      {".npy", "not <key>.npy"},
      {"../x.npy", "'..' path"},
      {"/x.npy", "empty, '.' or '..'"},
      {"a//b.npy", "empty, '.' or '..'"},
      {"a\\b.npy", "backslash"},
      {std::string("a\0b.npy", 7), "control character"}};
  for (const auto& [name, why] : cases) {
    SCOPED_TRACE(name);
    const Scratch file("name", build_zip({{name, data}}).bytes);
    expect_format_error(file.path, {"member '" + name + "'", why},
                        [&] { (void)npz::Archive(file.path); });
  }
  const Scratch empty("empty_name", build_zip({{"", data}}).bytes);
  expect_format_error(empty.path, {"empty name"}, [&] { (void)npz::Archive(empty.path); });
  // A key with a slash is one NumPy writes (savez(**{"a/b": ...})): read.
  const Scratch slash("slash", build_zip({{"a/b.npy", data}}).bytes);
  EXPECT_EQ(values_of<std::uint8_t>(npz::Archive(slash.path).load("a/b")), ones);
}

TEST(NpzNames, TheSameNameTwiceIsRefusedEvenWhenTheBytesDiffer) {
  const Scratch file("twice", build_zip({{"x.npy", npy_image(ones, Shape{3})},
                                         {"x.npy", npy_image(twos, Shape{3})}})
                                  .bytes);
  expect_format_error(file.path, {"member 'x.npy'", "two members have this name"},
                      [&] { (void)npz::Archive(file.path); });
}

// Python's zipfile writes a data descriptor (flag bit 3, zeros in the local header's CRC and
// sizes) when it writes to a stream it cannot seek; the central directory has the figures.
TEST(NpzZipfile, DataDescriptorsStoredAndDeflatedAreRead) {
  for (const bool deflate : {false, true}) {
    SCOPED_TRACE(deflate ? "deflated" : "stored");
    ZipMember member{"x.npy", npy_image(twos, Shape{3}), deflate};
    resident::testing::ZipBytes zip = build_zip({member});
    // Flag bit 3 in both headers, zeros in the local header's CRC and sizes.
    patch(zip.bytes, zip.local_offsets[0] + 6, 8, 2);
    for (std::size_t field = 14; field < 26; field += 4)
      patch(zip.bytes, zip.local_offsets[0] + field, 0, 4);
    patch(zip.bytes, zip.central_offsets[0] + 8, 8, 2);
    const Scratch file("descriptor", zip.bytes);
    const npz::Archive archive(file.path);
    EXPECT_EQ(values_of<std::uint8_t>(archive.load("x")), twos);
    EXPECT_NO_THROW(archive.verify_crc("x"));
  }
}

// zipfile lets an archive carry a comment; one holding the end record's signature does not
// fool the reader (Python's own zipfile, which takes the last signature, lists no members).
TEST(NpzZipfile, AnArchiveCommentHoldingTheEndSignatureIsSkipped) {
  resident::testing::ZipBytes zip = build_zip({{"x.npy", npy_image(twos, Shape{3})}});
  const std::string comment = std::string("hello PK\x05\x06 world", 16) + std::string(20, '\0');
  patch(zip.bytes, zip.end_offset + 20, comment.size(), 2);
  zip.bytes += comment;
  const Scratch file("comment", zip.bytes);
  const npz::Archive archive(file.path);
  ASSERT_EQ(archive.members().size(), 1u);
  EXPECT_EQ(values_of<std::uint8_t>(archive.load("x")), twos);
}

TEST(NpzHostile, DirectoryFiguresThatLieAreRefused) {
  const std::vector<ZipMember> members = {{"x.npy", npy_image(ones, Shape{3})},
                                          {"y.npy", npy_image(twos, Shape{3})}};
  {  // A count of 65534 entries in a 2-entry directory.
    resident::testing::ZipBytes zip = build_zip(members);
    patch(zip.bytes, zip.end_offset + 8, 0xfffe, 2);
    patch(zip.bytes, zip.end_offset + 10, 0xfffe, 2);
    const Scratch file("count", zip.bytes);
    expect_format_error(file.path, {"65534 entries"}, [&] { (void)npz::Archive(file.path); });
  }
  {  // The directory's offset pointing into the first member's data.
    resident::testing::ZipBytes zip = build_zip(members);
    patch(zip.bytes, zip.end_offset + 16, zip.local_offsets[0] + 40, 4);
    const Scratch file("into_data", zip.bytes);
    expect_format_error(file.path, {"central directory is truncated or misplaced"},
                        [&] { (void)npz::Archive(file.path); });
  }
  {  // A ZIP64 extra field claiming 2^62 compressed bytes.
    ZipMember member = members[0];
    member.zip64 = true;
    resident::testing::ZipBytes zip = build_zip({member});
    const std::size_t local_extra = zip.local_offsets[0] + 30 + 5 + 4 + 8;
    const std::size_t central_extra = zip.central_offsets[0] + 46 + 5 + 4 + 8;
    patch(zip.bytes, local_extra, std::uint64_t{1} << 62, 8);
    patch(zip.bytes, central_extra, std::uint64_t{1} << 62, 8);
    const Scratch file("zip64_huge", zip.bytes);
    expect_format_error(file.path, {"member 'x.npy'", "run past the start of the central"},
                        [&] { (void)npz::Archive(file.path); });
  }
  {  // A ZIP64 extra field too short for the figures marked 0xffffffff.
    ZipMember member = members[0];
    member.zip64 = true;
    resident::testing::ZipBytes zip = build_zip({member});
    patch(zip.bytes, zip.central_offsets[0] + 46 + 5 + 2, 8, 2);  // the field's size: 8
    patch(zip.bytes, zip.central_offsets[0] + 30, 4 + 8, 2);      // the entry's extra length
    zip.bytes.erase(zip.central_offsets[0] + 46 + 5 + 4 + 8, 8);
    const std::size_t directory = zip.end_offset - zip.directory_offset - 8;
    zip.end_offset -= 8;
    patch(zip.bytes, zip.end_offset + 12, directory, 4);
    const Scratch file("zip64_short", zip.bytes);
    expect_format_error(file.path, {"member 'x.npy'", "ZIP64 extra field holds 8 bytes"},
                        [&] { (void)npz::Archive(file.path); });
  }
}

TEST(NpzHostile, LocalHeadersThatDisagreeAreRefused) {
  const ZipMember member{"x.npy", npy_image(ones, Shape{3})};
  {  // A local name of the same length but other bytes.
    resident::testing::ZipBytes zip = build_zip({member});
    zip.bytes[zip.local_offsets[0] + 30] = 'z';
    const Scratch file("local_name", zip.bytes);
    expect_format_error(file.path, {"member 'x.npy'", "the local header names it 'z.npy'"},
                        [&] { (void)npz::Archive(file.path); });
  }
  {  // An encryption flag in the local header only.
    resident::testing::ZipBytes zip = build_zip({member});
    patch(zip.bytes, zip.local_offsets[0] + 6, 1, 2);
    const Scratch file("local_flags", zip.bytes);
    expect_format_error(file.path, {"member 'x.npy'", "encrypted"},
                        [&] { (void)npz::Archive(file.path); });
  }
  {  // A local CRC other than the directory's.
    resident::testing::ZipBytes zip = build_zip({member});
    patch(zip.bytes, zip.local_offsets[0] + 14, 0xdeadbeef, 4);
    const Scratch file("local_crc", zip.bytes);
    expect_format_error(file.path, {"member 'x.npy'", "disagree on its CRC or sizes"},
                        [&] { (void)npz::Archive(file.path); });
  }
}

TEST(NpzHostile, EmptyAndZeroMemberArchives) {
  const Scratch zero_bytes("zero_bytes", std::string());
  expect_format_error(zero_bytes.path, {"the file is empty"},
                      [&] { (void)npz::Archive(zero_bytes.path); });
  const Scratch none("none", build_zip({}).bytes);
  const npz::Archive archive(none.path);
  EXPECT_TRUE(archive.members().empty());
  try {
    (void)archive.load("x");
    ADD_FAILURE() << "loaded a member of an empty archive";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("its keys are: (none)"), std::string::npos)
        << error.what();
  }
}

// A deflate stream that is whole but yields fewer bytes than the sizes (and the .npy header)
// declare, or more, or is followed by garbage: each refused when the member is read.
TEST(NpzHostile, DeflateStreamsOfTheWrongLengthAreRefused) {
  std::vector<std::uint8_t> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint8_t>(i % 13);
  const std::string image = npy_image(values, Shape{values.size()});
  {
    ZipMember member{"x.npy", image, true};
    member.stored_bytes = resident::testing::raw_deflate(image.substr(0, image.size() - 10));
    const Scratch file("short_stream", build_zip({member}).bytes);
    expect_format_error(file.path, {"member 'x.npy'", "deflate stream ends after"},
                        [&] { (void)npz::Archive(file.path).load("x"); });
    const auto space = HostSpace::with_budget(1 << 20);
    expect_format_error(file.path, {"member 'x.npy'", "deflate stream ends after"}, [&] {
      (void)resident::load_dataset<HostSpace, std::uint8_t>(space, batches_of(10), file.path,
                                                            {"x"});
    });
  }
  {
    ZipMember member{"x.npy", image, true};
    member.stored_bytes = resident::testing::raw_deflate(image + "more");
    const Scratch file("long_stream", build_zip({member}).bytes);
    expect_format_error(file.path, {"member 'x.npy'", "inflates past"},
                        [&] { (void)npz::Archive(file.path).load("x"); });
  }
  {
    ZipMember member{"x.npy", image, true};
    member.stored_bytes = resident::testing::raw_deflate(image) + "garbage";
    const Scratch file("garbage", build_zip({member}).bytes);
    expect_format_error(file.path, {"member 'x.npy'", "7 compressed bytes follow"},
                        [&] { (void)npz::Archive(file.path).load("x"); });
  }
}

TEST(NpzHostile, StoredCrcMismatchIsCaughtOnlyWhenAsked) {
  ZipMember member{"x.npy", npy_image(twos, Shape{3})};
  member.crc = 12345;
  const Scratch file("crc", build_zip({member}).bytes);
  EXPECT_EQ(values_of<std::uint8_t>(npz::Archive(file.path).load("x")), twos);
  npz::ArchiveOptions verify;
  verify.verify_stored_crc = true;
  const npz::Archive checked(file.path, verify);
  expect_format_error(file.path, {"member 'x.npy'", "CRC-32 mismatch"},
                      [&] { (void)checked.load("x"); });
  const auto space = HostSpace::with_budget(1 << 20);
  expect_format_error(file.path, {"member 'x.npy'", "CRC-32 mismatch"}, [&] {
    (void)resident::load_dataset<HostSpace, std::uint8_t>(space, batches_of(1), checked, {"x"});
  });
}

// Big-endian and Fortran-order members, stored and deflated, give the right values in a
// dataset.
TEST(NpzValues, BigEndianAndFortranMembersLoadRight) {
  std::vector<std::int32_t> x(12);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<std::int32_t>(i);
  const std::vector<double> y{0.25, -1.5, 1e300};
  for (const bool deflate : {false, true}) {
    SCOPED_TRACE(deflate ? "deflated" : "stored");
    const Scratch big("big", build_zip({{"x.npy", big_endian_image(x, Shape{3, 4}), deflate},
                                        {"y.npy", big_endian_image(y, Shape{3}), deflate}})
                                 .bytes);
    const auto space = HostSpace::with_budget(1 << 20);
    const auto dataset = resident::load_dataset<HostSpace, std::int32_t, double>(
        space, batches_of(1), big.path, {"x", "y"});
    EXPECT_EQ(field_values<0>(dataset), x);
    EXPECT_EQ(field_values<1>(dataset), y);
    const Scratch fortran("fortran", build_zip({{"x.npy", fortran_image(3, 4), deflate}}).bytes);
    const auto from_fortran = resident::load_dataset<HostSpace, std::int32_t>(
        space, batches_of(1), fortran.path, {"x.npy"});
    EXPECT_EQ(field_values<0>(from_fortran), x);
    EXPECT_EQ(values_of<std::int32_t>(npz::Archive(fortran.path).load("x")), x);
  }
}

TEST(NpzDatasets, KeysTypesAndRowsAreChecked) {
  const Scratch file("fields",
                     build_zip({{"x.npy", npy_image(ones, Shape{3})},
                                {"y.npy", npy_image(std::vector<std::uint8_t>{1, 2}, Shape{2})}})
                         .bytes);
  const auto space = HostSpace::with_budget(1 << 20);
  try {
    (void)resident::load_dataset<HostSpace, std::uint8_t>(space, batches_of(1), file.path, {"z"});
    ADD_FAILURE() << "loaded an unknown key";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("its keys are: x, y"), std::string::npos)
        << error.what();
  }
  expect_format_error(file.path, {"member 'x.npy'", "u1 elements but field 0 is f4"}, [&] {
    (void)resident::load_dataset<HostSpace, float>(space, batches_of(1), file.path, {"x"});
  });
  EXPECT_THROW((void)(resident::load_dataset<HostSpace, std::uint8_t, std::uint8_t>(
                   space, batches_of(1), file.path, {"x", "y"})),
               resident::InvalidArgument);
  EXPECT_EQ(space.used_bytes(), 0u);
}

// Over budget: load_dataset refuses with a CapacityError from the headers; make_dataset of a
// deflated archive must stream, which it does from the member inflated once into host memory.
TEST(NpzDatasets, BudgetsTooSmallAreRefusedBeforeAnythingIsRead) {
  const std::vector<std::uint8_t> zeros(std::size_t{64} << 10);
  for (const bool deflate : {false, true}) {
    SCOPED_TRACE(deflate ? "deflated" : "stored");
    const Scratch file(
        "budget", build_zip({{"x.npy", npy_image(zeros, Shape{zeros.size()}), deflate}}).bytes);
    const auto space = HostSpace::with_budget(std::size_t{16} << 10);
    EXPECT_THROW((void)(resident::load_dataset<HostSpace, std::uint8_t>(space, batches_of(64),
                                                                        file.path, {"x"})),
                 resident::CapacityError);
    EXPECT_FALSE(
        (resident::plan<HostSpace, std::uint8_t>(space, batches_of(64), file.path, {"x"}).fits));
    if (deflate) {
      auto streamed =
          resident::make_dataset<HostSpace, std::uint8_t>(space, batches_of(64), file.path, {"x"});
      EXPECT_TRUE(streamed.is_streaming());
      EXPECT_EQ(streamed.streaming()->host_bytes(), zeros.size());
      EXPECT_LE(space.used_bytes(), std::size_t{16} << 10);
    }
    EXPECT_EQ(space.used_bytes(), 0u);
  }
}

// Modified in place (same size, new bytes) after opening: the mapped load refuses it.
TEST(NpzChanges, AnArchiveModifiedInPlaceAfterOpeningIsRefused) {
  const Scratch file("in_place", build_zip({{"x.npy", npy_image(ones, Shape{3})}}).bytes);
  const npz::Archive archive(file.path);
  const int fd = ::open(file.path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "\x09", 1, 100), 1);
  const ::timespec later[2] = {{0, UTIME_OMIT}, {::time(nullptr) + 5, 0}};
  ASSERT_EQ(::futimens(fd, later), 0);
  ::close(fd);
  expect_format_error(file.path, {"changed", "modified"}, [&] { (void)archive.load("x"); });
}

// npz::save over the archive an Archive holds open: arrays loaded before keep the old values
// (the old file lives on, no SIGBUS); the old Archive refuses further loads with a FormatError
// saying the file was replaced; a new Archive reads the new data.
TEST(NpzChanges, SavingOverAnOpenArchiveKeepsOldArraysAndRefusesNewLoads) {
  std::vector<std::uint8_t> big(std::size_t{1} << 16, 1);
  const Scratch file("resave");
  npz::save(file.path, {{"x", npy::DType::u1, big.data(), Shape{big.size()}},
                        {"y", npy::DType::u1, big.data(), Shape{big.size()}}});
  const npz::Archive archive(file.path);
  const npy::Array before = archive.load("x");
  EXPECT_TRUE(before.mapped());
  std::vector<std::uint8_t> small{7};
  npz::save(file.path, {{"x", npy::DType::u1, small.data(), Shape{1}}}, npz::Compression::deflated);
  EXPECT_EQ(values_of<std::uint8_t>(before), big);
  expect_format_error(file.path, {"removed or replaced"}, [&] { (void)archive.load("y"); });
  EXPECT_EQ(values_of<std::uint8_t>(npz::Archive(file.path).load("x")), small);
}

TEST(NpzSave, RefusesDirectoriesFifosAndBadKeysWithoutTouchingThem) {
  const std::vector<std::uint8_t> data{1, 2, 3};
  const Scratch folder("folder");
  ASSERT_EQ(::mkdir(folder.path.c_str(), 0700), 0);
  EXPECT_THROW(npz::save(folder.path, {{"x", npy::DType::u1, data.data(), Shape{3}}}),
               resident::Error);
  struct ::stat status {};
  ASSERT_EQ(::stat(folder.path.c_str(), &status), 0);
  EXPECT_TRUE(S_ISDIR(status.st_mode));
  ::rmdir(folder.path.c_str());

  const Scratch fifo("fifo");
  ASSERT_EQ(::mkfifo(fifo.path.c_str(), 0600), 0);
  EXPECT_THROW(npz::save(fifo.path, {{"x", npy::DType::u1, data.data(), Shape{3}}}),
               resident::Error);
  ASSERT_EQ(::stat(fifo.path.c_str(), &status), 0);
  EXPECT_TRUE(S_ISFIFO(status.st_mode));
  expect_format_error(fifo.path, {"FIFO"}, [&] { (void)npz::Archive(fifo.path); });

  const Scratch file("keys");
  for (const std::string key : {"", "a/../b", "a\\b", "x/"})
    EXPECT_THROW(npz::save(file.path, {{key, npy::DType::u1, data.data(), Shape{3}}}),
                 resident::InvalidArgument)
        << key;
  EXPECT_THROW(npz::save(file.path, {{"x", npy::DType::u1, data.data(), Shape{3}},
                                     {"x", npy::DType::u1, data.data(), Shape{3}}}),
               resident::InvalidArgument);
  EXPECT_NE(::access(file.path.c_str(), F_OK), 0) << "a refused save left a file";
}

}  // namespace
