// Min-max scoring of a measured cost, lower is better: shared by the scorers that rank a number
// the gateway learned or was told (predicted latency, latency EWMA, catalog price).
//
// The rule, over the eligible candidates whose cost is known:
//   - fewer than 2 known: every candidate scores 0, so the stack's other scorers (least load)
//     decide; one number has nothing to be compared with;
//   - otherwise the cheapest scores 1 and the rest, by Scale:
//       kMinMax: the dearest 0, the rest linearly between (all equal: all 1);
//       kRatioToBest: (cheapest + 1) / (cost + 1), so a cost 5% above the cheapest scores about
//       0.95 and a near-tie stays a near-tie, for the stack's least-load scorer to settle.
//       `fastest` ranks with it: min-max would turn 300 against 310 ms into 1 against 0 and send
//       every request to whichever engine measured a few ms better (SPEC §6.16);
//   - an eligible candidate whose cost is unknown scores the mean of the known scores: it is
//     neither favoured nor penalised against the known ones as a group (a new instance is
//     unknown, not slow), while a known candidate better than average still beats it.
// This is the min-max of SPEC §6.10 (adaptive); the unknown rule differs from adaptive's fixed 0.5
// so that an unknown candidate sits at the known ones' average even when they bunch at one end.
//
// Thread-safety: a pure function. No allocation.
#pragma once

#include <span>

#include "balance/load_balancer.h"

namespace rolter {

enum class Scale { kMinMax, kRatioToBest };

// On entry values[i] is candidate i's cost, NaN (or any non-finite value) when unknown; on return
// it is candidate i's score in [0, 1]. Ineligible candidates score 0 and never shape the range.
void score_lower_is_better(std::span<double> values, Eligible eligible,
                           Scale scale = Scale::kMinMax);

}  // namespace rolter
