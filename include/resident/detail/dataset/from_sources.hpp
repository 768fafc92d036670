// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <utility>

namespace resident::detail {

/// @brief The one way the file loaders make a dataset from prepared sources (an archive's
/// deflated members, a file's row sources, a token file's bytes): every dataset's constructor
/// that takes them is private, so that no public signature names a `detail` type, and each
/// dataset names this its friend.
struct FromSources {
  /// @brief `Dataset(args...)`, by its private constructor.
  template <class Dataset, class... Args>
  [[nodiscard]] static Dataset make(Args&&... args) {
    return Dataset(std::forward<Args>(args)...);
  }
};

}  // namespace resident::detail
