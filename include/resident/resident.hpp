// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief Umbrella header: the whole public API of resident.

#include "resident/augment.hpp"
#include "resident/batch_view.hpp"
#include "resident/config.hpp"
#include "resident/convert.hpp"
#include "resident/dataset.hpp"
#include "resident/dataset_accessors.hpp"
#include "resident/dataset_options.hpp"
#include "resident/device_dataset.hpp"
#include "resident/epoch.hpp"
#include "resident/epoch_options.hpp"
#include "resident/error.hpp"
#include "resident/host_tensor.hpp"
#include "resident/image_layout.hpp"
#include "resident/load_dataset.hpp"
#include "resident/load_tokens.hpp"
#include "resident/memory_space.hpp"
#include "resident/mixture_order.hpp"
#include "resident/npy.hpp"
#include "resident/permutation.hpp"
#include "resident/plan.hpp"
#include "resident/progress.hpp"
#include "resident/shape.hpp"
#include "resident/shard.hpp"
#include "resident/space_traits.hpp"
#include "resident/statistics.hpp"
#include "resident/stream_ref.hpp"
#include "resident/streaming_dataset.hpp"
#include "resident/subset.hpp"
#include "resident/token_dataset.hpp"
#include "resident/token_options.hpp"
#include "resident/units.hpp"
#include "resident/version.hpp"
