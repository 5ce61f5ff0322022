// Prefill/decode splits for a disaggregated replay (SPEC §18): `--pd P:D` gives P prefill and D
// decode engines out of the fleet's P + D; `--pd 2:6,3:5` asks for one disaggregated run per split.
//
//   auto splits = parse_pd_list("2:6,3:5", /*engines=*/8);
//   if (!splits) die(splits.error());
//   pd_label((*splits)[0], "cache_aware");  // "pd 2:6 (cache_aware/least load)"
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace rolter::bench {

struct PdSplit {
  size_t prefill = 0;  // engines 0 .. prefill-1
  size_t decode = 0;   // engines prefill .. prefill+decode-1

  bool operator==(const PdSplit&) const = default;
};

// Parses "P:D[,P:D...]". Every split needs P >= 1, D >= 1 and P + D == engines; a split may not
// repeat. An empty text is no split at all.
tl::expected<std::vector<PdSplit>, std::string> parse_pd_list(std::string_view text,
                                                              size_t engines);

// The report's label of a disaggregated run: the prefill strategy, then the decode stage's
// (least load, the disaggregated route's default), e.g. "pd 2:6 (cache_aware/least load)".
std::string pd_label(const PdSplit& split, std::string_view prefill_strategy);

}  // namespace rolter::bench
