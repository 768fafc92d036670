// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
// npz_resave IN OUT [stored|deflated]: loads every member of the archive IN with resident::npz,
// checks each one's CRC-32, and saves what it read to OUT (stored unless told), so that a NumPy
// script can check both directions (tests/npz_interop.py).
#include <cstdio>
#include <resident/npz.hpp>
#include <string>
#include <vector>

namespace npz = resident::npz;

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: npz_resave IN OUT [stored|deflated]\n");
    return 2;
  }
  const std::string compression = argc == 4 ? argv[3] : "stored";
  if (compression != "stored" && compression != "deflated") {
    std::fprintf(stderr, "npz_resave: compression is 'stored' or 'deflated', not '%s'\n",
                 compression.c_str());
    return 2;
  }
  try {
    npz::ArchiveOptions options;
    options.verify_stored_crc = true;
    const npz::Archive archive(argv[1], options);
    std::vector<resident::npy::Array> arrays;
    std::vector<npz::Entry> entries;
    arrays.reserve(archive.members().size());
    for (const npz::Member& member : archive.members()) {
      arrays.push_back(archive.load(member.key));
      entries.emplace_back(member.key, arrays.back());
    }
    npz::save(argv[2], entries,
              compression == "deflated" ? npz::Compression::deflated : npz::Compression::stored);
  } catch (const resident::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
  return 0;
}
