#include "core/fair_share.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace meshsim::core {
namespace {

// 1 GB/s = 1 byte per ns, which keeps the closed forms below readable.
constexpr double kGBps = 1e9;

ResourceInfo Res(double capacity) {
  ResourceInfo info;
  info.name = "r";
  info.capacity_bytes_per_s = capacity;
  return info;
}

// Textbook progressive filling over every resource at once (the definition in the header):
// raise all unfrozen flows together; at level s* freeze the flows of every resource whose
// share reaches s*, and every flow whose cap does.
std::vector<double> ReferenceMaxMin(const std::vector<double>& capacity,
                                    const std::vector<std::vector<int>>& routes,
                                    const std::vector<double>& caps) {
  const size_t nf = routes.size();
  std::vector<double> rate(nf, 0);
  std::vector<bool> frozen(nf, false);
  const auto on = [&](size_t f, size_t r) {
    return std::find(routes[f].begin(), routes[f].end(), int(r)) != routes[f].end();
  };
  // Resource r's share of what its frozen flows leave; infinite when it has no unfrozen flow.
  const auto share = [&](size_t r) {
    double used = 0;
    int n = 0;
    for (size_t f = 0; f < nf; ++f) {
      if (!on(f, r)) continue;
      if (frozen[f]) {
        used += rate[f];
      } else {
        ++n;
      }
    }
    return n == 0 ? std::numeric_limits<double>::infinity() : (capacity[r] - used) / n;
  };
  size_t left = nf;
  while (left > 0) {
    double level = std::numeric_limits<double>::infinity();
    for (size_t r = 0; r < capacity.size(); ++r) level = std::min(level, share(r));
    for (size_t f = 0; f < nf; ++f) {
      if (!frozen[f]) level = std::min(level, caps[f]);
    }
    // Freeze whatever is at the level (within rounding).
    std::vector<bool> at_level(nf, false);
    for (size_t f = 0; f < nf; ++f) at_level[f] = !frozen[f] && caps[f] <= level * (1 + 1e-12);
    for (size_t r = 0; r < capacity.size(); ++r) {
      if (share(r) > level * (1 + 1e-12)) continue;
      for (size_t f = 0; f < nf; ++f) at_level[f] = at_level[f] || (!frozen[f] && on(f, r));
    }
    for (size_t f = 0; f < nf; ++f) {
      if (!at_level[f]) continue;
      frozen[f] = true;
      rate[f] = level;
      --left;
    }
  }
  return rate;
}

// Random machines of links and HBMs, flows over 1–3 resources (local HBM flows among them,
// some capped), started and finishing at random times: after every batch the solver's rates
// equal the textbook allocation over all active flows (relative 1e-9), whatever the solver
// leaves out of its fills (non-binding and decoupled resources, unchanged parts).
TEST(FairShareTest, RandomScenariosMatchTextbookProgressiveFilling) {
  std::mt19937_64 rng(12345);
  for (int scenario = 0; scenario < 200; ++scenario) {
    Simulator sim;
    FairShare fs(sim);
    const int hbms = 2 + static_cast<int>(rng() % 4), links = 2 + static_cast<int>(rng() % 6);
    std::vector<double> capacity;
    for (int i = 0; i < hbms; ++i) capacity.push_back((rng() % 2 ? 1200 : 100) * kGBps);
    for (int i = 0; i < links; ++i) capacity.push_back((rng() % 2 ? 30 : 50) * kGBps);
    std::vector<ResourceId> ids;
    for (double c : capacity) ids.push_back(fs.AddResource(Res(c)));
    std::vector<FlowId> flow_ids;  // Ids are reused once a flow is done: `done` tells.
    std::vector<char> done;
    std::vector<std::vector<int>> routes;
    std::vector<double> caps;
    for (int batch = 0; batch < 6; ++batch) {
      const int n = 1 + static_cast<int>(rng() % 6);
      for (int k = 0; k < n; ++k) {
        std::vector<int> route;
        const int a = static_cast<int>(rng() % hbms);
        route.push_back(a);
        if (rng() % 3 != 0) {  // A transfer: HBM, a link or two, maybe another HBM.
          route.push_back(hbms + static_cast<int>(rng() % links));
          const int l2 = hbms + static_cast<int>(rng() % links);
          if (rng() % 2 && l2 != route.back()) route.push_back(l2);
          const int b = static_cast<int>(rng() % hbms);
          if (b != a) route.push_back(b);
        }
        const double cap = rng() % 4 == 0 ? (5 + rng() % 100) * kGBps : FairShare::kNoCap;
        std::vector<ResourceId> r;
        for (int i : route) r.push_back(ids[i]);
        // Sizes from 10 KB to 10 MB: some finish between batches, most stay.
        const double bytes = std::pow(10.0, 4 + static_cast<double>(rng() % 4));
        const size_t index = done.size();
        done.push_back(0);
        flow_ids.push_back(fs.StartFlow(
            bytes, r, [&done, index] { done[index] = 1; }, cap));
        routes.push_back(route);
        caps.push_back(cap);
      }
      sim.RunUntil(sim.Now() + Time::Microseconds(static_cast<int64_t>(1 + rng() % 40)));
      std::vector<std::vector<int>> active_routes;
      std::vector<double> active_caps;
      std::vector<FlowId> active;
      for (size_t f = 0; f < flow_ids.size(); ++f) {
        if (done[f]) continue;
        active.push_back(flow_ids[f]);
        active_routes.push_back(routes[f]);
        active_caps.push_back(caps[f]);
      }
      const std::vector<double> expected = ReferenceMaxMin(capacity, active_routes, active_caps);
      for (size_t f = 0; f < active.size(); ++f) {
        ASSERT_NEAR(fs.Rate(active[f]), expected[f], 1e-9 * expected[f])
            << "scenario " << scenario << " batch " << batch << " flow " << f;
      }
      // Every resource's load is the sum of its flows' rates.
      for (size_t r = 0; r < capacity.size(); ++r) {
        double sum = 0;
        for (size_t f = 0; f < active.size(); ++f) {
          const auto& route = active_routes[f];
          if (std::find(route.begin(), route.end(), int(r)) != route.end()) sum += expected[f];
        }
        ASSERT_NEAR(fs.Load(ids[r]), sum, 1e-9 * capacity[r]) << "scenario " << scenario;
      }
    }
  }
}

// Fat-tree-like machines: pods of hosts with an HBM and an up and a down link to their edge
// switch, edge switches joined through a few shared core links per pod (so a pod's transfers
// are one big binding part, whose re-fills replay their recorded fills), a spine link between
// pods that a few transfers cross (joining two pods' parts), local HBM flows (some capped) and
// capped transfers, started in bursts like ring steps or one by one, finishing in between.
// Two solvers run the same scenario, one re-filling every changed part from scratch: rates,
// loads and completion times are bit-identical, and both match textbook progressive filling.
TEST(FairShareTest, FatTreeScenariosReuseFillsBitForBit) {
  std::mt19937_64 rng(2024);
  for (int scenario = 0; scenario < 60; ++scenario) {
    const int pods = 1 + static_cast<int>(rng() % 2), per_edge = 2 + static_cast<int>(rng() % 3);
    const int hosts = pods * (6 + static_cast<int>(rng() % 12));
    const int edges = (hosts + per_edge - 1) / per_edge, cores = 1 + static_cast<int>(rng() % 3);
    const auto pod = [&](int host) { return host / per_edge * pods / edges; };
    std::vector<double> capacity;
    // Capacities off round numbers, so that the order of subtractions shows in the last bits.
    const auto add = [&](double c) {
      capacity.push_back(c * (1 + static_cast<double>(rng() % 1000) * 1e-4 / 3));
      return static_cast<int>(capacity.size() - 1);
    };
    std::vector<int> hbm, up, down, edge_up, edge_down;  // edge_up[e * cores + c]
    for (int h = 0; h < hosts; ++h) {
      hbm.push_back(add((rng() % 3 == 0 ? 60 : 1200) * kGBps));
      up.push_back(add(30 * kGBps));
      down.push_back(add(30 * kGBps));
    }
    const double fabric = (rng() % 2 ? 30 : 15) * kGBps;
    for (int i = 0; i < edges * cores; ++i) {
      edge_up.push_back(add(fabric));
      edge_down.push_back(add(fabric));
    }
    const int spine = add(fabric);
    struct Run {
      Simulator sim;
      FairShare fs{sim};
      std::vector<ResourceId> ids;
      std::vector<FlowId> flow_ids;
      std::vector<std::pair<int64_t, int>> completions;  // (ps, flow)
      std::vector<char> done;
    };
    Run runs[2];
    runs[1].fs.set_reuse_fills(false);
    for (Run& run : runs) {
      for (double c : capacity) run.ids.push_back(run.fs.AddResource(Res(c)));
    }
    std::vector<std::vector<int>> routes;
    std::vector<double> caps;
    for (int burst = 0; burst < 24; ++burst) {
      const int n = rng() % 2 ? 1 : 1 + static_cast<int>(rng() % (2 * hosts));
      for (int k = 0; k < n; ++k) {
        const int a = static_cast<int>(rng() % hosts);
        std::vector<int> route = {hbm[a]};
        if (rng() % 5 != 0) {  // A transfer to another host, over the core if off the edge.
          int b = (a + 1 + static_cast<int>(rng() % (hosts - 1))) % hosts;
          if (pod(b) != pod(a) && rng() % 8 != 0) {  // Mostly within the pod.
            std::vector<int> same;
            for (int h = 0; h < hosts; ++h) {
              if (h != a && pod(h) == pod(a)) same.push_back(h);
            }
            if (!same.empty()) b = same[rng() % same.size()];
          }
          route.push_back(up[a]);
          if (a / per_edge != b / per_edge) {
            const int c = static_cast<int>(rng() % cores);
            route.push_back(edge_up[a / per_edge * cores + c]);
            if (pod(a) != pod(b)) route.push_back(spine);
            route.push_back(edge_down[b / per_edge * cores + c]);
          }
          route.push_back(down[b]);
          route.push_back(hbm[b]);
        }
        const double cap = rng() % 4 == 0 ? (1 + static_cast<double>(rng() % 4000) / 97) * kGBps
                                          : FairShare::kNoCap;
        const double bytes = std::pow(10.0, 4 + static_cast<double>(rng() % 3)) * (1 + rng() % 4);
        for (Run& run : runs) {
          std::vector<ResourceId> r;
          for (int i : route) r.push_back(run.ids[i]);
          const int index = static_cast<int>(run.done.size());
          run.done.push_back(0);
          Run* p = &run;
          run.flow_ids.push_back(run.fs.StartFlow(
              bytes, r,
              [p, index] {
                p->done[index] = 1;
                p->completions.push_back({p->sim.Now().ps(), index});
              },
              cap));
        }
        routes.push_back(route);
        caps.push_back(cap);
      }
      const Time until = runs[0].sim.Now() + Time::Nanoseconds(static_cast<int64_t>(rng() % 3000));
      for (Run& run : runs) run.sim.RunUntil(until);
      ASSERT_EQ(runs[0].completions, runs[1].completions) << "scenario " << scenario;
      std::vector<std::vector<int>> active_routes;
      std::vector<double> active_caps;
      std::vector<size_t> active;
      for (size_t f = 0; f < routes.size(); ++f) {
        if (runs[0].done[f]) continue;
        active.push_back(f);
        active_routes.push_back(routes[f]);
        active_caps.push_back(caps[f]);
      }
      const std::vector<double> expected = ReferenceMaxMin(capacity, active_routes, active_caps);
      for (size_t k = 0; k < active.size(); ++k) {
        const double rate = runs[0].fs.Rate(runs[0].flow_ids[active[k]]);
        ASSERT_EQ(rate, runs[1].fs.Rate(runs[1].flow_ids[active[k]]))
            << "scenario " << scenario << " burst " << burst << " flow " << active[k];
        ASSERT_NEAR(rate, expected[k], 1e-9 * expected[k]) << "scenario " << scenario;
      }
      for (size_t r = 0; r < capacity.size(); ++r) {
        ASSERT_EQ(runs[0].fs.Load(runs[0].ids[r]), runs[1].fs.Load(runs[1].ids[r]))
            << "scenario " << scenario << " resource " << r;
      }
    }
    for (Run& run : runs) run.sim.Run();
    EXPECT_EQ(runs[0].completions, runs[1].completions) << "scenario " << scenario;
    // The scenarios exercise the replay: most re-fills reuse a recorded fill's first steps.
    EXPECT_LT(runs[0].fs.flows_refilled(), runs[1].fs.flows_refilled()) << "scenario " << scenario;
  }
}

// Batched completions (header notes): the completions one solve schedules for one instant run
// as one event, in the order their own events would have run, and a completion that moves
// leaves its batch. 8 flows of 1 MB on 8 resources of 1 GB/s all end at 1 ms: one solve and one
// batch, completed in start order. Started together with them, a 9th flow on resource 0 halves
// flow 0's rate: flow 0 then ends at 2 ms (1 MB at 0.5 GB/s) and the 9th with it, while flows
// 1–7 keep their batch at 1 ms.
TEST(FairShareTest, CompletionsOfOneInstantRunAsOneEventInStartOrder) {
  for (bool ninth : {false, true}) {
    Simulator sim;
    FairShare fs(sim);
    std::vector<ResourceId> r;
    for (int k = 0; k < 8; ++k) r.push_back(fs.AddResource(Res(kGBps)));
    std::vector<std::pair<int, int64_t>> done;  // (flow, ps)
    for (int k = 0; k < 8; ++k) {
      fs.StartFlow(1e6, {r[k]}, [&, k] { done.push_back({k, sim.Now().ps()}); });
    }
    if (ninth) fs.StartFlow(1e6, {r[0]}, [&] { done.push_back({8, sim.Now().ps()}); });
    sim.Run();
    std::vector<std::pair<int, int64_t>> want;
    for (int k = ninth ? 1 : 0; k < 8; ++k) want.push_back({k, 1'000'000'000});
    if (ninth) {
      want.push_back({0, 2'000'000'000});
      want.push_back({8, 2'000'000'000});
    }
    EXPECT_EQ(done, want) << ninth;
    // Per instant: a solve, then one event for its completions (flow by flow they would be 8, or
    // 7 and 2, events); a last solve after the last ones.
    EXPECT_EQ(fs.solves(), ninth ? 3u : 2u) << ninth;
    EXPECT_EQ(sim.events_executed(), ninth ? 5u : 3u) << ninth;
  }
}

// A solve reschedules the flows whose rates changed in the order they started, whatever their
// slots (a finished flow's slot is reused): "Solving by parts" in the header. A, B, D and F
// (1000, 3000, 1e6 and 1e6 bytes) cross L1 and L2 (1 GB/s) at 0.25 GB/s each; A ends at 4 us,
// and its callback starts C (2000 bytes, in A's slot 0) and E (1e6): five flows at 0.2 GB/s. B
// (2000 left) and C both end at 4 + 2000 / 0.2e9 s = 14 us, B first: it started first, although
// C's slot comes before B's.
TEST(FairShareTest, ChangedFlowsRescheduleInStartOrder) {
  Simulator sim;
  FairShare fs(sim);
  const ResourceId l1 = fs.AddResource(Res(kGBps)), l2 = fs.AddResource(Res(kGBps));
  std::vector<std::pair<char, int64_t>> done;  // (flow, ps)
  const auto note = [&](char name) {
    return [&, name] { done.push_back({name, sim.Now().ps()}); };
  };
  FlowId c;
  const FlowId a = fs.StartFlow(1000, {l1, l2}, [&] {
    note('A')();
    c = fs.StartFlow(2000, {l1, l2}, note('C'));
    fs.StartFlow(1e6, {l1, l2}, note('E'));
  });
  const FlowId b = fs.StartFlow(3000, {l1, l2}, note('B'));
  fs.StartFlow(1e6, {l1, l2}, note('D'));
  fs.StartFlow(1e6, {l1, l2}, note('F'));
  sim.RunUntil(Time::Microseconds(5));
  ASSERT_EQ(c.value(), a.value());  // C took A's slot, before B's.
  ASSERT_LT(c.value(), b.value());
  sim.Run();
  ASSERT_GE(done.size(), 3u);
  EXPECT_EQ(done[0], std::make_pair('A', int64_t{4'000'000}));
  EXPECT_EQ(done[1], std::make_pair('B', int64_t{14'000'000}));
  EXPECT_EQ(done[2], std::make_pair('C', int64_t{14'000'000}));
}

TEST(FairShareTest, ReplayStopsAtAResourceWhoseRecordedFlowsAllCompleted) {
  // f1..f16 share L (16) and are recorded with k (over G and L) and g (over G, Z, H2): G (0.5)
  // pops first. b (capped, over the non-binding H2 and H, which f1 crosses too) keeps them in
  // one component. k finishes: f1..f16 and g are re-filled and recorded again, g first (G
  // alone: 0.5). g finishes: only b's part is re-filled (g's resources carry no recorded flow),
  // so the recording stays. n (over G and W) takes g's slot in a solve of its own; then m over
  // W and H re-fills f1..f16 through H. The recording's first step, G's pop freezing g, must
  // not be replayed (G changed since): n and m split W (0.6): 0.3 each. (e, started first over
  // the non-binding H3, keeps the first fill from being one of the whole component.)
  Simulator sim;
  FairShare fs(sim);
  const ResourceId h3 = fs.AddResource(Res(1000 * kGBps));
  const ResourceId l = fs.AddResource(Res(16 * kGBps)), g_res = fs.AddResource(Res(0.5 * kGBps));
  const ResourceId z = fs.AddResource(Res(100 * kGBps)), h = fs.AddResource(Res(1000 * kGBps));
  const ResourceId h2 = fs.AddResource(Res(1000 * kGBps)), w = fs.AddResource(Res(0.6 * kGBps));
  fs.StartFlow(1e9, {h3, h}, nullptr, 0.1 * kGBps);
  sim.RunUntil(Time::Picoseconds(1));
  std::vector<FlowId> f;
  for (int i = 0; i < 16; ++i) {
    const ResourceId a = fs.AddResource(Res(100 * kGBps));
    f.push_back(i == 0 ? fs.StartFlow(1e9, {l, a, h}, nullptr)
                       : fs.StartFlow(1e9, {l, a}, nullptr));
  }
  const FlowId k = fs.StartFlow(1e3, {g_res, l}, nullptr);
  const FlowId g = fs.StartFlow(1e4, {g_res, z, h2}, nullptr);
  fs.StartFlow(1e9, {h2, h}, nullptr, 0.1 * kGBps);
  sim.RunUntil(Time::Microseconds(100));
  ASSERT_FALSE(fs.IsActive(k));
  ASSERT_FALSE(fs.IsActive(g));
  const FlowId n = fs.StartFlow(1e9, {g_res, w}, nullptr);
  sim.RunUntil(Time::Microseconds(101));
  EXPECT_DOUBLE_EQ(fs.Rate(n), 0.5 * kGBps);
  const FlowId m = fs.StartFlow(1e9, {w, h}, nullptr);
  sim.RunUntil(Time::Microseconds(102));
  EXPECT_DOUBLE_EQ(fs.Rate(n), 0.3 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(m), 0.3 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f[0]), 1 * kGBps);
}

TEST(FairShareTest, ResourceThatCannotBindStillAllocatesExactMaxMin) {
  // An HBM (100) carries transit flows f1 over link L1 (10) and f2 over link L2 (10); f3 also
  // uses L1. Bounds at the HBM: B(f1) = B(f2) = 10, Σ = 20 ≤ 100, so the HBM cannot bind and does
  // not join L1's and L2's flows. Max-min: L1 share 10/2 → x1 = x3 = 5; L2 alone → x2 = 10.
  Simulator sim;
  FairShare fs(sim);
  ResourceId hbm = fs.AddResource(Res(100 * kGBps));
  ResourceId l1 = fs.AddResource(Res(10 * kGBps));
  ResourceId l2 = fs.AddResource(Res(10 * kGBps));
  FlowId f1 = fs.StartFlow(1e6, {l1, hbm}, nullptr);
  FlowId f2 = fs.StartFlow(1e6, {hbm, l2}, nullptr);
  FlowId f3 = fs.StartFlow(1e6, {l1}, nullptr);
  sim.RunUntil(Time::Picoseconds(1));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 10 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Load(hbm), 15 * kGBps);
  // A local flow f4 on the HBM alone is unbounded there: the HBM can bind now. x1..x3 keep
  // their link shares (5, 10, 5 < the HBM's 100/3); f4 gets the HBM's rest: 100 − 5 − 10 = 85.
  FlowId f4 = fs.StartFlow(1e6, {hbm}, nullptr);
  sim.RunUntil(Time::Picoseconds(2));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 10 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f4), 85 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Load(hbm), 100 * kGBps);
  // f4 (1 MB at 85 GB/s) finishes first; the HBM goes back to carrying x1 + x2.
  sim.RunUntil(Time::Microseconds(20));
  EXPECT_FALSE(fs.IsActive(f4));
  EXPECT_DOUBLE_EQ(fs.Load(hbm), 15 * kGBps);
}

TEST(FairShareTest, HbmWhoseTransitBoundsReachItsCapacityStillBinds) {
  // HBM (15) with transit flows over links of 10: Σ bounds = 20 > 15, so the HBM can bind, and
  // does: x1 = x2 = 15/2 = 7.5 < 10.
  Simulator sim;
  FairShare fs(sim);
  ResourceId hbm = fs.AddResource(Res(15 * kGBps));
  ResourceId l1 = fs.AddResource(Res(10 * kGBps));
  ResourceId l2 = fs.AddResource(Res(10 * kGBps));
  FlowId f1 = fs.StartFlow(1e6, {l1, hbm}, nullptr);
  FlowId f2 = fs.StartFlow(1e6, {hbm, l2}, nullptr);
  sim.RunUntil(Time::Picoseconds(1));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 7.5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 7.5 * kGBps);
  // f3 on L1 alone: L1's share 10/2 = 5 is the lowest → x1 = x3 = 5; then the HBM leaves
  // 15 − 5 = 10 to f2, which L2 allows: x2 = 10.
  FlowId f3 = fs.StartFlow(1e6, {l1}, nullptr);
  sim.RunUntil(Time::Picoseconds(2));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 10 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 5 * kGBps);
}

TEST(FairShareTest, OneLinkSharedByKFlowsGivesEachOneKth) {
  for (int k : {1, 2, 3, 7}) {
    Simulator sim;
    FairShare fs(sim);
    ResourceId link = fs.AddResource(Res(kGBps));
    std::vector<Time> done(k);
    std::vector<FlowId> flows;
    for (int i = 0; i < k; ++i) {
      flows.push_back(fs.StartFlow(1000, {link}, [&, i] { done[i] = sim.Now(); }));
    }
    sim.RunUntil(Time::Picoseconds(1));
    // x_f = c / k for each of the k flows.
    for (FlowId f : flows) EXPECT_DOUBLE_EQ(fs.Rate(f), kGBps / k) << "k=" << k;
    sim.Run();
    // All finish together at k·b/c = k·1000 ns.
    for (Time t : done) EXPECT_EQ(t, Time::Nanoseconds(1000 * k)) << "k=" << k;
    EXPECT_EQ(fs.active_flows(), 0u);
  }
}

TEST(FairShareTest, ClassicMaxMinLeavesBottleneckedShareToOthers) {
  // A (10 GB/s) carries flows 1 and 2; B (4 GB/s) carries flows 2 and 3.
  // B is the bottleneck: x2 = x3 = 4/2 = 2 GB/s; flow 1 then gets A's rest: x1 = 10 − 2 = 8.
  Simulator sim;
  FairShare fs(sim);
  ResourceId a = fs.AddResource(Res(10 * kGBps));
  ResourceId b = fs.AddResource(Res(4 * kGBps));
  FlowId f1 = fs.StartFlow(1e6, {a}, nullptr);
  FlowId f2 = fs.StartFlow(1e6, {a, b}, nullptr);
  FlowId f3 = fs.StartFlow(1e6, {b}, nullptr);
  sim.RunUntil(Time::Picoseconds(1));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 8 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 2 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 2 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Load(a), 10 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Load(b), 4 * kGBps);
}

