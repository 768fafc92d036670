// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Library version, kept equal to the CMake project version.

/// @brief Major version: the `X` of `X.Y.Z`.
#define RESIDENT_VERSION_MAJOR 0
/// @brief Minor version: the `Y` of `X.Y.Z`.
#define RESIDENT_VERSION_MINOR 1
/// @brief Patch version: the `Z` of `X.Y.Z`.
#define RESIDENT_VERSION_PATCH 0
