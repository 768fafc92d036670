// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <functional>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "resident/npz.hpp"
#include "resident/resident.hpp"
#include "support/spaces.hpp"
#include "support/temp_npy.hpp"
#include "support/zip_builder.hpp"

namespace {

using resident::FormatError;
using resident::HostSpace;
using resident::Shape;
using resident::testing::build_zip;
using resident::testing::npy_image;
using resident::testing::patch;
using resident::testing::ZipMember;
namespace npz = resident::npz;

/// A scratch archive holding `bytes`, removed at the end of the test.
struct TempArchive {
  explicit TempArchive(const std::string& bytes, const std::string& name = "archive")
      : path(::testing::TempDir() + "resident_npz_" + name + "_" + std::to_string(::getpid()) +
             ".npz") {
    resident::testing::write_file(path, bytes);
  }
  ~TempArchive() { std::remove(path.c_str()); }
  TempArchive(const TempArchive&) = delete;
  TempArchive& operator=(const TempArchive&) = delete;
  std::string path;
};

std::vector<float> iota_floats(std::size_t count) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), 0.5f);
  return values;
}

std::vector<std::uint8_t> labels(std::size_t count) {
  std::vector<std::uint8_t> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<std::uint8_t>(i % 10);
  return values;
}

constexpr std::size_t rows = 37, features = 5;

/// x (rows x features float32) and y (rows uint8), stored or deflated.
std::vector<ZipMember> xy_members(bool deflate) {
  return {{"x.npy", npy_image(iota_floats(rows * features), Shape{rows, features}), deflate},
          {"y.npy", npy_image(labels(rows), Shape{rows}), deflate}};
}

TEST(NpzArchive, ListsMembersFromTheHeadersAlone) {
  // The bool member's data holds a 7: listing never reads data, so only load() sees it.
  std::string bools = npy_image(std::vector<std::uint8_t>{0, 1, 7}, Shape{3});
  bools.replace(0, bools.size() - 3,
                resident::npy::detail::prefix_bytes(resident::npy::DType::b1, Shape{3}));
  auto members = xy_members(true);
  members.push_back({"flags.npy", bools, false});
  const TempArchive file(build_zip(members).bytes);
  const npz::Archive archive(file.path);
  ASSERT_EQ(archive.members().size(), 3u);
  EXPECT_EQ(archive.member("x").dtype(), resident::npy::DType::f4);
  EXPECT_EQ(archive.member("x.npy").shape(), (Shape{rows, features}));
  EXPECT_TRUE(archive.member("y").compressed);
  EXPECT_FALSE(archive.member("flags").compressed);
  EXPECT_TRUE(archive.contains("flags"));
  EXPECT_FALSE(archive.contains("z"));
  EXPECT_THROW((void)archive.member("z"), resident::InvalidArgument);
  try {
    (void)archive.load("flags");
    FAIL() << "a bool byte of 7 was accepted";
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find("member 'flags.npy': a b1 (bool) element"), std::string::npos)
        << error.what();
  }
}

TEST(NpzArchive, LoadsStoredMembersMappedAndDeflatedOnesInflated) {
  for (const bool deflate : {false, true}) {
    const TempArchive file(build_zip(xy_members(deflate)).bytes);
    const npz::Archive archive(file.path);
    const resident::npy::Array y = archive.load("y");
    EXPECT_EQ(y.mapped(), !deflate);  // one-byte elements are aligned wherever they lie
    EXPECT_EQ(
        std::vector<std::uint8_t>(y.as<std::uint8_t>().data(), y.as<std::uint8_t>().data() + rows),
        labels(rows));
    const resident::npy::Array x = archive.load("x");
    EXPECT_EQ(std::vector<float>(x.as<float>().data(), x.as<float>().data() + rows * features),
              iota_floats(rows * features));
  }
}

