// SharedLibrary: a system library opened when first needed (dlopen(3)) rather than linked.
//
// A library that only some deployments use (libpq for a PostgreSQL store, libsystemd under a
// service manager) costs every process that links it: the loader maps it and everything it
// pulls in, and relocates them, before main(). libpq brings GnuTLS, LDAP and SASL with it,
// about 3 MB of resident memory in a gateway that never speaks to PostgreSQL. Opened here, it is
// mapped by the processes that use it, at their first use.
//
//   auto lib = SharedLibrary::open("libpq.so.5");
//   if (!lib) return error(lib.error());     // "cannot load libpq.so.5: <dlerror>"
//   auto* connect = lib->symbol<decltype(::PQconnectdb)>("PQconnectdb");
//
// A library opened here stays for the life of the process (never dlclose'd: libraries register
// handlers and thread-local state that must not vanish), so symbols stay valid.
//
// Thread-safety: open() and symbol() may be called from any thread (the dynamic loader locks).
#pragma once

#include <string>

#include <tl/expected.hpp>

namespace rolter {

class SharedLibrary {
 public:
  // Opens `soname` (a versioned name such as "libpq.so.5": the ABI the headers were written for).
  static tl::expected<SharedLibrary, std::string> open(const char* soname);

  // The symbol `name` as an F* (F a function type); nullptr when the library has none.
  template <class F>
  F* symbol(const char* name) const {
    return reinterpret_cast<F*>(raw_symbol(name));
  }

  const std::string& soname() const { return soname_; }

 private:
  SharedLibrary(void* handle, std::string soname) : handle_(handle), soname_(std::move(soname)) {}
  void* raw_symbol(const char* name) const;

  void* handle_;
  std::string soname_;
};

}  // namespace rolter
