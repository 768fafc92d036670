// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Library version, kept equal to the CMake project version.

#define RESIDENT_VERSION_MAJOR 0
#define RESIDENT_VERSION_MINOR 1
#define RESIDENT_VERSION_PATCH 0
