// The `chain` smoke workload: a wavefront of fixed delays over a ring of chips.
//
// It needs no machine model, so it exercises the whole path — graph, executor, timeline, HDF5,
// Chrome trace, reports — on any system. Step j on chip c runs for `step` and depends on step
// j−1 on chip c and on step j−1 on chip c−1 (mod chips), so the steps form a wave with
// cross-chip dependencies. Closed form: makespan = steps · step (every chip runs in lock-step).
//
// Example:
//   core::OpGraph g;
//   MESHSIM_RETURN_IF_ERROR(BuildChain({.chips = 4, .steps = 3}, g));
#ifndef MESHSIM_ALGORITHMS_SMOKE_H_
#define MESHSIM_ALGORITHMS_SMOKE_H_

#include "absl/status/status.h"
#include "core/op_graph.h"
#include "core/time.h"

namespace meshsim::algorithms {

struct ChainOptions {
  int chips = 4;                                   // >= 1
  int steps = 8;                                   // >= 1
  core::Time step = core::Time::Microseconds(10);  // > 0
};

// Appends the chain to `graph`. InvalidArgument if an option is out of range.
absl::Status BuildChain(const ChainOptions& options, core::OpGraph& graph);

}  // namespace meshsim::algorithms

#endif  // MESHSIM_ALGORITHMS_SMOKE_H_
