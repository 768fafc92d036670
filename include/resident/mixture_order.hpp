// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `MixtureOrder`: which source, and which of its rows, each position of a mixture's
/// epoch serves: exact shares in every period, a fresh permutation of a source for each of its
/// passes, computed per position as `Permutation` is, with no index array.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "resident/detail/apportion.hpp"
#include "resident/detail/dataset/row_order.hpp"
#include "resident/detail/expects.hpp"
#include "resident/permutation.hpp"

namespace resident {

/// @brief How much of one source a mixture's epoch serves: a `weight` (a share of the epoch,
/// relative to the other sources' weights), a `repeat` factor (that many times its rows, 2.5:
/// each row twice or three times), or a `count` of samples (below its rows: a different subset
/// each epoch, no row twice).
class MixtureShare {
 public:
  /// @brief What the figure is.
  enum class Kind : std::uint8_t { weight, repeat, count };

  /// @brief A share of the epoch relative to the other sources' weights (any scale).
  [[nodiscard]] static MixtureShare weight(double weight) noexcept {
    return {Kind::weight, weight};
  }
  /// @brief `times` the source's rows per epoch.
  [[nodiscard]] static MixtureShare repeat(double times) noexcept { return {Kind::repeat, times}; }
  /// @brief `samples` of the source per epoch.
  [[nodiscard]] static MixtureShare count(std::uint64_t samples) noexcept {
    return {Kind::count, static_cast<double>(samples), samples};
  }

  /// @brief Whether a weight, a repeat or a count.
  [[nodiscard]] Kind kind() const noexcept { return kind_; }
  /// @brief The weight or the repeat factor (a count as a `double`).
  [[nodiscard]] double value() const noexcept { return value_; }
  /// @brief The count (0 unless `kind() == Kind::count`).
  [[nodiscard]] std::uint64_t samples() const noexcept { return samples_; }

 private:
  MixtureShare(Kind kind, double value, std::uint64_t samples = 0) noexcept
      : kind_(kind), value_(value), samples_(samples) {}

  Kind kind_;
  double value_;
  std::uint64_t samples_;
};

/// @brief The shape of a mixture's epoch.
struct MixtureOptions {
  /// Samples per period (M): every period of M positions gives each source its
  /// largest-remainder share of M. 0: the epoch is one period.
  std::uint64_t period = 0;
  /// Samples per epoch where the sources have weights (0: the sum of their rows), rounded up
  /// to whole periods. Repeats and counts fix the epoch themselves and refuse it.
  std::uint64_t epoch_samples = 0;
};

/// @brief A position's sample: its source, and the row of that source.
struct MixtureSample {
  std::size_t source = 0;  ///< Which source, in the order the mixture was given them.
  std::uint64_t row = 0;   ///< Which row of that source.

  friend bool operator==(const MixtureSample& a, const MixtureSample& b) noexcept {
    return a.source == b.source && a.row == b.row;
  }
  friend bool operator!=(const MixtureSample& a, const MixtureSample& b) noexcept {
    return !(a == b);
  }
};

namespace detail {

/// @brief What a mixture's position depends on beyond its sources: the period, the epoch and
/// its key. Trivially copyable, for kernels.
struct MixtureKey {
  std::uint64_t sources = 0;
  std::uint64_t period = 0;
  std::uint64_t periods = 0;
  std::uint64_t epoch = 0;
  bool shuffled = false;
  Permutation slots;   ///< The epoch's keys of the periods' slots, tweaked by the period.
  Permutation passes;  ///< The epoch's keys of the sources' passes, tweaked by source and pass.
};

/// @brief The sample at `position` of the epoch `key` names, of the sources `table` describes:
/// `key.sources` words of their rows, then of their quotas, then of their first slots, each
/// read through `reach(pointer, count)` (a kernel's reach of the space's memory). The one
/// definition of a mixture's order, on host and device (see `MixtureOrder`).
template <class Reach>
[[nodiscard]] RESIDENT_HOST_DEVICE MixtureSample mixture_sample(const std::uint64_t* table,
                                                                const MixtureKey& key,
                                                                std::uint64_t position,
                                                                const Reach& reach) noexcept {
  const std::uint64_t index = position / key.period;  // of the period
  std::uint64_t slot = position % key.period;
  if (key.shuffled) slot = PermutationAccess::tweaked(key.slots, key.period, index, slot);
  const std::uint64_t* starts = table + 2 * key.sources;
  std::uint64_t low = 0, high = key.sources;  // the last source whose first slot is <= slot
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (*reach(starts + middle, 1) <= slot)
      low = middle;
    else
      high = middle;
  }
  const std::uint64_t held = *reach(table + low, 1);
  const std::uint64_t quota = *reach(table + key.sources + low, 1);
  const std::uint64_t occurrence = index * quota + (slot - *reach(starts + low, 1));
  const auto source = static_cast<std::size_t>(low);
  if (!key.shuffled) {
    const std::uint64_t served = key.periods * quota;  // in each epoch
    return {source, (mul_mod(key.epoch % held, served % held, held) + occurrence % held) % held};
  }
  // Pass `occurrence / held` of the source in this epoch.
  return {source, PermutationAccess::tweaked(key.passes, held, mix64(low + 1) ^ (occurrence / held),
                                             occurrence % held)};
}

}  // namespace detail