TEST(FairShareTest, ThreeLevelWaterFilling) {
  // L1 (3) carries f1,f2,f3; L2 (10) carries f3,f4. Level 1: L1 share 1 → f1=f2=f3=1.
  // Then L2 has 9 left for f4 alone → f4 = 9. A cap of 0.5 on f1 gives its rest to f2, f3:
  // L1: f1=0.5, f2=f3=(3−0.5)/2=1.25, f4=10−1.25=8.75.
  Simulator sim;
  FairShare fs(sim);
  ResourceId l1 = fs.AddResource(Res(3 * kGBps));
  ResourceId l2 = fs.AddResource(Res(10 * kGBps));
  FlowId f1 = fs.StartFlow(1e6, {l1}, nullptr, 0.5 * kGBps);
  FlowId f2 = fs.StartFlow(1e6, {l1}, nullptr);
  FlowId f3 = fs.StartFlow(1e6, {l1, l2}, nullptr);
  FlowId f4 = fs.StartFlow(1e6, {l2}, nullptr);
  sim.RunUntil(Time::Picoseconds(1));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 0.5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 1.25 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 1.25 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f4), 8.75 * kGBps);
}

TEST(FairShareTest, LoneResourceFreezesCapsBelowItsShareThenSplitsTheRest) {
  // One resource of 10 GB/s with flows over it alone (solved alone, without a part walk).
  // Share 10/3: the cap of 1 is below it → f1 = 1; the share becomes (10 − 1)/2 = 4.5, above
  // f2's cap of 6 → the resource pops: f2 = f3 = 4.5. When f1 (1000 bytes at 1 GB/s) ends at
  // 1 us, f2 and f3 get 5 each, and the resource's load stays 10.
  Simulator sim;
  FairShare fs(sim);
  ResourceId r = fs.AddResource(Res(10 * kGBps));
  FlowId f1 = fs.StartFlow(1000, {r}, nullptr, 1 * kGBps);
  FlowId f2 = fs.StartFlow(1e6, {r}, nullptr, 6 * kGBps);
  FlowId f3 = fs.StartFlow(1e6, {r}, nullptr);
  sim.RunUntil(Time::Picoseconds(1));
  EXPECT_DOUBLE_EQ(fs.Rate(f1), 1 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 4.5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 4.5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Load(r), 10 * kGBps);
  sim.RunUntil(Time::Microseconds(1) + Time::Picoseconds(1));
  EXPECT_FALSE(fs.IsActive(f1));
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Load(r), 10 * kGBps);
  // Crossing flows make it part of a larger component again: the general fill. A second
  // resource of 1 GB/s carries f4 across both: f4 = 1, then r's (10 − 1)/2 = 4.5 for f2, f3.
  ResourceId slow = fs.AddResource(Res(1 * kGBps));
  FlowId f4 = fs.StartFlow(1e6, {r, slow}, nullptr);
  sim.RunUntil(Time::Microseconds(2));
  EXPECT_DOUBLE_EQ(fs.Rate(f4), 1 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f2), 4.5 * kGBps);
  EXPECT_DOUBLE_EQ(fs.Rate(f3), 4.5 * kGBps);
}

