#!/usr/bin/env python3
"""Table 3's tables in README.md, generated from table3_tpuv4_4x4.csv: utilizations, paper
beside meshsim (`table3-main`), the ratios the paper states (`table3-quantities`), the S and
overlap sensitivity (`table3-sensitivity`), Collective re-priced by the measured cost model
(`table3-costmodel`) and the batch sensitivity (`table3-batch`). plot.py calls this; so does
results/check_readmes.sh."""
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
         for k in ("meshsim_utilization", "meshsim_tpuv4_utilization") if r[k] != ""}
    slices = {(r["model"], r["column"]): r.get("slices", "") for r in rows}
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
                         note="With S = 4 and 8, with concurrent collectives, with SendRecv "
                              "serialised (`comm.sendrecv_overlap=0`) and at other batches: the "
                              "tables below.")

    # S and overlap sensitivity, tpuv4-slice: synchronous (no suffix), concurrent, overlap.
    def cell(m, c, key="meshsim_utilization"):
        return u[(m, c, key)]

    sens = []
    for m, name in MODELS.items():
        col = {mode: cell(m, "collective" + sfx) for mode, sfx in
               (("sync", ""), ("conc", "_concurrent"))}
        for label, base, ov in (
                (f"{slices[(m, 'meshslice')]} (tuned)", "meshslice", "meshslice_overlap_sim"),
                ("4", "meshslice_s4", "meshslice_s4_overlap"),
                ("8", "meshslice_s8", "meshslice_s8_overlap")):
            sync, conc = cell(m, base), cell(m, base + "_concurrent")
            sens.append([name, label, plotenv.pct(sync), plotenv.pct(conc),
                         plotenv.pct(cell(m, ov)),
                         plotenv.pct(col["sync"] / sync - 1, sign=True),
                         plotenv.pct(col["conc"] / conc - 1, sign=True)])
        for label, base in (("Collective", "collective"), ("Wang (S = 4)", "wang")):
            sens.append([name, label, plotenv.pct(cell(m, base)),
                         plotenv.pct(cell(m, base + "_concurrent")),
                         plotenv.pct(cell(m, base + "_overlap")), "", ""])
    plotenv.readme_table(readme, "table3-sensitivity",
                         ["LLM", "MeshSlice S / algorithm", "no overlap, synchronous",
                          "no overlap, concurrent collectives", "overlap",
                          "time vs Collective (synchronous)", "time vs Collective (concurrent)"],
                         sens, align="llrrrrr")

    cmr = [[name, plotenv.pct(cell(m, "collective")),
            plotenv.pct(cell(m, "collective_measured_cost_model")), plotenv.pct(PAPER[m][0])]
           for m, name in MODELS.items()]
    plotenv.readme_table(readme, "table3-costmodel",
                         ["LLM", "meshsim Collective (`tpuv4-slice`)",
                          "its ops re-priced by the TPUv4-measured cost model",
                          "paper (real TPUv4 4x4)"], cmr, align="lrrr")
    br = []
    for m, name in MODELS.items():
        for b in (8, 16, 32):
            br.append([name, str(b)] + [plotenv.pct(cell(m, f"batch{b}_{c}")) for c in
                                        ("collective", "wang", "wang_sendrecv_serial",
                                         "meshslice", "meshslice_s4")])
    plotenv.readme_table(readme, "table3-batch",
                         ["LLM", "batch", "Collective", "Wang (S = 4)",
                          "Wang, SendRecv serialised", "MeshSlice (tuned S)",
                          "MeshSlice (S = 4)"], br, align="llrrrrr")

if __name__ == "__main__":
    main()
