// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

/// @file
/// @brief `Permutation`: a seeded, counter-based bijection on `[0, n)`, computed on the fly on
/// host or device; the source of every shuffled order in resident.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "resident/config.hpp"
#include "resident/detail/expects.hpp"

namespace resident {

namespace detail {

struct PermutationAccess;

/// SplitMix64's finaliser: a full-avalanche 64-bit mix (Steele, Lea, Flood 2014).
RESIDENT_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace detail

/// @brief A keyed bijection on `[0, size())`: `p(i)` for `i < size()` visits every index once.
/// A balanced Feistel network of 12 rounds on the smallest even bit width that covers `n`, with
/// cycle walking to stay inside `[0, n)` (at most 4 rounds of walking on average, since the
/// network's domain is under 4n). O(1) memory, no table, no upload; the same `(n, seed, epoch)`
/// gives the same order on every space, run and platform (integer arithmetic only). Twelve
/// rounds, not the textbook four to six: on small domains (a few bits per half) six rounds
/// left the position of an index measurably non-uniform over epochs (chi-square about twice
/// its degrees of freedom for n = 8); twelve pass (tests/test_permutation.cpp).
/// @note Trivially copyable and usable in device code. Outside `[0, size())` the permutation
/// is the identity (`p(i) == i` for `i >= size()`, and for every `i` of the empty one), so
/// that an index past the end can never send the cycle walk round forever; `at(i)` throws for
/// it instead.
class Permutation {
 public:
  static constexpr std::uint64_t max_size = std::uint64_t{1} << 62;  ///< Largest `n` accepted.
  /// @brief Rounds of the Feistel network (see the class note for why twelve).
  static constexpr int rounds = 12;

  /// @brief The empty permutation.
  constexpr Permutation() noexcept = default;

  /// @brief The permutation of `[0, n)` for this seed and epoch.
  /// @throws InvalidArgument when `n > max_size`.
  Permutation(std::uint64_t n, std::uint64_t seed, std::uint64_t epoch)
      : Permutation(checked(n), seed, epoch, Unchecked{}) {}

  /// @brief `n`: the permutation is of `[0, size())` (0 for the empty one).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::uint64_t size() const noexcept { return size_; }

  /// @brief `(*this)(i)`, checked.
  /// @throws std::out_of_range when `i >= size()`.
  [[nodiscard]] std::uint64_t at(std::uint64_t i) const {
    if (i >= size_)
      throw std::out_of_range("resident: permutation position " + std::to_string(i) +
                              " is out of range; the permutation has " + std::to_string(size_) +
                              " positions; use one below " + std::to_string(size_));
    return (*this)(i);
  }

  /// @brief The index at position `i` of the shuffled order (`i` itself past the end).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::uint64_t operator()(
      std::uint64_t i) const noexcept {
    // A cycle of the network's domain may hold no index below n: walking one from i >= n
    // would never end.
    return walk(i, 0);
  }

 private:
  friend struct detail::PermutationAccess;
  struct Unchecked {};

  static std::uint64_t checked(std::uint64_t n) {
    RESIDENT_EXPECTS(n <= max_size,
                     "a permutation covers at most 2^62 indices, asked for " + std::to_string(n));
    return n;
  }
  // The network for `n <= max_size`, keyed; callable in device code.
  RESIDENT_HOST_DEVICE constexpr Permutation(std::uint64_t n, std::uint64_t seed,
                                             std::uint64_t epoch, Unchecked /*checked*/) noexcept {
    cover(n);
    const std::uint64_t stream = detail::mix64(seed) ^ detail::mix64(~epoch);
    for (int round = 0; round < rounds; ++round)
      keys_[round] =
          detail::mix64(stream + static_cast<std::uint64_t>(round) * 0x632be59bd9b4e019ULL);
  }

  // The network's width for `[0, n)`: the smallest even number of bits, at least 2, that
  // covers `n`.
  RESIDENT_HOST_DEVICE constexpr void cover(std::uint64_t n) noexcept {
    size_ = n;
    int bits = 2;  // the bits of n - 1: at least 2, at most 62
    if (n > 4) {
#if defined(__CUDA_ARCH__)
      bits = 64 - __clzll(static_cast<long long>(n - 1));
#else
      bits = 64 - __builtin_clzll(n - 1);
#endif
      bits = bits < 62 ? bits : 62;
    }
    bits += bits & 1;
    half_bits_ = bits / 2;
    half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  }

