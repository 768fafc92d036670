// SPDX-FileCopyrightText: 2026 The resident authors
// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <memory>
#include <utility>

namespace resident::detail {

template <class Signature>
class FunctionRef;

/// @brief A non-owning reference to a callable, called as `R(Args...)`: what a thread team
/// hands its threads instead of a `std::function` (no allocation, one indirect call). The
/// callable must outlive every call through the reference.
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef() = default;

  /// Refers to `function` (a const callable stays const: it is called through its own type).
  template <class Function>
  explicit FunctionRef(Function& function) noexcept
      : object_(const_cast<void*>(  // NOLINT(cppcoreguidelines-pro-type-const-cast): restored
            static_cast<const void*>(std::addressof(function)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<Function*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

}  // namespace resident::detail