/// @brief The order of a mixture of sources of `rows[s]` rows each, in the shares given: an
/// epoch of `periods()` periods of `period()` positions, each period holding exactly `quota(s)`
/// samples of source `s` (the largest-remainder shares of the period by the sources' amounts:
/// a weight, a repeat factor times the rows, or a count), so that an epoch serves
/// `epoch_quota(s)` samples of it.
///
/// Position `p` of epoch `e` is period `p / period()`, slot `p % period()`: the slot goes through
/// the period's own permutation (keyed by the seed, `e` and the period) when the order is
/// shuffled, and the slot it lands on names the source (the first `quota(0)` slots are source
/// 0's, and so on) and the source's occurrence in the epoch. Occurrences are the source's
/// passes: under a shuffle each pass of `rows[s]` occurrences is a fresh permutation of its
/// rows (keyed by the seed, the source, `e` and the pass), so that no row comes twice in a pass
/// and a row comes `floor(r)` or `ceil(r)` times in an epoch of `r` passes; unshuffled, the
/// occurrences run through the rows in order, carried on from the epoch before (epoch `e`
/// starts at row `e * epoch_quota(s) mod rows[s]`), so that a source served less than its rows
/// serves other rows each epoch. Every figure is computed per position: nothing grows with the
/// rows or the epochs, and the same `(seed, epoch)` gives the same samples on every run and
/// platform (integer arithmetic only, after the shares).
/// @note Copyable; moved from, it is the order of no source (every figure 0, `at` throws).
/// Thread-safe for concurrent const use.
class MixtureOrder {
 public:
  /// @brief The order of no source (size 0).
  MixtureOrder() = default;

  /// @brief The order of sources of `rows[s]` rows taking `shares[s]`, shaped by `options`.
  /// @throws InvalidArgument, naming the source and the figure, for: no source, or a share per
  /// source missing; weights mixed with repeats or counts; a weight or repeat negative, not
  /// finite, or all zero; a source with no rows and a share; `epoch_samples` with repeats or
  /// counts; a period, a source's rows or an epoch past `Permutation::max_size`; a period that
  /// gives a source of a weight above 0 no sample, or that serves repeats and counts other
  /// samples an epoch than they ask for.
  MixtureOrder(std::vector<std::uint64_t> rows, const std::vector<MixtureShare>& shares,
               const MixtureOptions& options = {})
      : rows_(std::move(rows)) {
    RESIDENT_EXPECTS(!rows_.empty() && rows_.size() == shares.size(),
                     "a mixture was given " + std::to_string(rows_.size()) + " sources and " +
                         std::to_string(shares.size()) +
                         " shares; give at least one source, and one share per source");
    const bool weighted = shares.front().kind() == MixtureShare::Kind::weight;
    std::vector<double> amounts(rows_.size());
    bool counts_only = true;
    for (std::size_t s = 0; s < rows_.size(); ++s) {
      const MixtureShare& share = shares[s];
      RESIDENT_EXPECTS((share.kind() == MixtureShare::Kind::weight) == weighted,
                       "source " + std::to_string(s) + " takes a " + kind_name(share.kind()) +
                           " and source 0 a " + kind_name(shares.front().kind()) +
                           "; give every source a weight, or every source a repeat or a count");
      RESIDENT_EXPECTS(std::isfinite(share.value()) && share.value() >= 0,
                       "source " + std::to_string(s) + " takes a " + kind_name(share.kind()) +
                           " of " + std::to_string(share.value()) +
                           "; give a finite figure of at least 0");
      RESIDENT_EXPECTS(rows_[s] <= Permutation::max_size,
                       "source " + std::to_string(s) + " has " + std::to_string(rows_[s]) +
                           " rows; a mixture's source has at most 2^62");
      RESIDENT_EXPECTS(rows_[s] != 0 || share.value() == 0,
                       "source " + std::to_string(s) + " has no rows but takes a " +
                           kind_name(share.kind()) + " of " + std::to_string(share.value()) +
                           "; give it a share of 0, or leave it out");
      counts_only = counts_only && share.kind() == MixtureShare::Kind::count;
      amounts[s] = share.kind() == MixtureShare::Kind::repeat
                       ? share.value() * static_cast<double>(rows_[s])
                       : share.value();
    }
    const double largest = *std::max_element(amounts.begin(), amounts.end());
    RESIDENT_EXPECTS(largest > 0, std::string("every source's ") +
                                      kind_name(shares.front().kind()) +
                                      " is 0, so the mixture would serve nothing; give at least "
                                      "one source a share above 0");
    RESIDENT_EXPECTS(weighted || options.epoch_samples == 0,
                     "MixtureOptions::epoch_samples is " + std::to_string(options.epoch_samples) +
                         ", but the sources take repeats or counts, which fix the epoch; leave "
                         "it 0, or give the sources weights");
    const std::uint64_t samples = weighted ? weighted_samples(options.epoch_samples)
                                           : absolute_samples(shares, amounts, counts_only);
    RESIDENT_EXPECTS(samples <= Permutation::max_size,
                     "the mixture's epoch is " + std::to_string(samples) +
                         " samples; give MixtureOptions::epoch_samples of at most 2^62");
    period_ = options.period != 0 ? options.period : samples;
    RESIDENT_EXPECTS(period_ <= Permutation::max_size, "the mixture's period is " +
                                                           std::to_string(period_) +
                                                           " samples; give one of at most 2^62");
    periods_ = samples / period_ + (samples % period_ != 0 ? 1 : 0);
    RESIDENT_EXPECTS(periods_ <= Permutation::max_size / period_,
                     "an epoch of " + std::to_string(periods_) + " periods of " +
                         std::to_string(period_) +
                         " samples is past 2^62 samples; give fewer epoch samples");
    const std::vector<std::uint64_t> integral =
        counts_only ? exact_amounts(shares) : detail::scaled_amounts(amounts, largest);
    quotas_ = detail::apportion(period_, integral);
    check_quotas(shares,
                 weighted ? std::vector<std::uint64_t>{} : detail::apportion(samples, integral));
    table_ = rows_;
    table_.insert(table_.end(), quotas_.begin(), quotas_.end());
    // Each source's first slot of a period: the quotas before it, summed.
    table_.push_back(0);
    std::partial_sum(quotas_.begin(), quotas_.end() - 1, std::back_inserter(table_));
  }

