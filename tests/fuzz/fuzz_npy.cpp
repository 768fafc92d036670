// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// libFuzzer target: any bytes as a .npy file. resident::npy::load must return an array or throw
// FormatError; a crash, a hang, a leak or undefined behaviour (ASan, UBSan) is a finding.
// Built and run by scripts/fuzz.sh.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "resident/npy.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The loader reads files (and maps them): give it one in memory.
  static const int fd = memfd_create("resident-fuzz", 0);
  if (fd < 0 || ftruncate(fd, 0) != 0) return 0;
  if (size != 0 && pwrite(fd, data, size, 0) != static_cast<ssize_t>(size)) return 0;
  try {
    const resident::npy::Array array = resident::npy::load("/proc/self/fd/" + std::to_string(fd));
    volatile std::size_t sink = 0;
    for (std::size_t i = 0; i < array.bytes(); ++i)
      sink += std::to_integer<unsigned>(array.data()[i]);
  } catch (const resident::FormatError&) {
  }
  return 0;
}
