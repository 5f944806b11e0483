"""Shared helpers for the results/ plot scripts (a python3 with h5py + matplotlib).

Importing this module first makes sure the interpreter has h5py and matplotlib (plotenv.py: the
script is re-executed under Debian's /usr/bin/python3 when the `python3` on PATH lacks them). So
every plot script runs as `python3 plot.py` in its folder or `python3 results/<item>/plot.py`
from the repository root.

Read a meshsim sweep archive's /summary (docs/hdf5.md) into rows, pick the best run per group,
and write markdown tables. Usage from a plot script in results/<item>/:

    import os, sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
    import meshsim_results as mr

    rows = mr.read_summary(mr.require(__file__, "out/sweep.h5"), config_keys=["batch"])
    best = mr.best_by(rows, ["model", "chips", "algorithm"])      # max flop_utilization
    print(mr.markdown_table(["model", "util"], [[m, mr.pct(r["flop_utilization"])] for ...]))

Rows are plain dicts: "run" (the run name), every summary key (as resolved by meshsim: `mesh =
auto` comes back as the chosen mesh, `slices = auto` as the chosen per-layer list; int or float
where the value is a number, else text) and every metric (float; older archives' metric names
are mapped to the current ones, e.g. chip_peak_flops -> chip_peak_flops_per_s). `config_keys`
adds values from each run's stored /runs/<name>/config (for keys that were fixed rather than
swept, e.g. "batch" or "topology"; None where the run does not read the key).
"""

import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plotenv  # noqa: E402  (the interpreter check; see plotenv.py)

plotenv.ensure("matplotlib", "h5py")

import h5py  # noqa: E402

# Display names and colours, the same in every figure.
ALGORITHMS = ["meshslice", "meshslice-search", "collective", "wang", "summa", "cannon", "tp1d",
              "fsdp"]
LABELS = {
    "meshslice": "MeshSlice (autotuned)",
    "meshslice-search": "MeshSlice (searched)",
    "collective": "Collective",
    "wang": "Wang",
    "summa": "SUMMA",
    "cannon": "Cannon",
    "tp1d": "1D TP",
    "fsdp": "FSDP",
}
COLORS = {
    "meshslice": "#d62728",
    "meshslice-search": "#ff9896",
    "collective": "#1f77b4",
    "wang": "#2ca02c",
    "summa": "#9467bd",
    "cannon": "#8c564b",
    "tp1d": "#7f7f7f",
    "fsdp": "#bcbd22",
}
MODELS = {"gpt3": "GPT-3", "megatron-nlg": "Megatron-NLG"}


here = plotenv.here        # path relative to a plot script's folder
require = plotenv.require  # its input files, or one line saying what to run first (exit 2)


def _to_number(text):
    try:
        v = float(text)
    except ValueError:
        return text
    return int(v) if v.is_integer() and "." not in text and "e" not in text.lower() else v


# Metrics renamed since older archives (schema version 3 and before): old name -> current name.
_METRIC_RENAMES = {"chip_peak_flops": "chip_peak_flops_per_s"}


def read_summary(path, config_keys=()):
    """The /summary table of a meshsim archive as a list of dicts (one per run, in run order)."""
    rows = []
    with h5py.File(path, "r") as f:
        s = f["summary"]
        keys = [k.decode() if isinstance(k, bytes) else str(k) for k in s.attrs["keys"]]
        metrics = [m.decode() if isinstance(m, bytes) else str(m) for m in s.attrs["metrics"]]
        runs = s["runs"].asstr()[:]
        columns = []  # Per key: the values of every run.
        if "key_columns" in s:  # Schema version 4: one typed dataset per key.
            for key in keys:
                d = s["key_columns"][key]
                if h5py.check_string_dtype(d.dtype) is not None:
                    columns.append([_to_number(str(v)) for v in d.asstr()[:]])
                elif d.dtype.kind in "iu":
                    columns.append([int(v) for v in d[:]])
                else:
                    columns.append([float(v) for v in d[:]])
        elif len(keys):  # Versions 2 and 3: one text matrix, a row per run.
            kv = s["key_values"].asstr()[:]
            columns = [[_to_number(str(kv[i][k])) for i in range(len(runs))]
                       for k in range(len(keys))]
        mv = s["metric_values"][:]
        for i, run in enumerate(runs):
            row = {"run": str(run)}
            for k, key in enumerate(keys):
                row[key] = columns[k][i]
            for m, metric in enumerate(metrics):
                row[_METRIC_RENAMES.get(metric, metric)] = float(mv[i][m])
            if config_keys:
                cfg = f["runs"][run]["config"].attrs
                for key in config_keys:
                    v = cfg.get(key)
                    if isinstance(v, bytes):
                        v = v.decode()
                    row[key] = _to_number(str(v)) if v is not None else None
            rows.append(row)
    return rows


