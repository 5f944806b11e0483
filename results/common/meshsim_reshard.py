"""Shared helpers for the cross-mesh resharding figures (results/reshard_fig*/).

Runs `meshsim reshard ... --format json` ($MESHSIM, else the binary of $MESHSIM_BUILD_DIR, default
build/) and returns its JSON; holds the nine cases of the paper's Table 2 placed on p3.8xlarge
hosts of 4 GPUs (sender mesh first, receiver mesh on the next whole hosts):

    import meshsim_reshard as mrs
    r = mrs.run(mrs.table2_args(3) + ["--strategy", "broadcast", "--scheduler", "ensemble"])
    r["makespan_s"], r["unit_tasks"]
"""

import csv
import json
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SHAPE = "1024,1024,512"  # §5.1.2's tensor; fp16 → 1 GiB.

# case: (send spec, recv spec, send mesh, send placement, recv mesh, recv placement)
TABLE2 = {
    1: ("S0RR", "S0RR", "2x4", "0-7", "2x4", "8-15"),
    2: ("RRR", "S0RR", "2x4", "0-7", "2x4", "8-15"),
    3: ("RS0R", "S0RR", "2x4", "0-7", "2x4", "8-15"),
    4: ("RS01R", "S01RR", "2x4", "0-7", "2x4", "8-15"),
    5: ("S1RR", "S0RR", "2x4", "0-7", "2x4", "8-15"),
    6: ("S0RR", "S0RR", "2x4", "0-7", "3x4", "8-19"),
    7: ("S1RR", "RRR", "1x4", "0-3", "2x4", "4-11"),
    # (2,3) → (3,2): 3 GPUs on each of 2 hosts → 2 GPUs on each of 3 hosts.
    8: ("RRR", "RRR", "2x3", "0-2,4-6", "3x2", "8,9,12,13,16,17"),
    9: ("RS0R", "RRS0", "2x4", "0-7", "2x4", "8-15"),
}


def binary():
    if os.environ.get("MESHSIM"):  # Set by results/run_all.sh.
        return os.environ["MESHSIM"]
    build = os.environ.get("MESHSIM_BUILD_DIR", os.path.join(ROOT, "build"))
    return os.path.join(build, "sim", "meshsim")


def run(args):
    cmd = [binary(), "reshard", "--system", "p3.8xlarge", "--chips", "20", "--format", "json"]
    out = subprocess.run(cmd + args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def table2_args(case):
    src_spec, dst_spec, src_mesh, src_pl, dst_mesh, dst_pl = TABLE2[case]
    return ["--src-mesh", src_mesh, "--src-placement", src_pl, "--src-spec", src_spec,
            "--dst-mesh", dst_mesh, "--dst-placement", dst_pl, "--dst-spec", dst_spec,
            "--shape", SHAPE]


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def run_cases(here, name, methods):
    """Runs every Table 2 case under each (label, strategy, scheduler) of `methods` and writes
    HERE/NAME.csv (one row per case and method)."""
    rows = []
    for case in range(1, 10):
        for label, strategy, scheduler in methods:
            r = run(table2_args(case) + ["--strategy", strategy, "--scheduler", scheduler])
            rows.append([case, label, strategy, scheduler, r["unit_tasks"],
                         f"{r['makespan_s']:.6f}", f"{r['model_makespan_s']:.6f}",
                         r["inter_host_bytes"]])
            print(case, label, r["unit_tasks"], f"{r['makespan_s']:.4f} s", flush=True)
    write_csv(os.path.join(here, f"{name}.csv"),
              ["case", "method", "strategy", "scheduler", "unit_tasks", "time_s",
               "model_time_s", "inter_host_bytes"], rows)


def draw_cases(ax, rows, methods, title):
    """Grouped bars on `ax`: time per Table 2 case, one bar per (label, color) of `methods`."""
    width = 0.8 / len(methods)
    for k, (method, color) in enumerate(methods):
        xs, ys = [], []
        for case in range(1, 10):
            r = [r for r in rows if int(r["case"]) == case and r["method"] == method]
            if r:
                xs.append(case + (k - (len(methods) - 1) / 2) * width)
                ys.append(float(r[0]["time_s"]))
        ax.bar(xs, ys, width, color=color, label=method)
    ax.set_xticks(range(1, 10))
    ax.set_xticklabels([f"case{c}" for c in range(1, 10)])
    ax.set_ylabel("time (s)")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=len(methods))
    ax.set_title(title, fontsize=10)


def plot_cases(here, name, methods, title):
    """HERE/NAME.csv → NAME.png (200 dpi) + NAME.svg: grouped bars per Table 2 case, one bar per
    (label, color) of `methods`."""
    import plotenv  # re-executes under /usr/bin/python3 when matplotlib is missing

    plt = plotenv.pyplot()
    rows = read_csv(plotenv.require(os.path.join(here, "plot.py"), f"{name}.csv"))
    fig, ax = plt.subplots(figsize=(11, 3.8))
    draw_cases(ax, rows, methods, title)
    fig.tight_layout()
    fig.savefig(os.path.join(here, f"{name}.png"), dpi=200)
    fig.savefig(os.path.join(here, f"{name}.svg"), metadata={"Date": None})