TEST(FairShareTest, RateChangesMidFlow) {
  // A: 1000 B alone at 1 B/ns from t=0. At t=500 ns B (250 B) joins: both at 0.5 B/ns.
  // B needs 250/0.5 = 500 ns → ends at 1000 ns. A moved 500 + 250 = 750 B by then; its last
  // 250 B at 1 B/ns take 250 ns → A ends at 1250 ns.
  Simulator sim;
  FairShare fs(sim);
  ResourceId link = fs.AddResource(Res(kGBps));
  Time a_done, b_done;
  fs.StartFlow(1000, {link}, [&] { a_done = sim.Now(); });
  sim.ScheduleAt(Time::Nanoseconds(500),
                 [&] { fs.StartFlow(250, {link}, [&] { b_done = sim.Now(); }); });
  sim.Run();
  EXPECT_EQ(b_done, Time::Nanoseconds(1000));
  EXPECT_EQ(a_done, Time::Nanoseconds(1250));
}

TEST(FairShareTest, DisjointFlowsDoNotInteract) {
  Simulator sim;
  FairShare fs(sim);
  ResourceId l1 = fs.AddResource(Res(kGBps));
  ResourceId l2 = fs.AddResource(Res(2 * kGBps));
  Time d1, d2;
  fs.StartFlow(1000, {l1}, [&] { d1 = sim.Now(); });
  fs.StartFlow(1000, {l2}, [&] { d2 = sim.Now(); });
  sim.Run();
  EXPECT_EQ(d1, Time::Nanoseconds(1000));
  EXPECT_EQ(d2, Time::Nanoseconds(500));
}

