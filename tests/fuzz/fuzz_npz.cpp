// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as an .npz archive. resident::npz::Archive must open it and load
// every member (checking every CRC), or throw FormatError (or CapacityError for a member larger
// than the host); a crash, a hang, a leak or undefined behaviour (ASan, UBSan) is a finding.
// Built and run by scripts/fuzz.sh.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "resident/npz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The reader reads files (and maps them): give it one in memory.
  static const int fd = memfd_create("resident-fuzz-npz", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0) return 0;
  if (size != 0 && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  try {
    resident::npz::ArchiveOptions options;
    options.verify_stored_crc = true;
    const resident::npz::Archive archive("/proc/self/fd/" + std::to_string(fd), options);
    for (const resident::npz::Member& member : archive.members()) {
      const resident::npy::Array array = archive.load(member.key);
      volatile std::size_t sink = 0;
      for (std::size_t i = 0; i < array.bytes(); ++i)
        sink += std::to_integer<unsigned>(array.data()[i]);
    }
  } catch (const resident::FormatError&) {
  } catch (const resident::CapacityError&) {
  }
  return 0;
}
