// How deeply a JSON text nests, checked before it is parsed: nlohmann's parser, dump() and copies
// recurse, so a body of a hundred thousand '[' would overflow the stack of whoever touches it.
//
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <string_view>

namespace rolter {

// True when no array or object in `text` nests deeper than `limit`. Brackets inside strings do not
// count. The scan does not validate: on text that is not JSON the answer is meaningless, and the
// parser rejects that text anyway.
bool json_depth_within(std::string_view text, size_t limit);

}  // namespace rolter
