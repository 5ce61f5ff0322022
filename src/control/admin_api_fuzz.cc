// libFuzzer target: arbitrary requests to the admin and internal API, over a real control plane
// on an in-memory SQLite store. Input: the first line is "METHOD TARGET", the second the
// Authorization header, the rest the body. Every input must get an answer with a status: no
// crash, no escaped exception, no sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "control/admin_api.h"
#include "control/control_plane.h"
#include "store/store.h"

namespace {

std::string_view next_line(std::string_view& text) {
  const auto end = text.find('\n');
  const std::string_view line = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string_view first = next_line(input);
  const std::string_view authorization = next_line(input);
  const auto space = first.find(' ');
  const std::string_view method = first.substr(0, space);
  const std::string_view target = space == std::string_view::npos ? "/" : first.substr(space + 1);

  auto store = rolter::Store::open("sqlite::memory:");
  if (!store) __builtin_trap();
  rolter::ControlPlane control(rolter::ControlPlane::Options{
      .store = store->get(),
      .admin_token = "fuzz-admin",
      .node_token = "fuzz-node",
      .now_ms = [] { return int64_t{1700000000000}; },
  });
  if (!control.start().empty()) __builtin_trap();
  rolter::AdminApi api(control, nullptr);
  const rolter::ControlRequest request{
      .method = method,
      .target = target,
      .authorization = authorization,
      .header = [](std::string_view name) -> std::string_view {
        return name == "x-rolter-node-id" ? "fuzz-node-1" : "";
      },
      .body = input,
  };
  const rolter::ControlResponse response = api.handle(request);
  if (response.status < 100 || response.status > 599) __builtin_trap();
  return 0;
}
