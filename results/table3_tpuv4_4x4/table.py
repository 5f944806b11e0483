#!/usr/bin/env python3
"""Table 3's tables in README.md, generated from table3_tpuv4_4x4.csv: utilizations, paper
beside meshsim (`table3-main`), and the ratios the paper states (`table3-quantities`). The
S-sensitivity table needs the archives (out/), not the committed CSV, and stays as plot.py writes
it to out/table.md. plot.py calls this; so does results/check_readmes.sh."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plotenv  # noqa: E402

MODELS = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}
# The paper's numbers, one place: MeshSlice (ISCA'25) §5.3, Table 3 — Collective, Wang, MeshSlice,
# MeshSlice Overlap (Estim.) on a real 4x4 TPUv4 slice; the overlap speed-up and MeshSlice's extra
# time over Collective without overlap (≈ 4.5%) from §5.3's text.
PAPER = {"gpt3": (0.474, 0.477, 0.455, 0.657), "megatron-nlg": (0.494, 0.464, 0.471, 0.656)}
PAPER_OVERLAP_SPEEDUP = {"gpt3": 0.386, "megatron-nlg": 0.328}  # Overlap (Estim.) over Collective
PAPER_MESHSLICE_OVERHEAD = 0.045  # MeshSlice's extra time over Collective, no overlap
COLUMNS = ["collective", "wang", "meshslice", "meshslice_overlap_sim",
           "meshslice_overlap_estimate"]
SYSTEMS = [("meshsim_utilization", "meshsim, `tpuv4-slice`", True),
           ("meshsim_tpuv4_utilization", "meshsim, `tpuv4` (before)", False)]


def main():
    rows = plotenv.read_csv(plotenv.require(__file__, "table3_tpuv4_4x4.csv"))
    readme = plotenv.here(__file__, "README.md")
    u = {(r["model"], r["column"], k): float(r[k]) for r in rows
         for k in ("meshsim_utilization", "meshsim_tpuv4_utilization")}
    main_rows, q = [], []
    for m, name in MODELS.items():
        p = PAPER[m]
        main_rows.append([name, "paper (real TPUv4 4x4)", plotenv.pct(p[0]), plotenv.pct(p[1]),
                          plotenv.pct(p[2]), "—", plotenv.pct(p[3])])
        for key, label, bold in SYSTEMS:
            cells = [plotenv.pct(u[(m, c, key)]) for c in COLUMNS]
            if bold:
                cells[:3] = [f"**{c}**" for c in cells[:3]]
            main_rows.append([name, label] + cells)
    plotenv.readme_table(readme, "table3-main",
                         ["LLM", "source", "Collective", "Wang", "MeshSlice",
                          "MeshSlice Overlap (sim.)", "MeshSlice Overlap (Estim.)"], main_rows,
                         align="llrrrrr")

    def per_sys(m, f):
        return [f(lambda c: u[(m, c, key)]) for key, _, _ in SYSTEMS]

    for m, name in MODELS.items():
        p = PAPER[m]
        q.append([f"{name}: MeshSlice's extra time over Collective without overlap (tuned S)",
                  f"≈{plotenv.pct(PAPER_MESHSLICE_OVERHEAD)}"] +
                 per_sys(m, lambda g: plotenv.pct(g("collective") / g("meshslice") - 1,
                                                  sign=True)))
        q.append([f"{name}: MeshSlice Overlap speed-up over Collective",
                  plotenv.pct(PAPER_OVERLAP_SPEEDUP[m]) + " (estimate)"] +
                 per_sys(m, lambda g: f"{plotenv.pct(g('meshslice_overlap_sim') / g('collective') - 1)}"
                         f" simulated; {plotenv.pct(g('meshslice_overlap_estimate') / g('collective') - 1, 0)}"
                         " (estimate / simulated Collective)"))
        q.append([f"{name}: Wang vs Collective", plotenv.pct(p[1] / p[0] - 1, sign=True)] +
                 per_sys(m, lambda g: plotenv.pct(g("wang") / g("collective") - 1, sign=True)))
    plotenv.readme_table(readme, "table3-quantities",
                         ["quantity", "paper", "meshsim `tpuv4-slice`",
                          "meshsim `tpuv4` (before)"], q, align="llll",
                         note="With S = 4 and with SendRecv serialised (`comm.sendrecv_overlap=0`) "
                              "the numbers are in the next table and the bullets below; they come "
                              "from the archives (`out/table.md`), not the committed CSV.")


if __name__ == "__main__":
    main()
