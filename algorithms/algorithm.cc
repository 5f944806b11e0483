#include "algorithms/algorithm.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace meshsim::algorithms {

const char* ToString(Dataflow d) {
  switch (d) {
    case Dataflow::kOS:
      return "os";
    case Dataflow::kLS:
      return "ls";
    case Dataflow::kRS:
      return "rs";
  }
  return "?";
}

std::vector<core::OpId> LoweringContext::After(core::ChipId chip) const {
  const uint32_t c = chip.value();
  if (c < frontier.size() && frontier[c].valid()) return {frontier[c]};
  return {};
}

void LoweringContext::SetFrontier(core::ChipId chip, core::OpId op) {
  if (chip.value() >= frontier.size()) frontier.resize(size_t{chip.value()} + 1);
  frontier[chip.value()] = op;
}

namespace {

std::vector<core::OpId> FrontierOf(const std::vector<core::OpId>& frontier,
                                   const std::vector<core::ChipId>& members) {
  std::vector<core::OpId> deps;
  for (core::ChipId c : members) {
    if (c.value() < frontier.size() && frontier[c.value()].valid()) {
      deps.push_back(frontier[c.value()]);
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  return deps;
}

}  // namespace

std::vector<core::OpId> LoweringContext::After(const std::vector<core::ChipId>& members) const {
  return FrontierOf(frontier, members);
}

std::vector<core::OpId> LoweringContext::AfterPrior(
    const std::vector<core::ChipId>& members) const {
  return FrontierOf(prior_frontier, members);
}

void LoweringContext::NextProblem(std::vector<core::OpId>& start) {
  for (size_t c = 0; c < start.size() && c < compute_ready.size(); ++c) {
    if (compute_ready[c].valid()) start[c] = compute_ready[c];
  }
  prior_frontier = std::move(start);
  compute_ready.assign(frontier.size(), core::OpId());
  start = frontier;
}

core::OpId LoweringContext::Join(core::ChipId chip, const std::vector<core::OpId>& deps,
                                 const GemmProblem& p) {
  core::Op join = core::Op::Delay(chip, core::Time::Zero());
  Tag(join, p, "join");
  return graph.Add(join, deps);
}

void LoweringContext::Tag(core::Op& op, const GemmProblem& p, const std::string& what, int slice) {
  op.tags.name = graph.Intern(p.label.empty() ? what : absl::StrCat(p.label, ".", what));
  op.tags.layer = p.layer.index;
  op.tags.pass = p.pass;
  op.tags.slice = slice;
}

core::ParamSpec SlicesParam(std::string description) {
  return {.key = "slices",
          .type = core::ParamType::kInt,
          .description = std::move(description),
          .default_value = "auto",
          .min = 1,
          .max = 4096};
}

core::ParamSpec DataflowParam(std::string description) {
  return {.key = "dataflow",
          .type = core::ParamType::kEnum,
          .description = std::move(description),
          .default_value = "auto",
          .choices = {"os", "ls", "rs"}};
}

}  // namespace meshsim::algorithms