  /// @brief A copy: the same samples at every position.
  MixtureOrder(const MixtureOrder&) = default;
  /// @brief A copy: the same samples at every position.
  MixtureOrder& operator=(const MixtureOrder&) = default;
  /// @brief Takes `other`'s order, leaving `other` the order of no source.
  MixtureOrder(MixtureOrder&& other) noexcept { take(other); }
  /// @brief Takes `other`'s order, leaving `other` the order of no source.
  MixtureOrder& operator=(MixtureOrder&& other) noexcept {
    if (this != &other) take(other);
    return *this;
  }
  ~MixtureOrder() = default;

  /// @brief Sources mixed.
  [[nodiscard]] std::size_t sources() const noexcept { return rows_.size(); }
  /// @brief Rows of source `source`.
  [[nodiscard]] std::uint64_t rows(std::size_t source) const { return rows_.at(source); }
  /// @brief Samples per epoch: `periods() * period()` (0 for the order of no source).
  [[nodiscard]] std::uint64_t size() const noexcept { return periods_ * period_; }
  /// @brief Samples per period (M).
  [[nodiscard]] std::uint64_t period() const noexcept { return period_; }
  /// @brief Periods per epoch.
  [[nodiscard]] std::uint64_t periods() const noexcept { return periods_; }
  /// @brief Samples of source `source` in each period.
  [[nodiscard]] std::uint64_t quota(std::size_t source) const { return quotas_.at(source); }
  /// @brief Samples of source `source` in each epoch: `periods() * quota(source)`.
  [[nodiscard]] std::uint64_t epoch_quota(std::size_t source) const {
    return periods_ * quotas_.at(source);
  }

  /// @brief The sample at position `position` of epoch `epoch` (`shuffled`: under the
  /// permutations keyed by `seed`; unshuffled, `seed` is not read).
  /// @throws std::out_of_range when `position >= size()`.
  [[nodiscard]] MixtureSample at(std::uint64_t position, std::uint64_t seed, std::uint64_t epoch,
                                 bool shuffled) const {
    if (position >= size())
      throw std::out_of_range("resident: mixture position " + std::to_string(position) +
                              " is out of range; the mixture's epoch has " +
                              std::to_string(size()) + " samples; use a position below that");
    return detail::mixture_sample(table_.data(), impl_key(seed, epoch, shuffled), position,
                                  detail::SameAddress{});
  }

