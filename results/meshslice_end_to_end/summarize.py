"""MeshSlice vs Wang at 256 chips, FC layers only and whole layers: end_to_end.csv and a table.

Usage: summarize.py SWEEP.csv OUT.csv   (SWEEP.csv: `meshsim sweep experiment.ini --format csv`)
Standard library only. Wang's best run (mesh, S) per model and workload is kept, as in Figure 9.
"""
import csv
import sys

# MeshSlice paper §5.1.1: speed-up over Wang at 256 chips.
PAPER = {("gpt3", "llm"): 13.8, ("gpt3", "layer"): 12.0,
         ("megatron-nlg", "llm"): 26.0, ("megatron-nlg", "layer"): 23.4}


def main(src, dst):
    rows = list(csv.DictReader(open(src)))
    out = []
    for (model, workload), paper in PAPER.items():
        runs = [r for r in rows if r["model"] == model and r["workload"] == workload]
        ms = [r for r in runs if r["algorithm"] == "meshslice"]
        wang = [r for r in runs if r["algorithm"] == "wang"]
        if len(ms) != 1 or not wang:
            sys.exit(f"summarize.py: {model}/{workload}: expected one meshslice run and some wang runs")
        best = min(wang, key=lambda r: float(r["makespan_s"]))
        m, w = float(ms[0]["makespan_s"]), float(best["makespan_s"])
        out.append({
            "model": model, "workload": workload,
            "meshslice_mesh": ms[0]["mesh"], "meshslice_slices": ms[0]["slices"],
            "meshslice_ms": f"{m * 1e3:.3f}",
            "meshslice_util": f"{float(ms[0]['flop_utilization']) * 100:.1f}",
            "wang_mesh": best["mesh"], "wang_slices": best["slices"], "wang_ms": f"{w * 1e3:.3f}",
            "wang_util": f"{float(best['flop_utilization']) * 100:.1f}",
            "speedup_pct": f"{(w / m - 1) * 100:.1f}", "paper_pct": f"{paper:.1f}"})
    with open(dst, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(out[0]))
        writer.writeheader()
        writer.writerows(out)
    print("| model | measure | MeshSlice (mesh, S) | util | Wang best (mesh, S) | util | MeshSlice faster by | paper |")
    print("|---|---|---|---:|---|---:|---:|---:|")
    for r in out:
        what = "FC layers (one block)" if r["workload"] == "llm" else "whole layer"
        print(f"| {r['model']} | {what} | {r['meshslice_ms']} ms ({r['meshslice_mesh']}, "
              f"{r['meshslice_slices']}) | {r['meshslice_util']}% | {r['wang_ms']} ms "
              f"({r['wang_mesh']}, {r['wang_slices']}) | {r['wang_util']}% | "
              f"+{r['speedup_pct']}% | +{r['paper_pct']}% |")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: summarize.py SWEEP.csv OUT.csv")
    main(sys.argv[1], sys.argv[2])
