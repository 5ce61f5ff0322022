#include "common/shared_library.h"

#include <dlfcn.h>

namespace rolter {

tl::expected<SharedLibrary, std::string> SharedLibrary::open(const char* soname) {
  // RTLD_LOCAL: its symbols serve only the lookups made through this handle.
  void* handle = ::dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = ::dlerror();
    return tl::unexpected("cannot load " + std::string(soname) + ": " +
                          (why != nullptr ? why : "unknown error"));
  }
  return SharedLibrary(handle, soname);
}

void* SharedLibrary::raw_symbol(const char* name) const { return ::dlsym(handle_, name); }

}  // namespace rolter