TEST(FairShareTest, ZeroByteAndCappedResourcelessFlows) {
  Simulator sim;
  FairShare fs(sim);
  Time zero_done = Time::Max(), capped_done;
  sim.ScheduleAt(Time::Nanoseconds(10), [&] {
    fs.StartFlow(0, {}, [&] { zero_done = sim.Now(); });
    // 100 bytes capped at 1 GB/s, no shared resource: 100 ns.
    fs.StartFlow(
        100, {}, [&] { capped_done = sim.Now(); }, kGBps);
  });
  sim.Run();
  EXPECT_EQ(zero_done, Time::Nanoseconds(10));
  EXPECT_EQ(capped_done, Time::Nanoseconds(110));
}

TEST(FairShareTest, CompletionCanStartAFlowThatReusesTheSlot) {
  Simulator sim;
  FairShare fs(sim);
  ResourceId link = fs.AddResource(Res(kGBps));
  Time second_done;
  fs.StartFlow(100, {link}, [&] { fs.StartFlow(100, {link}, [&] { second_done = sim.Now(); }); });
  sim.Run();
  EXPECT_EQ(second_done, Time::Nanoseconds(200));
}

TEST(FairShareTest, AccountsBytesBusyTimeAndCounters) {
  // Two 1000 B flows on one 1 B/ns link, the second starting at 1000 ns after the first ends:
  // the link carries 2000 B, is busy 2000 ns, and its rate goes 1 → 0 → 1 → 0.
  Simulator sim;
  FairShare fs(sim);
  fs.set_record_counters(true);
  ResourceId link = fs.AddResource(Res(kGBps));
  fs.StartFlow(1000, {link}, nullptr);
  sim.ScheduleAt(Time::Nanoseconds(2000), [&] { fs.StartFlow(1000, {link}, nullptr); });
  sim.Run();
  const auto report = fs.ResourceReport();
  ASSERT_EQ(report.size(), 1u);
  EXPECT_NEAR(report[0].bytes, 2000, 1e-6);
  EXPECT_EQ(report[0].busy, Time::Nanoseconds(2000));
  std::vector<double> rates;
  std::vector<Time> times;
  for (const CounterSample& c : fs.counters()) {
    rates.push_back(c.rate_bytes_per_s);
    times.push_back(c.time);
  }
  EXPECT_EQ(rates, (std::vector<double>{kGBps, 0, kGBps, 0}));
  EXPECT_EQ(times, (std::vector<Time>{Time::Zero(), Time::Nanoseconds(1000),
                                      Time::Nanoseconds(2000), Time::Nanoseconds(3000)}));
}

