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
#include <cstdio>
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

/// @brief New shares of a mixture's sources from a position of the run on: from position
/// `position` of epoch `epoch` (a whole number of periods into it), the sources take `shares`
/// (of the same kind as the first shares, serving as many samples an epoch), until the next
/// phase begins. A run that changes its weights declares one, so that what was served before
/// stays what it was: a state saved before the phase begins resumes (see `Mixture`). The kind
/// is the first shares': weights, or repeats and counts.
struct MixturePhase {
  std::uint64_t epoch = 0;           ///< The epoch the phase begins in.
  std::uint64_t position = 0;        ///< Its position there: a multiple of the period.
  std::vector<MixtureShare> shares;  ///< One per source, as the mixture's own.
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
  std::uint64_t first_period = 0;  ///< The run's period the epoch begins with (saturated).
  std::uint64_t phase_first = 0;   ///< The phase the epoch begins in.
  std::uint64_t phase_last = 0;    ///< The phase its last period is of.
  bool shuffled = false;
  Permutation slots;   ///< The epoch's keys of the periods' slots, tweaked by the period.
  Permutation passes;  ///< The epoch's keys of the sources' passes, tweaked by source and pass.
};

/// @brief Where phase `phase` of the sources `table` describes (see `mixture_sample`) begins in
/// the epoch of `key`, in its periods (0 for one that began before it).
template <class Reach>
[[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t mixture_phase_begins(const std::uint64_t* table,
                                                                      const MixtureKey& key,
                                                                      std::uint64_t phase,
                                                                      const Reach& reach) noexcept {
  const std::uint64_t first = *reach(table + key.sources + phase * (1 + 2 * key.sources), 1);
  return first > key.first_period ? first - key.first_period : 0;
}

/// @brief A period's slot, once through its permutation: the source it names, the source's
/// rows, and the occurrence of the source in the epoch it is.
struct MixtureOccurrence {
  std::uint64_t source = 0;
  std::uint64_t held = 0;
  std::uint64_t occurrence = 0;

  /// The tweak of the source's pass the occurrence is in (see `MixtureKey::passes`).
  [[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t pass() const noexcept {
    return mix64(source + 1) ^ (occurrence / held);
  }
};

/// @brief The occurrence that slot `slot` of period `index` of the epoch `key` names (the slot
/// after the period's permutation), of the sources `table` describes (see `mixture_sample`).
template <class Reach>
[[nodiscard]] RESIDENT_HOST_DEVICE MixtureOccurrence
mixture_occurrence(const std::uint64_t* table, const MixtureKey& key, std::uint64_t index,
                   std::uint64_t slot, const Reach& reach) noexcept {
  const std::uint64_t* phases = table + key.sources;
  const std::uint64_t words = 1 + 2 * key.sources;  // of a phase
  const auto begins = [&](std::uint64_t phase) {
    return mixture_phase_begins(table, key, phase, reach);
  };
  std::uint64_t phase = key.phase_first;
  while (phase < key.phase_last && begins(phase + 1) <= index) ++phase;
  const std::uint64_t* quotas = phases + phase * words + 1;
  const std::uint64_t* starts = quotas + key.sources;
  std::uint64_t low = 0, high = key.sources;  // the last source whose first slot is <= slot
  while (high - low > 1) {
    const std::uint64_t middle = low + (high - low) / 2;
    if (*reach(starts + middle, 1) <= slot)
      low = middle;
    else
      high = middle;
  }
  const auto quota_of = [&](std::uint64_t of) { return *reach(phases + of * words + 1 + low, 1); };
  // The source's occurrence in the epoch: its quota in each period of the epoch before this
  // one, phase by phase, then the slots before this one.
  std::uint64_t occurrence =
      (index - begins(phase)) * quota_of(phase) + (slot - *reach(starts + low, 1));
  for (std::uint64_t earlier = key.phase_first; earlier < phase; ++earlier)
    occurrence += (begins(earlier + 1) - begins(earlier)) * quota_of(earlier);
  return {low, *reach(table + low, 1), occurrence};
}

/// @brief The row an unshuffled epoch serves for `at`: rows carry on from the samples of the
/// source served in the epochs before, mod its rows (the whole phases before the epoch's first,
/// then that one's periods before the epoch).
template <class Reach>
[[nodiscard]] RESIDENT_HOST_DEVICE std::uint64_t mixture_carried_row(const std::uint64_t* table,
                                                                     const MixtureKey& key,
                                                                     const MixtureOccurrence& at,
                                                                     const Reach& reach) noexcept {
  const std::uint64_t* phases = table + key.sources;
  const std::uint64_t words = 1 + 2 * key.sources;  // of a phase
  const std::uint64_t held = at.held;
  const auto quota_of = [&](std::uint64_t of) {
    return *reach(phases + of * words + 1 + at.source, 1);
  };
  std::uint64_t carried = 0;
  for (std::uint64_t earlier = 0; earlier < key.phase_first; ++earlier) {
    const std::uint64_t periods =
        *reach(phases + (earlier + 1) * words, 1) - *reach(phases + earlier * words, 1);
    carried = (carried + mul_mod(quota_of(earlier) % held, periods % held, held)) % held;
  }
  const std::uint64_t begun = *reach(phases + key.phase_first * words, 1) % held;
  const std::uint64_t periods =  // (epoch * periods - begun) mod held, epoch * periods unbounded
      (mul_mod(key.epoch % held, key.periods % held, held) + held - begun) % held;
  carried = (carried + mul_mod(quota_of(key.phase_first) % held, periods, held)) % held;
  return (carried + at.occurrence % held) % held;
}

/// @brief The sample at `position` of the epoch `key` names, of the sources `table` describes:
/// `key.sources` words of their rows, then for each phase its first period of the run, and
/// `key.sources` words of its quotas and of its first slots, each read through
/// `reach(pointer, count)` (a kernel's reach of the space's memory). The one definition of a
/// mixture's order, on host and device (see `MixtureOrder`): the period's slot through its
/// permutation, the occurrence it names, and that through the source's pass.
template <class Reach>
[[nodiscard]] RESIDENT_HOST_DEVICE MixtureSample mixture_sample(const std::uint64_t* table,
                                                                const MixtureKey& key,
                                                                std::uint64_t position,
                                                                const Reach& reach) noexcept {
  const std::uint64_t index = position / key.period;  // of the period
  std::uint64_t slot = position % key.period;
  if (key.shuffled) slot = PermutationAccess::tweaked(key.slots, key.period, index, slot);
  const MixtureOccurrence at = mixture_occurrence(table, key, index, slot, reach);
  const auto source = static_cast<std::size_t>(at.source);
  if (!key.shuffled) return {source, mixture_carried_row(table, key, at, reach)};
  return {source,
          PermutationAccess::tweaked(key.passes, at.held, at.pass(), at.occurrence % at.held)};
}

/// Walks a thread of `mixture_samples` keeps in flight.
inline constexpr std::size_t mixture_lanes = 4;

/// @brief `serve(i, mixture_sample(table, key, position(i), reach))` for each `i` below
/// `count`, computed together on the host (in no set order of `i`). A shuffled sample takes
/// two walks, the slot's and the pass's, each a chain of multiplies that waits on itself;
/// `mixture_lanes` lanes each walk one position's slot, then its pass, then take the next
/// position, and step together, so that their chains overlap and a lane that walks on does not
/// hold the others back.
template <class Reach, class Position, class Serve>
void mixture_samples(const std::uint64_t* table, const MixtureKey& key, std::size_t count,
                     const Reach& reach, const Position& position, const Serve& serve) {
  if (!key.shuffled) {
    for (std::size_t i = 0; i < count; ++i)
      serve(i, mixture_sample(table, key, position(i), reach));
    return;
  }
  constexpr std::size_t lanes = mixture_lanes;
  // NOLINTBEGIN(modernize-avoid-c-arrays): one per lane
  const Permutation* network[lanes];
  std::uint64_t x[lanes], size[lanes], mask[lanes], half_mask[lanes], period[lanes];
  int half_bits[lanes];
  std::size_t job[lanes];     // the position a lane walks for (`count`: none)
  std::size_t source[lanes];  // walking the pass of this source (else the slot: `lanes`)
  // NOLINTEND(modernize-avoid-c-arrays)
  int slot_bits = 0;
  std::uint64_t slot_mask = 0;
  PermutationAccess::width(key.period, slot_bits, slot_mask);
  std::size_t next = 0, busy = 0;
  const auto take = [&](std::size_t l) {  // the next position's slot, or none
    job[l] = next;
    network[l] = &key.slots;
    half_bits[l] = slot_bits;
    half_mask[l] = slot_mask;
    source[l] = lanes;
    if (next == count) return;  // idle: walks on unread
    const std::uint64_t at = position(next++);
    period[l] = at / key.period;
    x[l] = at % key.period;
    size[l] = key.period;
    mask[l] = mix64(period[l]);
    ++busy;
  };
  for (std::size_t l = 0; l < lanes; ++l) {
    x[l] = size[l] = mask[l] = period[l] = 0;
    take(l);
  }
  while (busy != 0) {
    PermutationAccess::encrypt_lanes(network, x, mask, half_bits, half_mask);
    for (std::size_t l = 0; l < lanes; ++l) {
      if (job[l] == count || x[l] >= size[l]) continue;  // idle, or walking on
      if (source[l] != lanes) {
        serve(job[l], MixtureSample{source[l], x[l]});
        --busy;
        take(l);
        continue;
      }
      const MixtureOccurrence at = mixture_occurrence(table, key, period[l], x[l], reach);
      source[l] = static_cast<std::size_t>(at.source);
      network[l] = &key.passes;
      x[l] = at.occurrence % at.held;
      size[l] = at.held;
      mask[l] = mix64(at.pass());
      PermutationAccess::width(at.held, half_bits[l], half_mask[l]);
    }
  }
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
///
/// Phases (`MixturePhase`) change the quotas from a period of the run on: each period takes
/// the quotas of the phase it is of, and a source's occurrences run on across the change (its
/// pass goes on; unshuffled, its rows carry on), so that no row comes twice in a pass there
/// either. `quota(s, phase)` and `epoch_quota(s, epoch)` give the figures of each.
/// @note Copyable; moved from, it is the order of no source (every figure 0, `at` throws).
/// Thread-safe for concurrent const use.
class MixtureOrder {
 public:
  /// @brief The order of no source (size 0).
  MixtureOrder() = default;

  /// @brief The order of sources of `rows[s]` rows taking `shares[s]`, shaped by `options`,
  /// then the shares of each of `phases` from where it begins.
  /// @throws InvalidArgument, naming the source (and the phase) and the figure, for: no source,
  /// or a share per source missing; weights mixed with repeats or counts; a weight or repeat
  /// negative, not finite, or all zero; a source with no rows and a share; `epoch_samples` with
  /// repeats or counts; a period, a source's rows or an epoch past `Permutation::max_size`; a
  /// period that gives a source of a weight above 0 no sample, or that serves repeats and
  /// counts other samples an epoch than they ask for; a phase whose shares serve another
  /// number of samples an epoch, that begins inside a period, past the epoch, not after the
  /// phase before, or past 2^64 periods into the run.
  MixtureOrder(std::vector<std::uint64_t> rows, const std::vector<MixtureShare>& shares,
               const MixtureOptions& options = {}, const std::vector<MixturePhase>& phases = {})
      : sources_(rows.size()), table_(std::move(rows)) {
    const Amounts first = amounts_of(shares, options, "");
    period_ = options.period != 0 ? options.period : first.samples;
    RESIDENT_EXPECTS(period_ <= Permutation::max_size, "the mixture's period is " +
                                                           std::to_string(period_) +
                                                           " samples; give one of at most 2^62");
    periods_ = first.samples / period_ + (first.samples % period_ != 0 ? 1 : 0);
    RESIDENT_EXPECTS(periods_ <= Permutation::max_size / period_,
                     "an epoch of " + std::to_string(periods_) + " periods of " +
                         std::to_string(period_) +
                         " samples is past 2^62 samples; give fewer epoch samples");
    add_phase(0, shares, first, "");
    for (std::size_t i = 0; i < phases.size(); ++i) {
      const MixturePhase& phase = phases[i];
      const std::string where = "phase " + std::to_string(i + 1) + ": ";
      const bool weighted =
          !phase.shares.empty() && phase.shares.front().kind() == MixtureShare::Kind::weight;
      RESIDENT_EXPECTS(phase.shares.empty() || weighted == first.weighted,
                       where + "its shares are " + (weighted ? "weights" : "repeats or counts") +
                           ", the mixture's first shares " +
                           (first.weighted ? "weights" : "repeats or counts") +
                           "; give every phase shares of the first shares' kind");
      const Amounts amounts = amounts_of(phase.shares, options, where);
      RESIDENT_EXPECTS(amounts.samples == first.samples,
                       where + "its shares serve " + std::to_string(amounts.samples) +
                           " samples an epoch, the mixture's first shares " +
                           std::to_string(first.samples) +
                           "; give every phase shares that serve as many samples (weights do, "
                           "with MixtureOptions::epoch_samples; counts of the same sum do)");
      RESIDENT_EXPECTS(phase.position < size(),
                       where + "it begins at position " + std::to_string(phase.position) +
                           ", past the epoch of " + std::to_string(size()) +
                           " samples; give a position below it, or position 0 of a later epoch");
      RESIDENT_EXPECTS(phase.position % period_ == 0,
                       where + "it begins at position " + std::to_string(phase.position) +
                           ", inside a period of " + std::to_string(period_) +
                           " samples; give a position of the epoch that is a multiple of the "
                           "period");
      const std::uint64_t into = phase.position / period_;
      RESIDENT_EXPECTS(phase.epoch <= (std::numeric_limits<std::uint64_t>::max() - into) / periods_,
                       where + "it begins in epoch " + std::to_string(phase.epoch) +
                           ", past 2^64 periods into the run; give an earlier epoch");
      const std::uint64_t begins = phase.epoch * periods_ + into;
      const std::uint64_t before = table_[phase_word(phases_ - 1)];
      RESIDENT_EXPECTS(begins > before,
                       where + "it begins at epoch " + std::to_string(phase.epoch) + ", position " +
                           std::to_string(phase.position) + ", not after " +
                           (i == 0 ? std::string("the mixture's first shares, which begin at "
                                                 "epoch 0, position 0 (give its shares as the "
                                                 "mixture's own instead)")
                                   : "phase " + std::to_string(i) + ", which begins at epoch " +
                                         std::to_string(before / periods_) + ", position " +
                                         std::to_string(before % periods_ * period_)) +
                           "; give the phases in the order they begin, each after the one "
                           "before");
      add_phase(begins, phase.shares, amounts, where);
    }
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
  [[nodiscard]] std::size_t sources() const noexcept { return sources_; }
  /// @brief Rows of source `source`.
  /// @throws std::out_of_range when `source >= sources()`.
  [[nodiscard]] std::uint64_t rows(std::size_t source) const {
    return table_[checked_source(source)];
  }
  /// @brief Samples per epoch: `periods() * period()` (0 for the order of no source).
  [[nodiscard]] std::uint64_t size() const noexcept { return periods_ * period_; }
  /// @brief Samples per period (M).
  [[nodiscard]] std::uint64_t period() const noexcept { return period_; }
  /// @brief Periods per epoch.
  [[nodiscard]] std::uint64_t periods() const noexcept { return periods_; }
  /// @brief Share sets: the first shares, then one per `MixturePhase` (0 when moved from).
  [[nodiscard]] std::size_t phases() const noexcept { return phases_; }
  /// @brief Samples of source `source` in each period of phase `phase` (0: the first shares').
  /// @throws std::out_of_range when `source >= sources()` or `phase >= phases()`.
  [[nodiscard]] std::uint64_t quota(std::size_t source, std::size_t phase = 0) const {
    if (phase >= phases_)
      throw std::out_of_range("resident: mixture phase " + std::to_string(phase) +
                              " is out of range; the mixture has " + std::to_string(phases_) +
                              " share sets; use one below that");
    return table_[phase_word(phase) + 1 + checked_source(source)];
  }
  /// @brief Samples of source `source` in epoch `epoch`: `periods() * quota(source)` where no
  /// phase begins, the periods of each phase in it times its quota where one does.
  /// @throws std::out_of_range when `source >= sources()`.
  [[nodiscard]] std::uint64_t epoch_quota(std::size_t source, std::uint64_t epoch = 0) const {
    (void)checked_source(source);
    const detail::MixtureKey key = impl_key(0, epoch, false);
    std::uint64_t samples = 0;
    for (std::uint64_t phase = key.phase_first; phase <= key.phase_last; ++phase) {
      const std::uint64_t to = phase == key.phase_last ? periods_ : within(key, phase + 1);
      samples += (to - within(key, phase)) * quota(source, static_cast<std::size_t>(phase));
    }
    return samples;
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
    detail::MixtureKey key{sources_, period_, periods_, epoch, 0, 0, 0, shuffled, {}, {}};
    if (phases_ == 0) return key;
    key.first_period = epoch <= std::numeric_limits<std::uint64_t>::max() / periods_
                           ? epoch * periods_
                           : std::numeric_limits<std::uint64_t>::max();
    // The phases whose first period is at most the epoch's first, then its last.
    const auto last_begun = [&](std::uint64_t period) {
      std::uint64_t phase = 0;
      while (phase + 1 < phases_ && table_[phase_word(phase + 1)] <= period) ++phase;
      return phase;
    };
    key.phase_first = last_begun(key.first_period);
    key.phase_last = last_begun(
        key.first_period +
        std::min(periods_ - 1, std::numeric_limits<std::uint64_t>::max() - key.first_period));
    if (shuffled) {
      key.slots = Permutation(period_, detail::mix64(seed ^ 0x6d69787475726573ULL), epoch);
      key.passes = Permutation(0, detail::mix64(seed ^ 0x7061737365730000ULL), epoch);
    }
    return key;
  }
  // What a state of epoch `epoch` that served positions below `position` depends on: the
  // rows, the period, and every phase that begins before it (always the first shares).
  [[nodiscard]] std::uint64_t impl_hash(std::uint64_t epoch,
                                        std::uint64_t position) const noexcept {
    std::uint64_t hash = detail::mix64(period_ ^ 0x6d6978ULL);  // "mix"
    for (std::size_t s = 0; s < sources_; ++s) hash = detail::mix64(hash ^ table_[s]);
    const std::uint64_t served = position / std::max<std::uint64_t>(period_, 1) +
                                 (position % std::max<std::uint64_t>(period_, 1) != 0 ? 1 : 0);
    for (std::size_t phase = 0; phase < phases_; ++phase) {
      const std::uint64_t begins = table_[phase_word(phase)];
      const bool before = phase == 0 || begins / periods_ < epoch ||
                          (begins / periods_ == epoch && begins % periods_ < served);
      if (!before) break;
      for (std::size_t word = 0; word < 1 + 2 * sources_; ++word)
        hash = detail::mix64(hash ^ table_[phase_word(phase) + word]);
    }
    return hash;
  }
  /// @endcond

 private:
  // A source's amounts of one share set, once checked: as integers in the same proportions,
  // and the samples an epoch they make.
  struct Amounts {
    std::vector<std::uint64_t> integral;
    std::vector<std::uint64_t> served;  // repeats' and counts' samples an epoch; none for weights
    std::uint64_t samples = 0;
    bool weighted = false;
  };

  [[nodiscard]] std::size_t phase_word(std::size_t phase) const noexcept {
    return sources_ + phase * (1 + 2 * sources_);
  }
  [[nodiscard]] std::size_t checked_source(std::size_t source) const {
    if (source >= sources_)
      throw std::out_of_range("resident: mixture source " + std::to_string(source) +
                              " is out of range; the mixture has " + std::to_string(sources_) +
                              " sources; use one below that");
    return source;
  }
  // Where phase `phase` begins in the epoch of `key`, in its periods (0: before it).
  [[nodiscard]] std::uint64_t within(const detail::MixtureKey& key, std::uint64_t phase) const {
    return detail::mixture_phase_begins(table_.data(), key, phase, detail::SameAddress{});
  }

  // Checks one share set and makes its amounts.
  [[nodiscard]] Amounts amounts_of(const std::vector<MixtureShare>& shares,
                                   const MixtureOptions& options, const std::string& where) const {
    RESIDENT_EXPECTS(sources_ != 0 && sources_ == shares.size(),
                     where + "a mixture was given " + std::to_string(sources_) + " sources and " +
                         std::to_string(shares.size()) +
                         " shares; give at least one source, and one share per source");
    Amounts made;
    made.weighted = shares.front().kind() == MixtureShare::Kind::weight;
    std::vector<double> amounts(sources_);
    for (std::size_t s = 0; s < sources_; ++s) {
      const MixtureShare& share = shares[s];
      RESIDENT_EXPECTS((share.kind() == MixtureShare::Kind::weight) == made.weighted,
                       where + "source " + std::to_string(s) + " takes a " +
                           kind_name(share.kind()) + " and source 0 a " +
                           kind_name(shares.front().kind()) +
                           "; give every source a weight, or every source a repeat or a count");
      RESIDENT_EXPECTS(std::isfinite(share.value()) && share.value() >= 0,
                       where + "source " + std::to_string(s) + " takes a " +
                           kind_name(share.kind()) + " of " + figure(share.value()) +
                           "; give a finite figure of at least 0");
      RESIDENT_EXPECTS(table_[s] <= Permutation::max_size,
                       "source " + std::to_string(s) + " has " + std::to_string(table_[s]) +
                           " rows; a mixture's source has at most 2^62");
      RESIDENT_EXPECTS(table_[s] != 0 || share.value() == 0,
                       where + "source " + std::to_string(s) + " has no rows but takes a " +
                           kind_name(share.kind()) + " of " + figure(share.value()) +
                           "; give it a share of 0, or leave it out");
      amounts[s] = share.kind() == MixtureShare::Kind::repeat
                       ? share.value() * static_cast<double>(table_[s])
                       : share.value();
    }
    const double largest = *std::max_element(amounts.begin(), amounts.end());
    RESIDENT_EXPECTS(largest > 0, where + "every source's " + kind_name(shares.front().kind()) +
                                      " is 0, so the mixture would serve nothing; give at least "
                                      "one source a share above 0");
    RESIDENT_EXPECTS(made.weighted || options.epoch_samples == 0,
                     where + "MixtureOptions::epoch_samples is " +
                         std::to_string(options.epoch_samples) +
                         ", but the sources take repeats or counts, which fix the epoch; leave "
                         "it 0, or give the sources weights");
    made.samples =
        made.weighted ? weighted_samples(options.epoch_samples) : absolute_samples(shares, amounts);
    RESIDENT_EXPECTS(made.samples <= Permutation::max_size,
                     "the mixture's epoch is " + std::to_string(made.samples) +
                         " samples; give MixtureOptions::epoch_samples of at most 2^62");
    made.integral = made.weighted ? detail::scaled_amounts(amounts, largest)
                                  : absolute_amounts(shares, amounts, largest);
    if (!made.weighted) made.served = detail::apportion(made.samples, made.integral);
    for (std::size_t s = 0; s < made.served.size(); ++s)
      RESIDENT_EXPECTS(shares[s].value() == 0 || made.served[s] != 0,
                       where + "source " + std::to_string(s) + "'s " + kind_name(shares[s].kind()) +
                           " of " + figure(shares[s].value()) +
                           " serves no sample an epoch of its " + std::to_string(table_[s]) +
                           " rows; give at least one sample's worth, or 0 to leave it out");
    return made;
  }
  // Appends a phase that begins at the run's period `begins`: its quotas and first slots.
  void add_phase(std::uint64_t begins, const std::vector<MixtureShare>& shares,
                 const Amounts& amounts, const std::string& where) {
    const std::vector<std::uint64_t> quotas = detail::apportion(period_, amounts.integral);
    check_quotas(shares, quotas, amounts.served, where);
    table_.push_back(begins);
    table_.insert(table_.end(), quotas.begin(), quotas.end());
    // Each source's first slot of a period: the quotas before it, summed.
    table_.push_back(0);
    std::partial_sum(quotas.begin(), quotas.end() - 1, std::back_inserter(table_));
    ++phases_;
  }

  void take(MixtureOrder& other) noexcept {
    table_ = std::exchange(other.table_, {});
    sources_ = std::exchange(other.sources_, 0);
    phases_ = std::exchange(other.phases_, 0);
    period_ = std::exchange(other.period_, 0);
    periods_ = std::exchange(other.periods_, 0);
  }

  // A share's figure as a message shows it: its significant digits, at any scale.
  static std::string figure(double value) {
    char text[32];
    (void)std::snprintf(text, sizeof text, "%.6g", value);
    return text;
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
    for (std::size_t s = 0; s < sources_; ++s) {
      const std::uint64_t held = table_[s];
      RESIDENT_EXPECTS(held <= Permutation::max_size - sum,
                       "the sources hold more than 2^62 rows together; give "
                       "MixtureOptions::epoch_samples");
      sum += held;
    }
    return sum;
  }
  // Samples per epoch of sources that take repeats and counts: their amounts, summed.
  [[nodiscard]] static std::uint64_t absolute_samples(const std::vector<MixtureShare>& shares,
                                                      const std::vector<double>& amounts) {
    const auto max = static_cast<double>(Permutation::max_size);
    double repeated = 0;        // the repeats' samples (each rows times a double)
    std::uint64_t counted = 0;  // the counts', exactly
    for (std::size_t s = 0; s < amounts.size(); ++s) {
      const bool count = shares[s].kind() == MixtureShare::Kind::count;
      const bool fits = count
                            ? shares[s].samples() <= Permutation::max_size - counted
                            : amounts[s] <= max - repeated &&
                                  static_cast<std::uint64_t>(std::llround(repeated + amounts[s])) <=
                                      Permutation::max_size - counted;
      RESIDENT_EXPECTS(fits, "source " + std::to_string(s) +
                                 " brings the mixture's epoch past 2^62 samples; give smaller "
                                 "repeats or counts");
      if (count)
        counted += shares[s].samples();
      else
        repeated += amounts[s];
    }
    return counted + static_cast<std::uint64_t>(std::llround(repeated));
  }
  // Refuses quotas that do not serve the shares: a source of a weight above 0 that a period
  // leaves out, or (repeats and counts: `served`, each source's samples an epoch) periods that
  // serve other counts than those asked for.
  void check_quotas(const std::vector<MixtureShare>& shares,
                    const std::vector<std::uint64_t>& quotas,
                    const std::vector<std::uint64_t>& served, const std::string& where) const {
    for (std::size_t s = 0; s < shares.size(); ++s) {
      if (served.empty()) {
        RESIDENT_EXPECTS(shares[s].value() == 0 || quotas[s] != 0,
                         where + "source " + std::to_string(s) + "'s weight of " +
                             figure(shares[s].value()) + " gets no sample of a period of " +
                             std::to_string(period_) +
                             "; give a longer MixtureOptions::period, or a larger weight");
        continue;
      }
      RESIDENT_EXPECTS(periods_ * quotas[s] == served[s],
                       where + "source " + std::to_string(s) + " takes " +
                           std::to_string(served[s]) + " samples an epoch, but " +
                           std::to_string(periods_) + " periods of " + std::to_string(period_) +
                           " serve it " + std::to_string(periods_ * quotas[s]) +
                           "; give a period that divides every source's samples in the same "
                           "proportions (or 0: one period), or give the sources weights");
    }
  }
  // Repeats' and counts' samples (`amounts`, the largest `largest`) as integers in the same
  // proportions, all scaled by one power of two that keeps the largest below 2^63: counts
  // exactly, whatever their size beside a repeat (a double would round one above 2^53), and
  // repeats to a double's 53 bits.
  static std::vector<std::uint64_t> absolute_amounts(const std::vector<MixtureShare>& shares,
                                                     const std::vector<double>& amounts,
                                                     double largest) {
    int exponent = 0;
    (void)std::frexp(largest, &exponent);  // every amount < 2^exponent <= 2^63
    const int shift = 63 - exponent;
    std::vector<std::uint64_t> integral(shares.size());
    for (std::size_t s = 0; s < shares.size(); ++s)
      integral[s] = shares[s].kind() == MixtureShare::Kind::count
                        ? shares[s].samples() << shift
                        : static_cast<std::uint64_t>(std::ldexp(amounts[s], shift));
    return integral;
  }

  std::size_t sources_ = 0;
  std::size_t phases_ = 0;
  std::vector<std::uint64_t> table_;  // rows, then each phase's (see detail::mixture_sample)
  std::uint64_t period_ = 0;
  std::uint64_t periods_ = 0;
};

}  // namespace resident