TEST(NpzArchive, ReadsZip64Records) {
  auto members = xy_members(false);
  for (ZipMember& member : members) member.zip64 = true;
  const TempArchive file(build_zip(members, /*zip64_end=*/true).bytes);
  const npz::Archive archive(file.path);
  EXPECT_EQ(archive.load("y").as<std::uint8_t>().data()[13], 3);
}

TEST(NpzSave, RoundTripsStoredAndDeflated) {
  const std::vector<float> x = iota_floats(rows * features);
  const std::vector<std::uint8_t> y = labels(rows);
  const std::int64_t scalar = -5;
  for (const auto compression : {npz::Compression::stored, npz::Compression::deflated}) {
    const std::string path = resident::testing::scratch("save.npz");
    npz::save(path,
              {{"x", resident::HostTensor<const float>(x.data(), {rows, features})},
               {"y", resident::npy::DType::u1, y.data(), Shape{rows}},
               {"scalar", resident::npy::DType::i8, &scalar, Shape{}}},
              compression);
    const npz::Archive archive(path);
    EXPECT_EQ(archive.member("x").compressed, compression == npz::Compression::deflated);
    EXPECT_EQ(archive.load("x").as<float>().data()[17], x[17]);
    EXPECT_EQ(archive.load("scalar").shape().rank(), 0u);
    archive.verify_crc("x");
    std::remove(path.c_str());
  }
  EXPECT_THROW(npz::save(resident::testing::scratch("bad.npz"),
                         {{"../x", resident::npy::DType::u1, y.data(), Shape{rows}}}),
               resident::InvalidArgument);
}