// Counter samples share the timeline budget: when they cannot grow, the simulator stops.
TEST(FairShareTest, CounterSamplesStopTheSimulatorAtTheTimelineBudget) {
  Simulator sim;
  FairShare fs(sim);
  fs.set_record_counters(true);
  TimelineBudget budget(1500 * sizeof(CounterSample));
  fs.set_timeline_budget(&budget);
  ResourceId link = fs.AddResource(Res(kGBps));
  // 1000 flows one after another, 1 ns apart: 2000 samples (rate 1, then 0, per flow).
  int done = 0;
  std::function<void()> next = [&] {
    if (++done < 1000) {
      sim.ScheduleAfter(Time::Nanoseconds(1), [&] { fs.StartFlow(10, {link}, next); });
    }
  };
  fs.StartFlow(10, {link}, next);
  sim.Run();
  EXPECT_TRUE(budget.exhausted());
  EXPECT_EQ(fs.counters().size(), 1024u);  // 2048 would pass 1500.
  EXPECT_LT(done, 1000);
}

TEST(FairShareTest, BatchesStartsAtOneTimestampIntoOneSolve) {
  Simulator sim;
  FairShare fs(sim);
  ResourceId link = fs.AddResource(Res(kGBps));
  for (int i = 0; i < 50; ++i) fs.StartFlow(1000, {link}, nullptr);
  sim.Run();
  // One solve for the 50 starts, one for the 50 simultaneous completions.
  EXPECT_EQ(fs.solves(), 2u);
}

}  // namespace
}  // namespace meshsim::core

