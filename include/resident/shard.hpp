// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Shard`, `Sharding` and `shard_from_env()`: which part of every epoch this process
/// (one rank of a data-parallel job) serves.

#include <cerrno>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>

#include "resident/error.hpp"

namespace resident {

/// @brief This process's place in a data-parallel job: rank `rank` of `world_size`, the
/// `local_rank`-th on its node. The default is the single rank of a one-process job.
/// `int`, as MPI and PyTorch count ranks, so `Shard{rank, size, local}` takes their values.
struct Shard {
  int rank = 0;        ///< This process, in `[0, world_size)`.
  int world_size = 1;  ///< Processes in the job; at least 1.
  int local_rank = 0;  ///< This process among those on its node; picks the CUDA device.
};

/// @brief Shards are equal when all three numbers are.
constexpr bool operator==(const Shard& a, const Shard& b) noexcept {
  return a.rank == b.rank && a.world_size == b.world_size && a.local_rank == b.local_rank;
}
/// @brief Shards differ when any of the three numbers does.
constexpr bool operator!=(const Shard& a, const Shard& b) noexcept { return !(a == b); }

/// @brief How a sharded dataset divides the rows among the ranks.
enum class Sharding {
  /// Each rank uploads only its contiguous part of the rows (parts differ by at most one
  /// row), so the memory per rank is about `n / world_size`; shuffles permute within the
  /// part. The default.
  partitioned,
  /// Each rank holds every row; each epoch one global order (the same on every rank) is dealt
  /// out batch by batch: global batch `j` of `world_size * batch_size` rows is rank 0's batch
  /// `j`, then rank 1's, and so on, so the ranks' batches are disjoint, cover the epoch, and
  /// step `j` of the job trains on exactly what one rank would with the global batch size
  /// (PyTorch's `DistributedSampler`, with the epoch an explicit argument).
  replicated,
};

/// @brief "partitioned" or "replicated", for messages.
constexpr const char* sharding_name(Sharding sharding) noexcept {
  return sharding == Sharding::replicated ? "replicated" : "partitioned";
}

/// @brief Checks a shard: `world_size >= 1` and `rank` and `local_rank` in `[0, world_size)`.
/// @throws InvalidArgument naming the value and what it must be.
inline void validate(const Shard& shard) {
  const std::string what = "resident: Shard{rank " + std::to_string(shard.rank) + ", world_size " +
                           std::to_string(shard.world_size) + ", local_rank " +
                           std::to_string(shard.local_rank) + "} ";
  if (shard.world_size < 1)
    throw InvalidArgument(what + "has a world size below 1; a job has at least one rank");
  if (shard.rank < 0 || shard.rank >= shard.world_size)
    throw InvalidArgument(what + "has a rank outside [0, world_size); pass this process's rank");
  if (shard.local_rank < 0 || shard.local_rank >= shard.world_size)
    throw InvalidArgument(what +
                          "has a local rank outside [0, world_size); pass the rank on the node");
}

namespace detail {

/// Reads one environment variable: null when it is not set.
using EnvironmentLookup = std::function<const char*(const char*)>;

/// One launcher's variable names; `local` may be null when the launcher sets none.
struct LauncherVariables {
  const char* rank;
  const char* size;
  const char* local;
};

/// The launchers `shard_from_env` knows, in the order it tries them.
inline constexpr LauncherVariables launchers[] = {
    // NOLINT(modernize-avoid-c-arrays)
    {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMI_RANK", "PMI_SIZE", nullptr},
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
};

/// The value of `name`, which must be set and hold a whole number in `[minimum, INT_MAX]`.
inline int read_rank_variable(const EnvironmentLookup& lookup, const char* name,
                              const char* launcher_rank, int minimum) {
  const char* text = lookup(name);
  if (text == nullptr)
    throw Error(std::string("resident: ") + launcher_rank + " is set but " + name +
                " is not; a launcher that sets one sets both; export " + name + " or unset " +
                launcher_rank);
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  // strtoll also takes leading blanks and signs; a launcher writes plain digits.
  const bool numeric = (text[0] == '-' || (text[0] >= '0' && text[0] <= '9')) && end != text &&
                       *end == '\0' && errno == 0;
  if (!numeric || value < minimum || value > std::numeric_limits<int>::max())
    throw Error(std::string("resident: environment variable ") + name + "=\"" + text +
                "\" is not a valid " + (minimum == 0 ? "rank" : "world size") +
                "; expected a whole number of at least " + std::to_string(minimum) +
                "; fix the launcher's environment or unset " + name);
  return static_cast<int>(value);
}

/// The CUDA device of local rank `local_rank` among `devices` visible ones (see
/// `CudaSpace::for_shard`).
inline int device_for_local_rank(int local_rank, int devices) {
  if (devices <= 0)
    throw InvalidArgument("resident: local rank " + std::to_string(local_rank) +
                          " needs a CUDA device, but this process sees none (no GPU or driver, "
                          "or CUDA_VISIBLE_DEVICES hides them all); use resident::HostSpace "
                          "here, or run where a GPU is visible");
  if (local_rank < 0)
    throw InvalidArgument("resident: local rank " + std::to_string(local_rank) +
                          " is negative; pass the rank of this process on its node");
  if (devices == 1) return 0;
  if (local_rank >= devices)
    throw InvalidArgument("resident: local rank " + std::to_string(local_rank) +
                          " has no CUDA device of its own: this process sees " +
                          std::to_string(devices) + " devices (0 to " +
                          std::to_string(devices - 1) +
                          "); launch at most one rank per GPU on each node, or give each rank "
                          "its device with CUDA_VISIBLE_DEVICES");
  return local_rank;
}

/// `shard_from_env` over any environment (tests pass a map).
inline Shard shard_from(const EnvironmentLookup& lookup) {
  for (const LauncherVariables& launcher : launchers) {
    if (lookup(launcher.rank) == nullptr && lookup(launcher.size) == nullptr) continue;
    const char* present = lookup(launcher.rank) != nullptr ? launcher.rank : launcher.size;
    Shard shard;
    shard.rank = read_rank_variable(lookup, launcher.rank, present, 0);
    shard.world_size = read_rank_variable(lookup, launcher.size, present, 1);
    shard.local_rank = launcher.local != nullptr && lookup(launcher.local) != nullptr
                           ? read_rank_variable(lookup, launcher.local, present, 0)
                           : shard.rank;
    if (shard.rank >= shard.world_size)
      throw Error(std::string("resident: ") + launcher.rank + "=" + std::to_string(shard.rank) +
                  " is not below " + launcher.size + "=" + std::to_string(shard.world_size) +
                  "; a rank counts from 0 to the world size minus 1; fix the launcher's "
                  "environment");
    if (shard.local_rank >= shard.world_size)
      throw Error(std::string("resident: ") + launcher.local + "=" +
                  std::to_string(shard.local_rank) + " is not below " + launcher.size + "=" +
                  std::to_string(shard.world_size) +
                  "; a local rank counts the ranks on one node; fix the launcher's environment");
    return shard;
  }
  return Shard{};
}

}  // namespace detail

/// @brief This process's shard, as its launcher announced it in the environment. Tries, in
/// order: `RANK`/`WORLD_SIZE`/`LOCAL_RANK` (torchrun and most launchers),
/// `OMPI_COMM_WORLD_RANK`/`_SIZE`/`_LOCAL_RANK` (Open MPI), `PMI_RANK`/`PMI_SIZE` (MPICH,
/// Intel MPI), `SLURM_PROCID`/`SLURM_NTASKS`/`SLURM_LOCALID` (srun); the first launcher with
/// its rank or size set wins. Without a local rank (PMI) the rank is used, which is right on
/// one node. Nothing set: the single rank `Shard{}`.
/// @throws Error naming the variable when a rank or size is missing, not a whole number,
/// negative, or a rank is not below the world size.
inline Shard shard_from_env() {
  return detail::shard_from([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace resident