// A name a ZIP record cannot hold (16-bit length) is refused before anything is written; the
// longest it can hold round-trips.
TEST(NpzSave, AKeyLongerThanAZipNameCanHoldIsRefusedAndTheLongestRoundTrips) {
  const std::uint8_t value = 7;
  const std::string path = resident::testing::scratch("long_key.npz");
  std::remove(path.c_str());
  const std::string too_long(65535 - 4 + 1, 'k');  // "<key>.npy" of 65536 bytes
  try {
    npz::save(path, {{too_long, resident::npy::DType::u1, &value, Shape{1}}});
    ADD_FAILURE() << "a 65536-byte member name was written";
  } catch (const resident::InvalidArgument& error) {
    EXPECT_NE(std::string(error.what()).find("65536 bytes"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("at most 65535"), std::string::npos) << error.what();
  }
  EXPECT_NE(::access(path.c_str(), F_OK), 0) << "nothing is written for a refused key";
  const std::string longest(65535 - 4, 'k');
  npz::save(path, {{longest, resident::npy::DType::u1, &value, Shape{1}}});
  EXPECT_EQ(npz::Archive(path).load(longest).as<std::uint8_t>().data()[0], value);
  std::remove(path.c_str());
}

// numpy.savez (Python's zipfile) flags names that are not ASCII as UTF-8 (bit 11), without
// which readers decode them as CP437 ("café" reads as "caf├⌐"); ASCII names carry no flag.
TEST(NpzSave, NamesThatAreNotAsciiCarryTheUtf8Flag) {
  const std::uint8_t value = 3;
  const std::string path = resident::testing::scratch("utf8.npz");
  for (const std::string& key : {std::string("caf\xc3\xa9"), std::string("cafe")}) {
    SCOPED_TRACE(key);
    npz::save(path, {{key, resident::npy::DType::u1, &value, Shape{1}}});
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto u16 = [&bytes](std::size_t at) {
      return static_cast<unsigned>(static_cast<unsigned char>(bytes.at(at)) |
                                   (static_cast<unsigned char>(bytes.at(at + 1)) << 8));
    };
    const std::size_t central = bytes.find("PK\x01\x02");
    ASSERT_NE(central, std::string::npos);
    const unsigned expected = key == "cafe" ? 0u : 0x0800u;
    EXPECT_EQ(u16(6), expected) << "the local header's flags";
    EXPECT_EQ(u16(central + 8), expected) << "the central directory's flags";
    EXPECT_EQ(npz::Archive(path).load(key).as<std::uint8_t>().data()[0], value);
  }
  std::remove(path.c_str());
}

// Null data for a non-empty array is the caller's mistake, refused as such before anything is
// written (it was an Error saying "Bad address", or zlib's failure when deflated); an empty
// array needs no data.
TEST(NpzSave, NullDataForANonEmptyArrayIsAnInvalidArgument) {
  const std::string path = resident::testing::scratch("null.npz");
  std::remove(path.c_str());
  for (const auto compression : {npz::Compression::stored, npz::Compression::deflated}) {
    try {
      npz::save(path, {{"x", resident::npy::DType::f4, nullptr, Shape{3}}}, compression);
      ADD_FAILURE() << "null data was saved";
    } catch (const resident::InvalidArgument& error) {
      EXPECT_NE(std::string(error.what()).find("key 'x'"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find("null"), std::string::npos) << error.what();
    }
    EXPECT_NE(::access(path.c_str(), F_OK), 0);
  }
  EXPECT_THROW(resident::npy::save(path, resident::npy::DType::f4, nullptr, Shape{3}),
               resident::InvalidArgument);
  EXPECT_NE(::access(path.c_str(), F_OK), 0);
  npz::save(path, {{"empty", resident::npy::DType::f4, nullptr, Shape{0, 4}}});
  EXPECT_EQ(npz::Archive(path).load("empty").shape(), (Shape{0, 4}));
  std::remove(path.c_str());
}

// ----- Malformed archives: each refused with a FormatError and its reason ------------------

struct Malformed {
  std::string name;
  std::function<std::string()> bytes;
  std::string reason;    // a substring of FormatError::reason()
  bool on_load = false;  // may be refused when the members are loaded (else: when opened)
  bool verify_crc = false;
};

std::string valid(bool deflate = false) { return build_zip(xy_members(deflate)).bytes; }

/// The archive of `members` with `edit` applied to its bytes and layout.
std::string edited(const std::vector<ZipMember>& members,
                   const std::function<void(resident::testing::ZipBytes&)>& edit,
                   bool zip64_end = false) {
  resident::testing::ZipBytes zip = build_zip(members, zip64_end);
  edit(zip);
  return zip.bytes;
}

std::vector<ZipMember> one(ZipMember member) { return {std::move(member)}; }

ZipMember y_member(bool deflate = false) { return xy_members(deflate)[1]; }

const std::vector<Malformed>& malformed_cases() {
  static const std::vector<Malformed> cases = {
      {"Empty", [] { return std::string(); }, "the file is empty"},
      {"TooShort", [] { return std::string("PK\x05\x06", 4); }, "too short to be a ZIP archive"},
      {"NotAZip", [] { return npy_image(labels(40), Shape{40}); }, "no end of central directory"},
      {"TruncatedArchive", [] { return valid().substr(0, valid().size() - 3); },
       "no end of central directory"},
      {"CommentPastTheEnd",
       [] {
         return edited(xy_members(false), [](auto& z) { patch(z.bytes, z.end_offset + 20, 9, 2); });
       },
       "no end of central directory"},
      {"SpannedDisks",
       [] {
         return edited(xy_members(false), [](auto& z) { patch(z.bytes, z.end_offset + 4, 1, 2); });
       },
       "spans several disks"},
      {"EntryCountsDisagree",
       [] {
         return edited(xy_members(false), [](auto& z) { patch(z.bytes, z.end_offset + 8, 1, 2); });
       },
       "entry counts disagree"},
      {"TruncatedDirectory",
       [] {
         return edited(xy_members(false), [](auto& z) {
           patch(z.bytes, z.end_offset + 12, z.end_offset - z.directory_offset + 40, 4);
         });
       },
       "central directory is truncated or misplaced"},
      {"DirectoryPastTheEnd",
       [] {
         return edited(xy_members(false),
                       [](auto& z) { patch(z.bytes, z.end_offset + 16, 1u << 30, 4); });
       },
       "central directory is truncated or misplaced"},
      {"MoreEntriesCountedThanHeld",
       [] {
         return edited(xy_members(false), [](auto& z) {
           patch(z.bytes, z.end_offset + 8, 1, 2);
           patch(z.bytes, z.end_offset + 10, 1, 2);
         });
       },
       "holds more entries than the 1"},
      {"CentralSignature",
       [] {
         return edited(xy_members(false),
                       [](auto& z) { patch(z.bytes, z.central_offsets[1], 0x12345678, 4); });
       },
       "lacks its signature PK\\1\\2"},
      {"LocalSignature",
       [] {
         return edited(xy_members(false),
                       [](auto& z) { patch(z.bytes, z.local_offsets[1], 0x12345678, 4); });
       },
       "member 'y.npy': its local header lacks its signature"},
      {"LocalNameDiffers",
       [] {
         return edited(xy_members(false), [](auto& z) { z.bytes[z.local_offsets[1] + 30] = 'z'; });
       },
       "the local header names it 'z.npy'"},
      {"Encrypted",
       [] {
         ZipMember member = y_member();
         member.flags = 1;
         return build_zip(one(member)).bytes;
       },
       "member 'y.npy': it is encrypted"},
      {"Bzip2",
       [] {
         ZipMember member = y_member();
         member.method = 12;
         return build_zip(one(member)).bytes;
       },
       "compression method 12 (bzip2) is not supported"},
      {"MethodsDisagree",
       [] {
         return edited(one(y_member(true)),
                       [](auto& z) { patch(z.bytes, z.local_offsets[0] + 8, 0, 2); });
       },
       "the local header says compression method 0"},
      {"LocalSizesDisagree",
       [] {
         return edited(one(y_member()),
                       [](auto& z) { patch(z.bytes, z.local_offsets[0] + 22, 3, 4); });
       },
       "disagree on its CRC or sizes"},
      {"Overlapping",
       [] {
         // Two entries of the same bytes: y's entry points at x's local header.
         const std::string data = y_member().data;
         return edited({{"x.npy", data}, {"y.npy", data}}, [](auto& z) {
           z.bytes.replace(z.central_offsets[1] + 42, 4, std::string(4, '\0'));
           z.bytes.replace(z.central_offsets[1] + 46, 5, "x.npy");
         });
       },
       "it overlaps member 'x.npy'"},
      {"DuplicateNames",
       [] {
         ZipMember member = y_member();
         return build_zip({member, member}).bytes;
       },
       "two members have this name"},
      {"OverlappingData",
       [] {
         return edited(xy_members(false), [](auto& z) {
           // x's data claims to run into y's local header.
           const std::uint64_t grown = xy_members(false)[0].data.size() + 10;
           patch(z.bytes, z.local_offsets[0] + 18, grown, 4);
           patch(z.bytes, z.local_offsets[0] + 22, grown, 4);
           patch(z.bytes, z.central_offsets[0] + 20, grown, 4);
           patch(z.bytes, z.central_offsets[0] + 24, grown, 4);
         });
       },
       "it overlaps member 'x.npy'"},
      {"DataPastTheDirectory",
       [] {
         return edited(one(y_member()), [](auto& z) {
           for (std::size_t at : {z.local_offsets[0] + 18, z.central_offsets[0] + 20})
             patch(z.bytes, at, 1u << 20, 4);
           for (std::size_t at : {z.local_offsets[0] + 22, z.central_offsets[0] + 24})
             patch(z.bytes, at, 1u << 20, 4);
         });
       },
       "run past the start of the central directory"},
      {"StoredSizesDiffer",
       [] {
         ZipMember member = y_member();
         member.uncompressed_size = member.data.size() + 1;
         return build_zip(one(member)).bytes;
       },
       "it is stored, yet its compressed size"},
      {"NotANumpyName",
       [] {
         ZipMember member = y_member();
         member.name = "readme.txt";
         return build_zip(one(member)).bytes;
       },
       "member 'readme.txt': its name is not <key>.npy"},
      {"PathTraversal",
       [] {
         ZipMember member = y_member();
         member.name = "../y.npy";
         return build_zip(one(member)).bytes;
       },
       "'..' path component"},
      {"MalformedNpy",
       [] {
         ZipMember member = y_member();
         member.data[1] = 'X';
         return build_zip(one(member)).bytes;
       },
       "member 'y.npy': not a .npy file"},
      {"MalformedDeflatedNpy",
       [] {
         ZipMember member = y_member(true);
         member.data.replace(member.data.find("shape"), 5, "shope");
         return build_zip(one(member)).bytes;
       },
       "of its inflated .npy: unexpected key 'shope'"},
      {"ShapeDisagreesWithSize",
       [] {
         ZipMember member = y_member(true);
         member.data.resize(member.data.size() - 5);
         return build_zip(one(member)).bytes;
       },
       "the data is shorter than the shape requires"},
      {"ZipBombDeclared",
       [] {
         // 1 TiB declared from a few hundred bytes: more than any host has, and more than
         // deflate can produce from them.
         ZipMember member = y_member(true);
         member.uncompressed_size = std::uint64_t{1} << 40;
         member.zip64 = true;
         return build_zip(one(member)).bytes;
       },
       "more than deflate can ever produce"},
      {"Zip64ExtraMissing",
       [] {
         return edited(one(y_member()),
                       [](auto& z) { patch(z.bytes, z.central_offsets[0] + 24, 0xffffffff, 4); });
       },
       "no ZIP64 extra field"},
      {"Zip64LocatorAstray",
       [] {
         return edited(
             one(y_member()), [](auto& z) { patch(z.bytes, z.end_offset - 12, 3, 8); }, true);
       },
       "holds no ZIP64 end record"},
      {"CorruptDeflate",
       [] {
         ZipMember member = y_member(true);
         member.stored_bytes = std::string(40, '\xff');
         return build_zip(one(member)).bytes;
       },
       "its deflate data is corrupt"},
      {"TruncatedDeflate",
       [] {
         ZipMember member = y_member(true);
         member.stored_bytes = resident::testing::raw_deflate(member.data).substr(0, 30);
         return build_zip(one(member)).bytes;
       },
       "end before its deflate stream does", true},
      {"InflatesPastItsSize",
       [] {
         ZipMember member = y_member(true);
         member.stored_bytes = resident::testing::raw_deflate(member.data + "extra");
         return build_zip(one(member)).bytes;
       },
       "inflates past the", true},
      {"TrailingCompressedBytes",
       [] {
         ZipMember member = y_member(true);
         member.stored_bytes = resident::testing::raw_deflate(member.data) + "junk";
         return build_zip(one(member)).bytes;
       },
       "compressed bytes follow the end of its deflate stream", true},
      {"DeflatedCrcMismatch",
       [] {
         ZipMember member = y_member(true);
         member.crc = 0x1234;
         return build_zip(one(member)).bytes;
       },
       "CRC-32 mismatch", true},
      {"StoredCrcMismatch",
       [] {
         ZipMember member = y_member();
         member.crc = 0x1234;
         return build_zip(one(member)).bytes;
       },
       "CRC-32 mismatch", true, true},
  };
  return cases;
}

class NpzMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(NpzMalformed, RefusedWithItsReason) {
  const Malformed& malformed = GetParam();
  const TempArchive file(malformed.bytes(), malformed.name);
  npz::ArchiveOptions options;
  options.verify_stored_crc = malformed.verify_crc;
  try {
    const npz::Archive archive(file.path, options);
    ASSERT_TRUE(malformed.on_load) << "opened an archive that should have been refused";
    for (const npz::Member& member : archive.members()) (void)archive.load(member.key);
    FAIL() << "loaded every member of an archive that should have been refused";
  } catch (const FormatError& error) {
    EXPECT_EQ(error.path(), file.path);
    EXPECT_NE(error.reason().find(malformed.reason), std::string::npos) << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Archives, NpzMalformed, ::testing::ValuesIn(malformed_cases()),
                         [](const ::testing::TestParamInfo<Malformed>& info) {
                           return info.param.name;
                         });

TEST(NpzMalformed, StoredCrcUncheckedUnlessAsked) {
  ZipMember member = y_member();
  member.crc = 0x1234;
  const TempArchive file(build_zip(one(member)).bytes);
  EXPECT_NO_THROW((void)npz::Archive(file.path).load("y"));
}

TEST(NpzMalformed, DeflatedMemberOverTheBudgetRefusedBeforeInflating) {
  // 4 MiB of zeros deflate to a few KiB; the space's budget is 1 MiB: refused by the capacity
  // check, from the header's figures, with nothing inflated.
  const std::vector<std::uint8_t> zeros(std::size_t{4} << 20);
  const TempArchive file(build_zip({{"x.npy", npy_image(zeros, Shape{zeros.size()}), true}}).bytes);
  resident::DatasetOptions options;
  options.batch_size = 64;
  EXPECT_THROW((void)(resident::load_dataset<HostSpace, std::uint8_t>(
                   HostSpace::with_budget(std::size_t{1} << 20), options, file.path, {"x"})),
               resident::CapacityError);
}

// ----- Datasets from archives, over every space ---------------------------------------------

template <class Space>
class NpzDataset : public resident::testing::OverSpaces<Space> {};
TYPED_TEST_SUITE(NpzDataset, resident::testing::SpaceTypes, resident::testing::SpaceName);

TYPED_TEST(NpzDataset, LoadsStoredAndDeflatedMembersBlockByBlock) {
  for (const bool deflate : {false, true}) {
    const TempArchive file(build_zip(xy_members(deflate)).bytes);
    resident::DatasetOptions options;
    options.batch_size = 8;
    options.remainder = resident::Remainder::pad;
    options.upload_block_bytes =
        100;  // many blocks: inflated piece by piece into the staging memory
    auto dataset = resident::load_dataset<TypeParam, float, std::uint8_t>(this->space_, options,
                                                                          file.path, {"x", "y"});
    const auto x =
        resident::testing::read_back(this->space_, dataset.stream(), dataset.template field<0>());
    EXPECT_EQ(x, iota_floats(rows * features)) << (deflate ? "deflated" : "stored");
    const auto y =
        resident::testing::read_back(this->space_, dataset.stream(), dataset.template field<1>());
    EXPECT_EQ(y, labels(rows));
    // The padded last batch starts again from the first rows (the inflater restarts).
    const auto last = dataset.batch(dataset.num_batches() - 1);
    const auto padded =
        resident::testing::read_back(this->space_, dataset.stream(), std::get<1>(last));
    EXPECT_EQ(padded.back(), labels(rows)[std::size_t{8} * 5 - rows - 1]);
  }
}

TYPED_TEST(NpzDataset, PartitionedRankInflatesItsPartAndChecksTheRest) {
  ZipMember member = y_member(true);
  member.crc = 7;
  const TempArchive file(build_zip(one(member)).bytes);
  resident::DatasetOptions options;
  options.batch_size = 4;
  options.shard = {0, 2, 0};
  EXPECT_THROW((void)(resident::load_dataset<TypeParam, std::uint8_t>(this->space_, options,
                                                                      file.path, {"y"})),
               FormatError);
}

TYPED_TEST(NpzDataset, StreamsStoredMembersAndInflatesDeflatedOnesOnce) {
  const TempArchive stored(build_zip(xy_members(false)).bytes, "stored");
  resident::DatasetOptions options;
  options.batch_size = 4;
  options.streaming.chunk_batches = 2;
  auto streamed = resident::load_streaming_dataset<TypeParam, float, std::uint8_t>(
      this->space_, options, stored.path, {"x", "y"});
  const auto batch = streamed.batch(3);
  EXPECT_EQ(resident::testing::read_back(this->space_, streamed.stream(), std::get<1>(batch)),
            (std::vector<std::uint8_t>{2, 3, 4, 5}));

  // Deflated members are inflated once, in the background, into host memory the dataset owns,
  // and stream from it in either order.
  const TempArchive deflated(build_zip(xy_members(true)).bytes, "deflated");
  auto inflated = resident::load_streaming_dataset<TypeParam, float, std::uint8_t>(
      this->space_, options, deflated.path, {"x", "y"});
  EXPECT_EQ(inflated.order(), resident::StreamOrder::whole_epoch);
  EXPECT_GT(inflated.host_bytes(), 0u);
  EXPECT_EQ(
      resident::testing::read_back(this->space_, inflated.stream(), std::get<1>(inflated.batch(3))),
      (std::vector<std::uint8_t>{2, 3, 4, 5}));
  options.streaming.order = resident::StreamOrder::window;
  auto windows = resident::load_streaming_dataset<TypeParam, float, std::uint8_t>(
      this->space_, options, deflated.path, {"x", "y"});
  EXPECT_EQ(windows.order(), resident::StreamOrder::window);
  EXPECT_EQ(
      resident::testing::read_back(this->space_, windows.stream(), std::get<1>(windows.batch(3))),
      (std::vector<std::uint8_t>{2, 3, 4, 5}));
}

// A stored member streamed in whole-epoch order is read in place from the archive's mapping (where
// its data is aligned for its type), on every space: an archive cut in place, rewritten or
// replaced meanwhile is refused at the next batch that reads it (in order from the slots, or
// shuffled), and nothing it read is served.
TYPED_TEST(NpzDataset, AStoredMemberReadInPlaceIsRefusedWhenItsArchiveChanges) {
  const std::string bytes = build_zip(xy_members(false)).bytes;
  const auto cut = [](const std::string& path) { ASSERT_EQ(::truncate(path.c_str(), 100), 0); };
  const auto rewritten = [&bytes](const std::string& path) {
    std::string other = bytes;
    std::reverse(other.begin() + 200, other.end() - 400);  // inside the members' data
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::pwrite(fd, other.data(), other.size(), 0), static_cast<::ssize_t>(other.size()));
    const ::timespec later[2] = {{0, UTIME_OMIT}, {::time(nullptr) + 10, 0}};
    ASSERT_EQ(::futimens(fd, later), 0);
    ::close(fd);
  };
  const auto replaced = [&bytes](const std::string& path) {
    resident::testing::write_file(path, bytes);  // a rename over it
  };
  struct Change {
    std::function<void(const std::string&)> apply;
    const char* reason;
  };
  const Change changes[] = {{cut, "size changed"},
                            {rewritten, "it was modified since it was opened"},
                            {replaced, "it was removed or replaced"}};
  for (const Change& change : changes) {
    for (const resident::Shuffle shuffle : {resident::Shuffle::none, resident::Shuffle::samples}) {
      SCOPED_TRACE(std::string(change.reason) +
                   (shuffle == resident::Shuffle::none ? ", in order" : ", shuffled"));
      const TempArchive file(bytes, "changed");
      resident::DatasetOptions options;
      options.batch_size = 4;
      options.streaming.chunk_batches = 1;
      options.streaming.chunk_slots = 2;
      options.streaming.prefetch_chunks = 1;
      options.streaming.order = resident::StreamOrder::whole_epoch;
      auto streamed = resident::load_streaming_dataset<TypeParam, float, std::uint8_t>(
          this->space_, options, file.path, {"x", "y"});
      // y's bytes are read in place; x's floats start at an odd byte of the archive (as
      // numpy's zipfile leaves them), so they are read once instead.
      EXPECT_EQ(streamed.mapped_bytes(), rows);
      EXPECT_EQ(streamed.host_bytes(), rows * features * 4);
      auto epoch = streamed.epoch({1, 0, shuffle});
      (void)epoch.batch(0);
      change.apply(file.path);
      try {
        for (std::size_t k = 1; k < epoch.size(); ++k) {
          const auto [x, y] = epoch.batch(k);
          for (const std::uint8_t label :
               resident::testing::read_back(this->space_, streamed.stream(), y))
            ASSERT_LT(label, rows);  // the archive's labels, never its changed bytes
          (void)x;
        }
        ADD_FAILURE() << "a changed archive streamed on";
      } catch (const FormatError& error) {
        EXPECT_NE(error.reason().find(change.reason), std::string::npos) << error.what();
      }
    }
  }
}

// A deflated member whose CRC-32 is wrong inflates to its end before the check finds it: rows
// served before then are the stream's as it is, and from then on every batch, in every order and
// epoch, throws the FormatError.
TYPED_TEST(NpzDataset, AWrongCrcFoundWhileInflatingRefusesEveryLaterBatch) {
  auto members = xy_members(true);
  members[1].crc = 12345;  // y's, in both headers
  const TempArchive file(build_zip(members).bytes, "wrong_crc");
  for (const resident::StreamOrder order :
       {resident::StreamOrder::whole_epoch, resident::StreamOrder::window}) {
    SCOPED_TRACE(resident::stream_order_name(order));
    resident::DatasetOptions options;
    options.batch_size = 4;
    options.streaming.chunk_batches = 1;
    options.streaming.order = order;
    auto streamed = resident::load_streaming_dataset<TypeParam, float, std::uint8_t>(
        this->space_, options, file.path, {"x", "y"});
    const auto refused = [&](resident::Shuffle shuffle) {
      try {
        auto epoch = streamed.epoch({1, 0, shuffle});
        for (std::size_t k = 0; k < epoch.size(); ++k) (void)epoch.batch(k);
        return false;
      } catch (const FormatError& error) {
        EXPECT_NE(error.reason().find("CRC-32"), std::string::npos) << error.what();
        return true;
      }
    };
    // The first epoch to reach the last rows waits for the end, where the check is.
    EXPECT_TRUE(refused(resident::Shuffle::none));
    for (const resident::Shuffle shuffle :
         {resident::Shuffle::none, resident::Shuffle::batches, resident::Shuffle::samples})
      EXPECT_TRUE(refused(shuffle)) << "an epoch after the refusal served every batch";
  }
}

TEST(NpzDataset, PlansFromHeadersAndMakesAStreamedDatasetOverBudget) {
  constexpr std::size_t many = 2000;  // 40 KB of features, over a 16 KiB budget
  const TempArchive file(
      build_zip({{"x.npy", npy_image(iota_floats(many * features), Shape{many, features})},
                 {"y.npy", npy_image(labels(many), Shape{many})}})
          .bytes);
  resident::DatasetOptions options;
  options.batch_size = 4;
  options.streaming.chunk_batches = 1;
  const HostSpace small = HostSpace::with_budget(std::size_t{16} << 10);
  const resident::Plan plan =
      resident::plan<HostSpace, float, std::uint8_t>(small, options, file.path, {"x", "y"});
  EXPECT_FALSE(plan.fits);
  auto dataset =
      resident::make_dataset<HostSpace, float, std::uint8_t>(small, options, file.path, {"x", "y"});
  EXPECT_TRUE(dataset.is_streaming());
  EXPECT_EQ(std::get<1>(dataset.batch(1)).data()[0], 4);
  try {
    (void)resident::load_dataset<HostSpace, double, std::uint8_t>(small, options, file.path,
                                                                  {"x", "y"});
    FAIL() << "a float32 member loaded as double";
  } catch (const FormatError& error) {
    EXPECT_NE(error.reason().find("member 'x.npy' holds f4 elements but field 0 is f8"),
              std::string::npos);
  }
}

}  // namespace