  // The index at position `i`, each round key xored with `mask` (0: the permutation itself).
  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::uint64_t walk(
      std::uint64_t i, std::uint64_t mask) const noexcept {
    // A cycle of the network's domain may hold no index below n: walking one from i >= n
    // would never end.
    if (i >= size_) return i;
    std::uint64_t x = encrypt(i, mask);
    while (x >= size_) x = encrypt(x, mask);  // cycle walking: ends, since i's cycle holds i < n
    return x;
  }

  // `encrypt` of `lanes` values at once, each by its own network's keys (`network[l]`) on its
  // own width (`half_bits[l]`, `half_mask[l]` as `cover` gives them) with its round keys xored
  // with `mask[l]`: round by round across the lanes, so that their independent chains of
  // multiplies overlap where one alone waits on each.
  template <std::size_t lanes>
  static void encrypt_lanes(const Permutation* const (&network)[lanes], std::uint64_t (&x)[lanes],
                            const std::uint64_t (&mask)[lanes], const int (&half_bits)[lanes],
                            const std::uint64_t (&half_mask)[lanes]) noexcept {
    std::uint64_t left[lanes];   // NOLINT(modernize-avoid-c-arrays): one per lane, as `x`
    std::uint64_t right[lanes];  // NOLINT(modernize-avoid-c-arrays)
    for (std::size_t l = 0; l < lanes; ++l) {
      left[l] = x[l] >> half_bits[l];
      right[l] = x[l] & half_mask[l];
    }
    for (int round = 0; round < rounds; ++round)
      for (std::size_t l = 0; l < lanes; ++l) {
        const std::uint64_t next =
            left[l] ^ (detail::mix64(right[l] ^ network[l]->keys_[round] ^ mask[l]) & half_mask[l]);
        left[l] = right[l];
        right[l] = next;
      }
    for (std::size_t l = 0; l < lanes; ++l) x[l] = (left[l] << half_bits[l]) | right[l];
  }

  [[nodiscard]] RESIDENT_HOST_DEVICE constexpr std::uint64_t encrypt(
      std::uint64_t x, std::uint64_t mask) const noexcept {
    std::uint64_t left = x >> half_bits_;
    std::uint64_t right = x & half_mask_;
    for (int round = 0; round < rounds; ++round) {
      const std::uint64_t next = left ^ (detail::mix64(right ^ keys_[round] ^ mask) & half_mask_);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t size_ = 0;
  int half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::uint64_t keys_[rounds]{};  // NOLINT(modernize-avoid-c-arrays): usable in device code
};

namespace detail {

/// @brief Permutations made where no exception can be thrown (a kernel), of a size known to be
/// at most `Permutation::max_size`.
struct PermutationAccess {
  [[nodiscard]] RESIDENT_HOST_DEVICE static constexpr Permutation make(
      std::uint64_t n, std::uint64_t seed, std::uint64_t epoch) noexcept {
    return Permutation(n, seed, epoch, Permutation::Unchecked{});
  }
  /// @brief Position `i` of `base`'s network over `[0, n)` with each round key xored with the
  /// mix of `tweak`: a permutation of its own for each tweak, for one mix where keying one anew
  /// takes thirteen (a mixture's order places every row through two of them).
  [[nodiscard]] RESIDENT_HOST_DEVICE static constexpr std::uint64_t tweaked(
      const Permutation& base, std::uint64_t n, std::uint64_t tweak, std::uint64_t i) noexcept {
    Permutation tweaked = base;  // base's keys, the width for n
    tweaked.cover(n);
    return tweaked.walk(i, mix64(tweak));
  }
  /// @brief The network's width for `[0, n)`, as `tweaked` takes it: the bits of a half, and
  /// their mask.
  RESIDENT_HOST_DEVICE static constexpr void width(std::uint64_t n, int& half_bits,
                                                   std::uint64_t& half_mask) noexcept {
    Permutation covering;
    covering.cover(n);
    half_bits = covering.half_bits_;
    half_mask = covering.half_mask_;
  }
  /// @brief One step of `lanes` walks of `tweaked` at once: `x[l]` encrypted by the keys of
  /// `network[l]` on the width `width` gives for its lane's `n`, with the mix of its lane's
  /// tweak as `mask[l]` (a walk ends at the first value below its `n`). Host code: a gathering
  /// thread walks several rows at once, their chains of multiplies overlapping where one alone
  /// waits on each.
  template <std::size_t lanes>
  static void encrypt_lanes(const Permutation* const (&network)[lanes], std::uint64_t (&x)[lanes],
                            const std::uint64_t (&mask)[lanes], const int (&half_bits)[lanes],
                            const std::uint64_t (&half_mask)[lanes]) noexcept {
    Permutation::encrypt_lanes(network, x, mask, half_bits, half_mask);
  }
};

}  // namespace detail

}  // namespace resident