namespace meshsim::core {
namespace {

// Flow groups against one StartFlow per flow: a bidirectional ring of P chips (HBM → link → HBM
// flows, one per link), started as a group; foreign flows join at `join_ps` (a local flow on
// an HBM, and one over a ring link, which makes the ring asymmetric), forcing a split. Both
// solvers must complete every flow at the same time and in the same order, and leave the same
// loads and byte counts.
struct RingRun {
  std::vector<std::pair<int, int64_t>> done;  // (flow, completion time in ps), in order.
  std::vector<double> bytes;
  uint64_t formed = 0, split = 0;
};

RingRun RunRing(bool groups, int p, int64_t join_ps, bool capped) {
  Simulator sim;
  FairShare fs(sim);
  fs.set_flow_groups(groups);
  std::vector<ResourceId> hbm, fwd, bwd;
  for (int i = 0; i < p; ++i) {
    ResourceInfo info;
    info.capacity_bytes_per_s = 1.2e12;
    hbm.push_back(fs.AddResource(info));
  }
  for (int i = 0; i < p; ++i) {
    ResourceInfo info;
    info.capacity_bytes_per_s = 30e9;
    fwd.push_back(fs.AddResource(info));
    bwd.push_back(fs.AddResource(info));
  }
  RingRun out;
  std::vector<ResourceId> path;
  std::vector<uint32_t> ends;
  std::vector<FairShare::Callback> done;
  for (int i = 0; i < p; ++i) {
    for (int d : {+1, -1}) {
      const int j = (i + d + p) % p;
      path.insert(path.end(), {hbm[i], d > 0 ? fwd[i] : bwd[i], hbm[j]});
      ends.push_back(static_cast<uint32_t>(path.size()));
      const int id = static_cast<int>(done.size());
      done.emplace_back([&out, &sim, id] { out.done.push_back({id, sim.Now().ps()}); });
    }
  }
  fs.StartGroup(1e6, path, ends, done, capped ? 20e9 : FairShare::kNoCap);
  if (join_ps >= 0) {
    sim.ScheduleAt(Time::Picoseconds(join_ps), [&] {
      fs.StartFlow(5e5, {hbm[1]}, [&out, &sim] { out.done.push_back({-1, sim.Now().ps()}); });
      fs.StartFlow(2e5, {hbm[2], fwd[2], hbm[3]}, [&out, &sim] {
        out.done.push_back({-2, sim.Now().ps()});
      });
    });
  }
  sim.Run();
  for (const ResourceInfo& r : fs.ResourceReport()) out.bytes.push_back(r.bytes);
  out.formed = fs.groups_formed();
  out.split = fs.groups_split();
  return out;
}

TEST(FairShareGroupTest, GroupedRingMatchesOneFlowAtATimeAndSplitsWhenAFlowJoins) {
  for (bool capped : {false, true}) {
    const int64_t end_ps = RunRing(false, 8, -1, capped).done.back().second;
    // No join; a join at the group's start instant (before its solve), mid-step, and at the
    // instant its flows complete (before them: the join's event was scheduled first, so the
    // split schedules the completions with their reserved sequence numbers, after it).
    for (int64_t join : {int64_t{-1}, int64_t{0}, end_ps / 3, end_ps}) {
      SCOPED_TRACE(testing::Message() << "capped " << capped << " join " << join);
      const RingRun ref = RunRing(false, 8, join, capped);
      const RingRun grp = RunRing(true, 8, join, capped);
      EXPECT_EQ(grp.done, ref.done);
      EXPECT_EQ(grp.bytes, ref.bytes);
      EXPECT_EQ(ref.formed, 0u);
      EXPECT_EQ(grp.formed, 1u);
      EXPECT_EQ(grp.split, join >= 0 ? 1u : 0u);
    }
  }
}

// Groups of several components (header, "Flow groups"): the two rings of a dimension-order phase
// started as one group, their sends interleaved (ring A's first, ring B's first, …) so that the
// components' resources interleave in first-touch order. Grouped or one flow at a time, the same
// completions in the same order and the same bytes; a join splits the group.
RingRun RunTwoRings(bool groups, int p, int64_t join_ps) {
  Simulator sim;
  FairShare fs(sim);
  fs.set_flow_groups(groups);
  std::vector<ResourceId> hbm[2], link[2];
  for (int ring = 0; ring < 2; ++ring) {
    for (int i = 0; i < p; ++i) {
      ResourceInfo h, l;
      h.capacity_bytes_per_s = 1.2e12;
      l.capacity_bytes_per_s = 30e9;
      hbm[ring].push_back(fs.AddResource(h));
      link[ring].push_back(fs.AddResource(l));
    }
  }
  RingRun out;
  std::vector<ResourceId> path;
  std::vector<uint32_t> ends;
  std::vector<FairShare::Callback> done;
  for (int i = 0; i < p; ++i) {
    for (int ring = 0; ring < 2; ++ring) {
      path.insert(path.end(), {hbm[ring][i], link[ring][i], hbm[ring][(i + 1) % p]});
      ends.push_back(static_cast<uint32_t>(path.size()));
      const int id = static_cast<int>(done.size());
      done.emplace_back([&out, &sim, id] { out.done.push_back({id, sim.Now().ps()}); });
    }
  }
  fs.StartGroup(1e6, path, ends, done);
  if (join_ps >= 0) {
    sim.ScheduleAt(Time::Picoseconds(join_ps), [&] {
      fs.StartFlow(2e5, {hbm[1][2], link[1][2], hbm[1][3]}, [&out, &sim] {
        out.done.push_back({-1, sim.Now().ps()});
      });
    });
  }
  sim.Run();
  for (const ResourceInfo& r : fs.ResourceReport()) out.bytes.push_back(r.bytes);
  out.formed = fs.groups_formed();
  out.split = fs.groups_split();
  return out;
}

TEST(FairShareGroupTest, SeveralRingsInOneGroupMatchOneFlowAtATime) {
  const int64_t end_ps = RunTwoRings(false, 5, -1).done.back().second;
  for (int64_t join : {int64_t{-1}, int64_t{0}, end_ps / 3, end_ps}) {
    SCOPED_TRACE(testing::Message() << "join " << join);
    const RingRun ref = RunTwoRings(false, 5, join);
    const RingRun grp = RunTwoRings(true, 5, join);
    EXPECT_EQ(grp.done, ref.done);
    EXPECT_EQ(grp.bytes, ref.bytes);
    EXPECT_EQ(ref.formed, 0u);
    EXPECT_EQ(grp.formed, 1u);
    EXPECT_EQ(grp.split, join >= 0 ? 1u : 0u);
  }
}

// Independent groups (header, "Flow groups"): the reductions of a ring step, k flows of one
// resource each on every one of p HBMs, started together. The last flow's callback starts the
// next step over the same HBMs (and a link), as a ring's last reduction does. Grouped or one flow
// at a time, every completion must come at the same time in the same order, with the same bytes
// per resource; a flow joining one HBM mid-way, or at the instant the group completes, splits it.
RingRun RunReductions(bool groups, int p, int per_hbm, int64_t join_ps, bool capped) {
  Simulator sim;
  FairShare fs(sim);
  fs.set_flow_groups(groups);
  std::vector<ResourceId> hbm;
  for (int i = 0; i < p; ++i) {
    ResourceInfo info;
    info.capacity_bytes_per_s = 1.2e12;
    hbm.push_back(fs.AddResource(info));
  }
  ResourceInfo link_info;
  link_info.capacity_bytes_per_s = 30e9;
  const ResourceId link = fs.AddResource(link_info);
  RingRun out;
  std::vector<ResourceId> path;
  std::vector<uint32_t> ends;
  std::vector<FairShare::Callback> done;
  const int m = p * per_hbm;
  int left = m;
  for (int d = 0; d < per_hbm; ++d) {
    for (int i = 0; i < p; ++i) {
      path.push_back(hbm[i]);
      ends.push_back(static_cast<uint32_t>(path.size()));
      const int id = static_cast<int>(done.size());
      done.emplace_back([&, id] {
        out.done.push_back({id, sim.Now().ps()});
        if (--left > 0) return;
        // The step's last reduction: the next step starts over the HBMs it freed.
        for (int j = 0; j < p; ++j) {
          fs.StartFlow(4e5, {hbm[j], link, hbm[(j + 1) % p]}, [&out, &sim, j] {
            out.done.push_back({100 + j, sim.Now().ps()});
          });
        }
      });
    }
  }
  // 3 × 1 MB, capped by the vector units (20 GB/s: below the HBM's 1.2 TB/s) or not.
  fs.StartGroup(3e6, path, ends, done, capped ? 20e9 : FairShare::kNoCap);
  if (join_ps >= 0) {
    sim.ScheduleAt(Time::Picoseconds(join_ps), [&] {
      fs.StartFlow(5e5, {hbm[1]}, [&out, &sim] { out.done.push_back({-1, sim.Now().ps()}); });
    });
  }
  sim.Run();
  for (const ResourceInfo& r : fs.ResourceReport()) out.bytes.push_back(r.bytes);
  out.formed = fs.groups_formed();
  out.split = fs.groups_split();
  return out;
}

TEST(FairShareGroupTest, IndependentFlowsMatchOneFlowAtATimeAndFreeTheirResources) {
  for (int per_hbm : {1, 2}) {
    for (bool capped : {false, true}) {
      const RingRun plain = RunReductions(false, 6, per_hbm, -1, capped);
      // The reductions end together (before the next step's flows, ids ≥ 100).
      const int64_t end_ps = plain.done[6 * per_hbm - 1].second;
      for (int64_t join : {int64_t{-1}, int64_t{0}, end_ps / 3, end_ps}) {
        SCOPED_TRACE(testing::Message()
                     << "per HBM " << per_hbm << " capped " << capped << " join " << join);
        const RingRun ref = RunReductions(false, 6, per_hbm, join, capped);
        const RingRun grp = RunReductions(true, 6, per_hbm, join, capped);
        EXPECT_EQ(grp.done, ref.done);
        EXPECT_EQ(grp.bytes, ref.bytes);
        EXPECT_EQ(ref.formed, 0u);
        // k = 2 capped flows would freeze one by one (not grouped); the rest group.
        const bool groups = !(capped && per_hbm == 2);
        EXPECT_EQ(grp.formed, groups ? 1u : 0u);
        EXPECT_EQ(grp.split, groups && join >= 0 ? 1u : 0u);
        ASSERT_EQ(ref.done.size(), 6u * per_hbm + 6 + (join >= 0));
      }
    }
  }
}

// Resources shared with groups (header, "Shared resources"): two bidirectional rings over the
// same P HBMs (HBM → link → HBM, each ring on its own links), started as two groups, and
// `locals` uncapped local flows (GeMM prefetches) that join HBM 1 mid-step. The HBMs carry both
// groups' members; while they cannot limit a ring flow (decoupled: Σ member bounds + locals ×
// 30 GB/s below the HBM's capacity) the groups live on beside the locals, else they split.
// Grouped or one flow at a time: the same completion times and the same bytes per resource.
// Two bidirectional rings over the same HBMs (HBM → link → HBM, each ring direction on links
// of its own, 30 GB/s), for the tests of shared resources. Every flow records its completion.
struct SharedRings {
  SharedRings(bool groups, const std::vector<double>& hbm_capacities)
      : fs(sim), p(static_cast<int>(hbm_capacities.size())) {
    fs.set_flow_groups(groups);
    for (double c : hbm_capacities) hbm.push_back(fs.AddResource(Res(c)));
    for (int i = 0; i < 4 * p; ++i) links.push_back(fs.AddResource(Res(30e9)));
  }
  FairShare::Callback Done(int id) {
    return [this, id] { out.done.push_back({id, sim.Now().ps()}); };
  }
  // One step of ring 0 or 1 as one StartGroup; its flows' ids from id0 on.
  void StartRing(int ring, double bytes, int id0) {
    std::vector<ResourceId> path;
    std::vector<uint32_t> ends;
    std::vector<FairShare::Callback> done;
    for (int i = 0; i < p; ++i) {
      for (int d : {0, 1}) {
        const int j = (i + (d == 0 ? 1 : p - 1)) % p;
        path.insert(path.end(), {hbm[i], links[(2 * ring + d) * p + i], hbm[j]});
        ends.push_back(static_cast<uint32_t>(path.size()));
        done.push_back(Done(id0 + static_cast<int>(done.size())));
      }
    }
    fs.StartGroup(bytes, path, ends, done);
  }
  // Runs to the end. One instant's completions come in start order per solve, a group's before
  // the other flows the solve reschedules: they are compared as a set.
  RingRun Finish() {
    sim.Run();
    std::sort(out.done.begin(), out.done.end());
    for (const ResourceInfo& r : fs.ResourceReport()) out.bytes.push_back(r.bytes);
    out.formed = fs.groups_formed();
    out.split = fs.groups_split();
    return out;
  }

