// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

// A read of a file mapping past the file's end raises SIGBUS, and a file truncated in place
// under a mapping makes its tail exactly that. Streams read their files through mappings (the
// page cache's pages, never copied) and check every file after each read, so a truncation
// must not kill the process before the check can refuse it. While a mapping is registered
// here, a SIGBUS inside it maps a page of zeros over the faulting page and lets the read go
// on; the check after the read finds the file shorter and throws, so the zeros are never
// served. A fault anywhere else goes to the handler that was there before (or kills the
// process, as it would have).

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace resident::detail {

/// Mappings registered at once; a mapping that finds every place taken is not mapped (the
/// rows are read another way: see `FileMapping::map`).
inline constexpr std::size_t bus_fault_places = 1024;

/// The registered mappings, `[begin, end)` each (`begin` 0: a free place). Atomics with
/// constant initialization: the signal handler reads them, never a lock or an allocation.
struct BusFaultRanges {
  std::array<std::atomic<bool>, bus_fault_places> taken{};
  std::array<std::atomic<std::uintptr_t>, bus_fault_places> begin{};
  std::array<std::atomic<std::uintptr_t>, bus_fault_places> end{};
  std::atomic<std::uintptr_t> page{4096};
  std::atomic<std::size_t> absorbed{0};  ///< Faults turned into pages of zeros, for tests.
  struct ::sigaction previous {};        ///< The handler before ours, written once.
};

inline BusFaultRanges bus_fault_ranges{};

// The handler: a page of zeros over a fault in a registered mapping, else the previous one.
inline void absorb_bus_fault(int signal, ::siginfo_t* info, void* context) {
  BusFaultRanges& ranges = bus_fault_ranges;
  const auto address = reinterpret_cast<std::uintptr_t>(info->si_addr);  // NOLINT: an address
  for (std::size_t place = 0; place < bus_fault_places; ++place) {
    const std::uintptr_t begin = ranges.begin[place].load(std::memory_order_acquire);
    if (begin == 0 || address < begin || address >= ranges.end[place].load()) continue;
    const std::uintptr_t page = ranges.page.load();
    void* at = reinterpret_cast<void*>(address & ~(page - 1));  // NOLINT: the faulting page
    if (::mmap(at, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != MAP_FAILED) {
      ranges.absorbed.fetch_add(1);
      return;  // the read runs again, on zeros
    }
    break;
  }
  const struct ::sigaction& previous = ranges.previous;
  if ((previous.sa_flags & SA_SIGINFO) != 0 && previous.sa_sigaction != nullptr) {
    previous.sa_sigaction(signal, info, context);
  } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(signal);
  } else {
    // As if we were never here: the faulting read runs again and the default action ends the
    // process (a SIGBUS that is ignored would fault forever).
    struct ::sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    ::sigemptyset(&fallback.sa_mask);
    ::sigaction(signal, &fallback, nullptr);
  }
}

/// @brief Installs the handler, once per process; the handler before it is kept for faults
/// that are not ours. False when the system refused it.
inline bool install_bus_fault_handler() noexcept {
  static const bool installed = [] {
    bus_fault_ranges.page.store(static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)));
    struct ::sigaction action {};
    action.sa_sigaction = &absorb_bus_fault;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    ::sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, &bus_fault_ranges.previous) == 0;
  }();
  return installed;
}

/// @brief Lets SIGBUS reach the calling thread for good: a thread the library starts to read
/// mappings must not inherit a mask that blocks it (a fault while it is blocked kills the
/// process, whatever the handler).
inline void deliver_bus_faults() noexcept {
  ::sigset_t bus;
  ::sigemptyset(&bus);
  ::sigaddset(&bus, SIGBUS);
  (void)::pthread_sigmask(SIG_UNBLOCK, &bus, nullptr);
}

/// @brief Lets SIGBUS reach the calling thread while it lives, as `deliver_bus_faults` does,
/// and puts back a mask that blocked it when it goes: a caller's thread that blocks every
/// signal (for `sigwait`) reads mappings inside such a scope.
class BusFaultsDelivered {
 public:
  BusFaultsDelivered() noexcept {
    ::sigset_t bus;
    ::sigemptyset(&bus);
    ::sigaddset(&bus, SIGBUS);
    blocked_ = ::pthread_sigmask(SIG_UNBLOCK, &bus, &previous_) == 0 &&
               ::sigismember(&previous_, SIGBUS) == 1;
  }
  BusFaultsDelivered(const BusFaultsDelivered&) = delete;
  BusFaultsDelivered& operator=(const BusFaultsDelivered&) = delete;
  ~BusFaultsDelivered() {
    if (blocked_) (void)::pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }

 private:
  ::sigset_t previous_{};
  bool blocked_ = false;
};

/// @brief `[data, data + bytes)`, a file mapping whose faults become pages of zeros while the
/// registration lives (see above). Not copyable; the mapping must outlive it.
class BusFaultRegistration {
 public:
  BusFaultRegistration() = default;
  /// Registers the range; `registered()` is false when the handler or a place could not be had.
  BusFaultRegistration(const void* data, std::size_t bytes) noexcept {
    if (bytes == 0 || !install_bus_fault_handler()) return;
    BusFaultRanges& ranges = bus_fault_ranges;
    for (std::size_t place = 0; place < bus_fault_places; ++place) {
      if (ranges.taken[place].exchange(true)) continue;
      const auto begin = reinterpret_cast<std::uintptr_t>(data);  // NOLINT: an address
      ranges.end[place].store(begin + bytes);
      ranges.begin[place].store(begin, std::memory_order_release);
      place_ = place;
      return;
    }
  }
  BusFaultRegistration(const BusFaultRegistration&) = delete;
  BusFaultRegistration& operator=(const BusFaultRegistration&) = delete;
  ~BusFaultRegistration() {
    if (!registered()) return;
    BusFaultRanges& ranges = bus_fault_ranges;
    ranges.begin[place_].store(0, std::memory_order_release);
    ranges.end[place_].store(0);
    ranges.taken[place_].store(false);
  }

  [[nodiscard]] bool registered() const noexcept { return place_ != bus_fault_places; }

 private:
  std::size_t place_ = bus_fault_places;
};

}  // namespace resident::detail