def read_gemms(path, run):
    """The GeMMs of run `run` in an archive (its /runs/<run>/gemms table, docs/hdf5.md): a list
    of dicts with "label", "layer", "pass" (int), "start_s", "end_s", "share_s" and "flops", in
    order of their first op. An archive written before that table raises KeyError."""
    with h5py.File(path, "r") as f:
        table = f["runs"][run]["gemms"][:]
    out = []
    for g in table:
        label = g["label"]
        out.append({"label": label.decode() if isinstance(label, bytes) else str(label),
                    "layer": int(g["layer"]), "pass": int(g["pass"]),
                    "start_s": int(g["start_ps"]) * 1e-12, "end_s": int(g["end_ps"]) * 1e-12,
                    "share_s": int(g["share_ps"]) * 1e-12, "flops": float(g["flops"])})
    return out


def read_run_metrics(path):
    """Every run of an archive (`meshsim run --out` / `compare --out`): [(config, metrics)]."""
    out = []
    with h5py.File(path, "r") as f:
        for name in f["runs"]:
            g = f["runs"][name]
            cfg = {k: (v.decode() if isinstance(v, bytes) else str(v))
                   for k, v in g["config"].attrs.items()}
            met = {_METRIC_RENAMES.get(k, k): float(v) for k, v in g["metrics"].attrs.items()}
            out.append((cfg, met))
    return out


def best_by(rows, group_keys, metric="flop_utilization", where=None):
    """{tuple(group values): row with the largest `metric`} over the rows passing `where`."""
    best = {}
    for r in rows:
        if where is not None and not where(r):
            continue
        v = r.get(metric)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        key = tuple(r[k] for k in group_keys)
        if key not in best or v > best[key][metric]:
            best[key] = r
    return best


def pct(x, digits=1):
    """0.591 → '59.1%'; None/NaN → 'N/A'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "N/A"
    return f"{100 * x:.{digits}f}%"


markdown_table = plotenv.markdown_table


def write_text(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print(f"wrote {path}")


def write_csv(path, headers, rows):
    """A small CSV of the plotted numbers (committed beside the figure)."""
    import csv
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(headers)
        w.writerows(rows)
    print(f"wrote {path}")


def save_figure(fig, base, dpi=200):
    """`base`.png at `dpi` (≥ 200) and `base`.svg (no creation date, fixed ids: reruns of the same
    data give the same SVG)."""
    import matplotlib
    fig.savefig(base + ".png", dpi=max(dpi, 200))
    # Text as text (smaller files) and fixed element ids (reruns give identical files).
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "meshsim"}):
        fig.savefig(base + ".svg", metadata={"Date": None})
    print(f"wrote {base}.png, {base}.svg")


def setup_matplotlib():
    """Headless backend and readable default sizes; returns pyplot."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "figure.dpi": 110,
                         "savefig.bbox": "tight", "axes.grid": True, "grid.alpha": 0.3,
                         "axes.axisbelow": True})
    return plt


def scaling_rows(main_rows, search_rows):
    """Best run per (model, chips, algorithm) of a scaling sweep (Figures 9 and 12).

    main_rows: the experiment.ini sweep (MeshSlice there = the autotuned run, mesh auto);
    search_rows: meshslice_search.ini (MeshSlice on every mesh and S), relabelled
    "meshslice-search". Returns {(model, chips, algorithm): row}.
    """
    rows = list(main_rows)
    for r in search_rows:
        r = dict(r)
        r["algorithm"] = "meshslice-search"
        rows.append(r)
    return best_by(rows, ["model", "chips", "algorithm"])


