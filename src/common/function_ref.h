// FunctionRef: a non-owning, non-allocating reference to a callable.
//
// Used on the pick path (eligibility predicates) where std::function could allocate.
// The referenced callable must outlive every call through the FunctionRef.
//
//   bool is_ok(size_t i);
//   FunctionRef<bool(size_t)> f = [&](size_t i) { return i != 3; };
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

namespace rolter {

template <typename Signature>
class FunctionRef;

template <typename R, typename... Args>
class FunctionRef<R(Args...)> {
 public:
  template <typename F, typename = std::enable_if_t<
                            !std::is_same_v<std::remove_cvref_t<F>, FunctionRef> &&
                            std::is_invocable_r_v<R, F&, Args...>>>
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): cheap view, like string_view
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(object))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace rolter
