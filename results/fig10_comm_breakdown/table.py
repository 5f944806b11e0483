#!/usr/bin/env python3
"""Figure 10's tables in README.md, generated from fig10_comm_breakdown.csv: the paper's
statements (§5.1.2, orderings only) with verdicts computed here, each test written beside it
(`fig10-statements`), and the measured breakdowns (`fig10-measured-<model>`). plot.py calls
this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

MODELS = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
ALGS = ["meshslice", "collective", "wang", "summa", "cannon", "tp1d", "fsdp"]
TWO_D = ["meshslice", "collective", "wang", "summa", "cannon"]
NAMES = {"meshslice": "MeshSlice (autotuned)", "collective": "Collective", "wang": "Wang",
         "summa": "SUMMA", "cannon": "Cannon", "tp1d": "1D TP", "fsdp": "FSDP"}
# The paper gives no numbers for Figure 10 (MeshSlice ISCA'25 §5.1.2), only the statements in
# the table; these are the tolerances this script reads them with.
SLIGHTLY = 0.5       # "slightly above Collective": at most +50% total communication
MOSTLY_HIDDEN = 0.5  # "mostly hidden": exposed < 50% of the total
SAME_COMPUTE = 0.05  # "compute almost the same": half-range within ±5% of the midpoint
PARTS = ["launch", "transfer", "sync"]


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "fig10_comm_breakdown.csv"))
    readme = plotenv.here(__file__, "README.md")
    d = {}
    for r in rows:
        c = float(r["compute_s"])
        x = {p: float(r[f"{p}_s"]) / c for p in PARTS}
        x["total"] = sum(x[p] for p in PARTS)
        x["exposed"] = float(r["exposed_s"]) / c
        x["compute_ms"] = 1e3 * c
        x["util"] = float(r["flop_utilization"])
        x["mesh"], x["slices"] = r["mesh"], r["slices"]
        d[(r["model"], r["algorithm"])] = x

    for m in MODELS:
        out = []
        for a in ALGS:
            x = d[(m, a)]
            out.append([NAMES[a], x["mesh"], x["slices"] if a not in ("collective", "cannon")
                        else "-", f"{x['compute_ms']:.1f}"] +
                       [f"{x[k]:.3f}" for k in PARTS + ["total", "exposed"]] +
                       [plotenv.pct(x["util"])])
        plotenv.readme_table(readme, f"fig10-measured-{m}",
                             ["algorithm", "mesh", "S", "compute (ms)", "launch/comp",
                              "transfer/comp", "sync/comp", "total/comp", "exposed/comp",
                              "FLOP util."], out, align="lllrrrrrrr")

    def per_model(f):
        return [f(m) for m in MODELS]

    def extra(m, a):
        return {p: d[(m, a)][p] - d[(m, "collective")][p] for p in PARTS}

    def both(ok_list, why):
        why = "criterion: " + why
        return plotenv.verdict_bool(all(ok_list), why) if all(ok_list) or not any(ok_list) else \
            "; ".join(f"{MODELS[m]} {'yes' if ok else 'no'}" for m, ok in zip(MODELS, ok_list)) + \
            f" ({why})"

    st = []
    least = [min(TWO_D + ["tp1d", "fsdp"], key=lambda a: d[(m, a)]["total"]) == "collective"
             for m in MODELS]
    st.append(["Collective has the least communication time"] +
              per_model(lambda m: f"{d[(m, 'collective')]['total']:.2f}" +
                        (" (least)" if least[list(MODELS).index(m)] else "")) +
              [both(least, "least total of the seven")])
    above = {m: {a: d[(m, a)]["total"] / d[(m, "collective")]["total"] - 1
                 for a in ("wang", "meshslice")} for m in MODELS}
    sl = [all(0 < v <= SLIGHTLY for v in above[m].values()) for m in MODELS]
    st.append(["Wang and MeshSlice slightly above Collective"] +
              per_model(lambda m: f"Wang {d[(m, 'wang')]['total']:.2f} "
                        f"({plotenv.pct(above[m]['wang'], 0, sign=True)}), MeshSlice "
                        f"{d[(m, 'meshslice')]['total']:.2f} "
                        f"({plotenv.pct(above[m]['meshslice'], 0, sign=True)})") +
              [both(sl, f"slightly = above Collective by at most +{100 * SLIGHTLY:g}%")])

    def largest(m, a, part):
        e = extra(m, a)
        return max(PARTS, key=e.get) == part

    wl = [largest(m, "wang", "launch") for m in MODELS]
    st.append(["Wang's extra is launch overhead (several SendRecvs)"] +
              per_model(lambda m: f"launch {d[(m, 'wang')]['launch']:.2f} vs "
                        f"{d[(m, 'collective')]['launch']:.2f}") +
              [both(wl, "launch is the largest part of its extra over Collective")])
    ms = [largest(m, "meshslice", "sync") for m in MODELS]
    st.append(["MeshSlice's extra is synchronisation"] +
              per_model(lambda m: f"extra over Collective: sync "
                        f"{extra(m, 'meshslice')['sync']:+.2f}, launch "
                        f"{extra(m, 'meshslice')['launch']:+.2f}, transfer "
                        f"{extra(m, 'meshslice')['transfer']:+.2f}".replace("-", "−")) +
              [both(ms, "sync is the largest part of its extra over Collective")])
    hid = [d[(m, "meshslice")]["exposed"] < MOSTLY_HIDDEN * d[(m, "meshslice")]["total"]
           for m in MODELS]
    st.append(["MeshSlice's communication is mostly hidden"] +
              per_model(lambda m: f"exposed {d[(m, 'meshslice')]['exposed']:.2f} of "
                        f"{d[(m, 'meshslice')]['total']:.2f}") +
              [both(hid, f"exposed < {100 * MOSTLY_HIDDEN:g}% of the total")])
    can = [d[(m, "cannon")]["total"] > max(d[(m, a)]["total"] for a in
                                           ("collective", "wang", "meshslice")) for m in MODELS]
    st.append(["Cannon is high (square mesh + skew traffic)"] +
              per_model(lambda m: f"{d[(m, 'cannon')]['total']:.2f}") +
              [both(can, "above Collective, Wang and MeshSlice")])
    su_hi = [d[(m, "summa")]["total"] > d[(m, "cannon")]["total"] for m in MODELS]
    su_sync = [max(TWO_D, key=lambda a: d[(m, a)]["sync"]) == "summa" for m in MODELS]
    su_dom = [max(PARTS, key=lambda p: d[(m, "summa")][p]) == "sync" for m in MODELS]
    st.append(["SUMMA is even higher, dominated by synchronisation"] +
              per_model(lambda m: f"{d[(m, 'summa')]['total']:.2f}, sync "
                        f"{d[(m, 'summa')]['sync']:.2f}, transfer "
                        f"{d[(m, 'summa')]['transfer']:.2f}") +
              [f"higher than Cannon: {'yes' if all(su_hi) else 'no'}; largest sync of the 2D "
               f"algorithms: {'yes' if all(su_sync) else 'no'}; sync the largest part of its "
               f"bar: {'yes' if all(su_dom) else 'no'}"])
    hi = {m: {a: d[(m, a)]["total"] > max(d[(m, b)]["total"] for b in TWO_D)
              for a in ("tp1d", "fsdp")} for m in MODELS}
    st.append(["1D TP and FSDP are the highest (2 links, more traffic)"] +
              per_model(lambda m: f"{d[(m, 'tp1d')]['total']:.2f} and "
                        f"{d[(m, 'fsdp')]['total']:.2f}") +
              ["; ".join(f"{NAMES[a]}: " + (both([hi[m][a] for m in MODELS], "above every 2D "
                                                 "algorithm")) for a in ("tp1d", "fsdp"))])

    def spread(m):
        v = [d[(m, a)]["compute_ms"] for a in TWO_D]
        return min(v), max(v), (max(v) - min(v)) / (max(v) + min(v))

    same = [spread(m)[2] <= SAME_COMPUTE for m in MODELS]
    st.append(["compute time almost the same for all algorithms"] +
              per_model(lambda m: f"{spread(m)[0]:.1f}–{spread(m)[1]:.1f} ms for the 2D ones "
                        f"(±{plotenv.pct(spread(m)[2])}), 1D TP "
                        f"{d[(m, 'tp1d')]['compute_ms']:.1f} ms") +
              [f"for the 2D ones {'yes' if all(same) else 'no'}, 1D TP no (criterion: within "
               f"±{100 * SAME_COMPUTE:g}% of the 2D ones' midpoint)"])
    plotenv.readme_table(readme, "fig10-statements",
                         ["statement (paper)", "meshsim GPT-3", "meshsim Megatron-NLG", "holds?"],
                         st, align="llll")


if __name__ == "__main__":
    main()