def plot_scaling(best, chips_list, algorithms, title, path, na_note=None, paper=()):
    """Grouped bars: FLOP utilization per chip count, one bar per algorithm, one panel per model.
    Missing (model, chips, algorithm) points are marked N/A. `paper`: [(model, chips, algorithm,
    utilization, legend label, marker)] drawn as black markers over that algorithm's bar, with
    the value written beside (the paper's number beside meshsim's). Writes `path` (without .png)
    as PNG + SVG (save_figure)."""
    plt = setup_matplotlib()
    models = [m for m in MODELS if any(k[0] == m for k in best)]
    fig, axes = plt.subplots(len(models), 1, figsize=(11, 3.6 * len(models)), squeeze=False)
    width = 0.85 / len(algorithms)
    for ax, model in zip(axes[:, 0], models):
        for a_i, alg in enumerate(algorithms):
            xs, ys = [], []
            for c_i, chips in enumerate(chips_list):
                x = c_i + (a_i - (len(algorithms) - 1) / 2) * width
                r = best.get((model, chips, alg))
                if r is None:
                    ax.text(x, 1.0, "N/A", rotation=90, ha="center", va="bottom", fontsize=7,
                            color=COLORS[alg])
                    continue
                xs.append(x)
                ys.append(100 * r["flop_utilization"])
            ax.bar(xs, ys, width, label=LABELS[alg], color=COLORS[alg],
                   hatch="//" if alg == "meshslice-search" else None, edgecolor="white",
                   linewidth=0.3)
        seen = set()
        for p_model, p_chips, p_alg, value, p_label, marker in paper:
            if p_model != model or p_chips not in chips_list or p_alg not in algorithms:
                continue
            x = (chips_list.index(p_chips) +
                 (algorithms.index(p_alg) - (len(algorithms) - 1) / 2) * width)
            ax.plot([x], [100 * value], marker=marker, color="black", ms=8, ls="none",
                    label=p_label if p_label not in seen else None)
            seen.add(p_label)
            ax.annotate(f"{100 * value:.1f}", (x, 100 * value), xytext=(5, 0),
                        textcoords="offset points", fontsize=7, va="center")
        ax.set_xticks(range(len(chips_list)))
        ax.set_xticklabels([f"{c} chips" for c in chips_list])
        ax.set_ylabel("FLOP utilization (%)")
        ax.set_ylim(0, 100)
        ax.set_title(f"{MODELS[model]}")
    if paper:  # Each panel: its bars and the paper markers it draws.
        for ax in axes[:, 0]:
            ax.legend(ncol=5, fontsize=7, loc="upper right")
    else:
        axes[0, 0].legend(ncol=4, fontsize=8, loc="upper right")
    axes[-1, 0].set_xlabel("cluster size (each algorithm on its best mesh shape)")
    fig.suptitle(title)
    if na_note:
        fig.text(0.01, -0.01, na_note, fontsize=8, ha="left", va="top")
    fig.tight_layout()
    save_figure(fig, path[:-4] if path.endswith(".png") else path)
    plt.close(fig)


def scaling_from_csv(path):
    """The `best` dict of a scaling figure read back from its committed CSV (scaling_csv), so the
    figure can be redrawn without the archives: {(model, chips, algorithm): row}."""
    import csv
    best = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            best[(r["model"], int(r["chips"]), r["algorithm"])] = {
                "mesh": r["mesh"], "slices": r["slices"],
                "flop_utilization": float(r["flop_utilization"]),
                "makespan_s": float(r["makespan_s"])}
    return best


def scaling_table(best, chips_list, algorithms):
    """Markdown: per model, rows = algorithms, columns = chip counts: util (mesh, S)."""
    out = []
    for model in MODELS:
        if not any(k[0] == model for k in best):
            continue
        out.append(f"**{MODELS[model]}** — FLOP utilization, best mesh (and S where it applies)\n")
        rows = []
        for alg in algorithms:
            cells = [LABELS[alg]]
            for chips in chips_list:
                r = best.get((model, chips, alg))
                if r is None:
                    cells.append("N/A")
                    continue
                s = str(r.get("slices", ""))
                s = "" if s in ("auto", "") or alg in ("collective", "cannon") else f", S={s}"
                cells.append(f"{pct(r['flop_utilization'])} ({r['mesh']}{s})")
            rows.append(cells)
        out.append(markdown_table(["algorithm"] + [str(c) for c in chips_list], rows))
    return "\n".join(out)


def scaling_csv(best, chips_list, algorithms, path):
    """The plotted points of a scaling figure: model, chips, algorithm, mesh, S, utilization."""
    rows = []
    for model in MODELS:
        for chips in chips_list:
            for alg in algorithms:
                r = best.get((model, chips, alg))
                if r is None:
                    continue
                rows.append([model, chips, alg, r["mesh"], r.get("slices", ""),
                             f"{r['flop_utilization']:.4f}", f"{r['makespan_s']:.6g}"])
    write_csv(path, ["model", "chips", "algorithm", "mesh", "slices", "flop_utilization",
                     "makespan_s"], rows)
