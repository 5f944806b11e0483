// A test rig for accel/: a simulator, a fair-share solver and a ChipModel for `chips` chips
// (optionally under a software stack, with a CoreLedger the test holds SMs in); ops are added to
// `graph` and run by Run(). Shared by chip_model_test.cc and chip_stack_test.cc.
#ifndef MESHSIM_TESTS_ACCEL_CHIP_RIG_H_
#define MESHSIM_TESTS_ACCEL_CHIP_RIG_H_

#include <initializer_list>
#include <memory>
#include <vector>

#include "accel/chip_model.h"
#include "core/core_ledger.h"
#include "core/executor.h"
#include "core/fair_share.h"
#include "core/op_graph.h"
#include "core/simulator.h"
#include "gtest/gtest.h"
#include "stack/stack_config.h"

namespace meshsim::accel {

struct Rig {
  explicit Rig(const ChipConfig& c, int chips = 1)
      : config(c), fs(sim), model(fs, config, chips), ledger(chips) {}
  // Under `stack`; with_ledger: communication SMs are held in `ledger`.
  Rig(const ChipConfig& c, const stack::StackConfig& stack, bool with_ledger = false) : Rig(c) {
    model.set_stack(stack, with_ledger ? &ledger : nullptr);
  }

  core::OpId Add(const core::Op& op, std::initializer_list<core::OpId> deps = {}) {
    return graph.Add(op, deps);
  }
  void Run() {
    exec = std::make_unique<core::Executor>(sim, graph);
    for (core::OpKind kind : {core::OpKind::kGemm, core::OpKind::kCopy, core::OpKind::kVector}) {
      exec->SetRunner(kind, &model);
    }
    const absl::Status s = exec->Run();
    ASSERT_TRUE(s.ok()) << s;
  }
  std::vector<core::TimelineRow> RowsOf(core::OpId id) const {
    std::vector<core::TimelineRow> rows;
    for (const core::TimelineRow& r : exec->timeline()) {
      if (r.op == id) rows.push_back(r);
    }
    return rows;
  }
  std::vector<core::TimelineRow> Rows(core::Phase phase) const {
    std::vector<core::TimelineRow> rows;
    for (const core::TimelineRow& r : exec->timeline()) {
      if (r.phase == phase) rows.push_back(r);
    }
    return rows;
  }
  double Flops() const {  // Σ flops of the op rows.
    double f = 0;
    for (const core::TimelineRow& r : exec->timeline()) {
      f += r.phase == core::Phase::kOp ? r.flops : 0;
    }
    return f;
  }
  core::Time Duration(core::OpId id) const { return exec->end_time(id) - exec->start_time(id); }

  ChipConfig config;
  core::Simulator sim;
  core::FairShare fs;
  ChipModel model;
  core::CoreLedger ledger;
  core::OpGraph graph;
  std::unique_ptr<core::Executor> exec;
};

}  // namespace meshsim::accel

#endif  // MESHSIM_TESTS_ACCEL_CHIP_RIG_H_
