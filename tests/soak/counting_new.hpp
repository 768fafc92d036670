// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>

namespace resident::testing {

/// Bytes held through operator new right now (counting_new.cpp replaces it in the soak test).
std::size_t heap_bytes_in_use() noexcept;

}  // namespace resident::testing