  Simulator sim;
  FairShare fs;
  int p;
  std::vector<ResourceId> hbm, links;
  RingRun out;
};

RingRun RunSharedRings(bool groups, int p, double hbm_capacity, int locals) {
  SharedRings m(groups, std::vector<double>(p, hbm_capacity));
  m.StartRing(0, 1e6, 0);
  m.StartRing(1, 1e6, 100);
  m.sim.ScheduleAt(Time::Picoseconds(10'000'000), [&] {
    for (int k = 0; k < locals; ++k) m.fs.StartFlow(3e6 + 1e5 * k, {m.hbm[1]}, m.Done(-1 - k));
  });
  return m.Finish();
}

TEST(FairShareGroupTest, GroupsShareHbmsWithEachOtherAndWithLocalFlowsWhileTheyCannotBind) {
  struct Case {
    double hbm_capacity;
    int locals;
    uint64_t split;
  };
  // 1.2 TB/s: 8 member bounds of 30 GB/s + 3 locals × 30 GB/s = 330 GB/s, far below: no split.
  // 300 GB/s: the two rings alone (240 GB/s) cannot bind it, with the locals it can (330 GB/s
  // of bounds): both groups split when the locals join, and the per-flow solver's shares are
  // what they get (300 GB/s / 11 flows: the ring flows over HBM 1 slow below 30 GB/s).
  for (const Case c : {Case{1.2e12, 3, 0}, Case{1.2e12, 0, 0}, Case{300e9, 3, 2}}) {
    SCOPED_TRACE(testing::Message() << "HBM " << c.hbm_capacity << " locals " << c.locals);
    const RingRun ref = RunSharedRings(false, 8, c.hbm_capacity, c.locals);
    const RingRun grp = RunSharedRings(true, 8, c.hbm_capacity, c.locals);
    EXPECT_EQ(grp.done, ref.done);
    EXPECT_EQ(grp.bytes, ref.bytes);
    EXPECT_EQ(grp.formed, 2u);
    EXPECT_EQ(grp.split, c.split);
  }
  // The binding case really is slower for the ring flows over HBM 1: its last ring flow ends
  // later than with a 1.2 TB/s HBM.
  const auto last_ring = [](const RingRun& r) {
    int64_t t = 0;
    for (const auto& [id, ps] : r.done) {
      if (id >= 0) t = std::max(t, ps);
    }
    return t;
  };
  EXPECT_GT(last_ring(RunSharedRings(true, 8, 300e9, 3)),
            last_ring(RunSharedRings(true, 8, 1.2e12, 3)));
}

// Random machines for the same comparison: two bidirectional rings over P HBMs of random
// capacity (some low enough that local flows make them bind), each ring step a group, and local
// flows (random sizes, some capped, some with caps above the HBM's capacity) and ordinary
// crossing flows starting at random instants on random HBMs. Grouped or one flow at a time,
// every flow completes at the same picosecond.
RingRun RunRandomSharedRings(bool groups, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> capacities(4 + rng() % 6);
  for (double& c : capacities) c = 150e9 + unit(rng) * 1.1e12;
  SharedRings m(groups, capacities);
  const int p = m.p;
  // Three steps of each ring, about 40 ms apart (a step may start before the last one ends).
  for (int step = 0; step < 3; ++step) {
    const int64_t at = static_cast<int64_t>(step * 40'000'000 + rng() % 5'000'000);
    const double bytes = 5e5 + unit(rng) * 1.5e6;
    m.sim.ScheduleAt(Time::Picoseconds(at), [&m, bytes, step] {
      m.StartRing(0, bytes, 1000 * step);
      m.StartRing(1, bytes * 0.7, 1000 * step + 500);
    });
  }
  for (int k = 0; k < 30; ++k) {
    const int64_t at = static_cast<int64_t>(rng() % 120'000'000);
    const int i = static_cast<int>(rng() % p);
    const double bytes = 1e5 + unit(rng) * 4e6;
    const double pick = unit(rng);
    const double cap = pick < 0.5    ? FairShare::kNoCap
                       : pick < 0.75 ? 20e9 + unit(rng) * 200e9
                                     : 2e12 + unit(rng) * 5e13;  // Above the capacity.
    const bool crossing = unit(rng) < 0.15;
    m.sim.ScheduleAt(Time::Picoseconds(at), [&m, i, p, bytes, cap, crossing, k] {
      if (crossing) {
        m.fs.StartFlow(bytes, {m.hbm[i], m.links[i], m.hbm[(i + 1) % p]}, m.Done(-1 - k), cap);
      } else {
        m.fs.StartFlow(bytes, {m.hbm[i]}, m.Done(-1 - k), cap);
      }
    });
  }
  return m.Finish();
}

TEST(FairShareGroupTest, RandomSharedRingsMatchOneFlowAtATime) {
  uint64_t formed = 0, split = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const RingRun ref = RunRandomSharedRings(false, seed);
    const RingRun grp = RunRandomSharedRings(true, seed);
    ASSERT_EQ(grp.done.size(), ref.done.size());
    EXPECT_EQ(grp.done, ref.done);
    ASSERT_EQ(grp.bytes.size(), ref.bytes.size());
    for (size_t r = 0; r < ref.bytes.size(); ++r) {
      EXPECT_NEAR(grp.bytes[r], ref.bytes[r], 1e-9 * std::max(1.0, ref.bytes[r])) << r;
    }
    formed += grp.formed;
    split += grp.split;
  }
  // The machines exercise both outcomes: groups that live beside local flows, and splits (110
  // groups formed, 75 split, on these seeds).
  EXPECT_GT(split, 0u);
  EXPECT_GT(formed - split, formed / 4);
}

TEST(FairShareGroupTest, AsymmetricOrBusyFlowsAreNotGrouped) {
  Simulator sim;
  FairShare fs(sim);
  ResourceInfo fast, slow;
  fast.capacity_bytes_per_s = 30e9;
  slow.capacity_bytes_per_s = 10e9;
  const ResourceId a = fs.AddResource(fast), b = fs.AddResource(slow);
  const ResourceId d = fs.AddResource(fast);
  std::vector<FairShare::Callback> done(2, [] {});
  // Different bottlenecks (30 vs 10 GB/s): different rates.
  const std::vector<ResourceId> path1{a, d, b, d};
  const std::vector<uint32_t> ends{2, 4};
  fs.StartGroup(1e6, path1, ends, done);
  EXPECT_EQ(fs.groups_formed(), 0u);  // d carries both flows and binds.
  sim.Run();
  // A resource that a member can bind (a 30 GB/s link on its own route) already carries a flow.
  std::vector<FairShare::Callback> done2(2, [] {});
  const ResourceId e = fs.AddResource(fast), h1 = fs.AddResource(Res(1.2e12));
  const ResourceId h2 = fs.AddResource(Res(1.2e12));
  fs.StartFlow(1e6, {h1, a, h2}, [] {});
  const std::vector<ResourceId> path2{h1, a, h2, h2, e, h1};
  const std::vector<uint32_t> ends2{3, 6};
  fs.StartGroup(1e6, path2, ends2, done2);
  EXPECT_EQ(fs.groups_formed(), 0u);
  sim.Run();
  EXPECT_EQ(fs.active_flows(), 0u);
}

}  // namespace
}  // namespace meshsim::core