  /// @cond impl
  // The sources as `detail::mixture_sample` reads them, and an epoch's key.
  [[nodiscard]] const std::vector<std::uint64_t>& impl_table() const noexcept { return table_; }
  [[nodiscard]] detail::MixtureKey impl_key(std::uint64_t seed, std::uint64_t epoch,
                                            bool shuffled) const noexcept {
    if (!shuffled) return {rows_.size(), period_, periods_, epoch, false, {}, {}};
    return {rows_.size(),
            period_,
            periods_,
            epoch,
            true,
            Permutation(period_, detail::mix64(seed ^ 0x6d69787475726573ULL), epoch),
            Permutation(0, detail::mix64(seed ^ 0x7061737365730000ULL), epoch)};
  }
  /// @endcond

 private:
  void take(MixtureOrder& other) noexcept {
    rows_ = std::exchange(other.rows_, {});
    quotas_ = std::exchange(other.quotas_, {});
    table_ = std::exchange(other.table_, {});
    period_ = std::exchange(other.period_, 0);
    periods_ = std::exchange(other.periods_, 0);
  }

  static const char* kind_name(MixtureShare::Kind kind) noexcept {
    switch (kind) {
      case MixtureShare::Kind::weight:
        return "weight";
      case MixtureShare::Kind::repeat:
        return "repeat";
      case MixtureShare::Kind::count:
        break;
    }
    return "count";
  }

  // Samples per epoch of weighted sources: `epoch_samples`, or every source's rows once.
  [[nodiscard]] std::uint64_t weighted_samples(std::uint64_t epoch_samples) const {
    if (epoch_samples != 0) return epoch_samples;
    std::uint64_t sum = 0;
    for (const std::uint64_t held : rows_) {
      RESIDENT_EXPECTS(held <= Permutation::max_size - sum,
                       "the sources hold more than 2^62 rows together; give "
                       "MixtureOptions::epoch_samples");
      sum += held;
    }
    return sum;
  }
  // Samples per epoch of sources that take repeats and counts: their amounts, summed.
  [[nodiscard]] static std::uint64_t absolute_samples(const std::vector<MixtureShare>& shares,
                                                      const std::vector<double>& amounts,
                                                      bool counts_only) {
    const auto max = static_cast<double>(Permutation::max_size);
    double sum = 0;
    std::uint64_t counted = 0;
    for (std::size_t s = 0; s < amounts.size(); ++s) {
      RESIDENT_EXPECTS(
          amounts[s] <= max - sum && shares[s].samples() <= Permutation::max_size - counted,
          "source " + std::to_string(s) +
              " brings the mixture's epoch past 2^62 samples; give smaller repeats or counts");
      sum += amounts[s];
      counted += shares[s].samples();
    }
    return counts_only ? counted : static_cast<std::uint64_t>(std::llround(sum));
  }
  // Refuses quotas that do not serve the shares: a source of a weight above 0 that a period
  // leaves out, or (repeats and counts: `served`, each source's samples an epoch) periods that
  // serve other counts than those asked for.
  void check_quotas(const std::vector<MixtureShare>& shares,
                    const std::vector<std::uint64_t>& served) const {
    for (std::size_t s = 0; s < shares.size(); ++s) {
      if (served.empty()) {
        RESIDENT_EXPECTS(shares[s].value() == 0 || quotas_[s] != 0,
                         "source " + std::to_string(s) + "'s weight of " +
                             std::to_string(shares[s].value()) + " gets no sample of a period of " +
                             std::to_string(period_) +
                             "; give a longer MixtureOptions::period, or a larger weight");
        continue;
      }
      RESIDENT_EXPECTS(periods_ * quotas_[s] == served[s],
                       "source " + std::to_string(s) + " takes " + std::to_string(served[s]) +
                           " samples an epoch, but " + std::to_string(periods_) + " periods of " +
                           std::to_string(period_) + " serve it " +
                           std::to_string(periods_ * quotas_[s]) +
                           "; give a period that divides every source's samples in the same "
                           "proportions (or 0: one period), or give the sources weights");
    }
  }
  // The counts themselves, summed without rounding.
  static std::vector<std::uint64_t> exact_amounts(const std::vector<MixtureShare>& shares) {
    std::vector<std::uint64_t> amounts(shares.size());
    std::transform(shares.begin(), shares.end(), amounts.begin(),
                   [](const MixtureShare& share) { return share.samples(); });
    return amounts;
  }

  std::vector<std::uint64_t> rows_;
  std::vector<std::uint64_t> quotas_;
  std::vector<std::uint64_t> table_;  // rows, quotas, first slots (see detail::mixture_sample)
  std::uint64_t period_ = 0;
  std::uint64_t periods_ = 0;
};

}  // namespace resident
