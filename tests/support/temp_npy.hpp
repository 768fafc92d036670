// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// Test support: a scratch .npy file, removed when the test ends, and crafted files written.

#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "resident/detail/io/file_io.hpp"
#include "resident/npy.hpp"

namespace resident::testing {

/// A path in the test's scratch folder for a file named `name` (the caller removes it).
inline std::string scratch(const std::string& name) {
  return ::testing::TempDir() + "resident_npy_" + name;
}

/// Makes `bytes` the whole content of the file at `path` (a crafted, possibly malformed file),
/// through the writer resident itself uses: replaced by a rename, never truncated in place.
inline void write_file(const std::string& path, const std::string& bytes) {
  resident::detail::replace_file(path, {{bytes.data(), bytes.size()}});
}

/// The temporaries a save of this process left in `folder`: none, after any save that returned
/// or threw.
inline std::vector<std::string> temporaries_left(const std::string& folder) {
  std::vector<std::string> names;
  const std::string prefix = resident::detail::temporary_prefix();
  if (DIR* dir = ::opendir(folder.c_str())) {
    while (const ::dirent* entry = ::readdir(dir))
      if (std::string(entry->d_name).rfind(prefix, 0) == 0) names.emplace_back(entry->d_name);
    ::closedir(dir);
  }
  return names;
}

/// A scratch .npy file holding `values` with `shape`, removed at the end of the test; the name
/// carries the process id, so that tests running in parallel processes never share one.
struct TempNpy {
  template <class T>
  TempNpy(const std::string& name, const std::vector<T>& values, const Shape& shape)
      : path(::testing::TempDir() + name + "_" + std::to_string(::getpid()) + ".npy") {
    npy::save(path, values.data(), shape);
  }
  ~TempNpy() { std::remove(path.c_str()); }
  TempNpy(const TempNpy&) = delete;
  TempNpy& operator=(const TempNpy&) = delete;
  std::string path;
};

}  // namespace resident::testing
