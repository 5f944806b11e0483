#!/usr/bin/env python3
"""ATP Figure 12: out/switch.h5 (IC5 nvl-switch), out/torus.h5 (IC6 gpu-torus), and
out/torus_reshaped.h5 / out/torus_reshaped_1link.h5 (IC6 with the torus reshaped to each mesh,
length-2 dimensions joined twice / once) → atp_fig12_topologies.{png,svg,csv} (committed) and
out/table.md.

Simulated tensor-parallel communication time of one atp-m3 layer with compute made negligible:
the collectives' per-chip time comm.launch_s + comm.sync_s + comm.transfer_s (transfer alone in
the CSV), in units of Δ = 2·L·b·s·h·e / GroupBW, beside §5.4's closed form
T_comm / Δ = (14·d2 + 4·d1 − 18) / (d1·d2)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_results as mr  # noqa: E402

L, B, S, H, E = 1, 4, 2048, 8192, 2  # atp-m3, batch 4, seq 2048, fp16 (the .ini files).
# GroupBW per GPU and direction, as ATP's matrix derives it (docs/atp.md): one switch port;
# both directions of a torus ring (2 x 25 GB/s).
SYSTEMS = [("nvl-switch", "switch.h5", "IC5 NVLink-Network switch", 450e9),
           ("gpu-torus", "torus.h5", "IC6 2D torus", 50e9)]
# IC6 reshaped per mesh (no --placement): ATP-1, ATP-2, ATP-4 only; their CSV system names.
RESHAPED = [("gpu-torus-reshaped", "torus_reshaped.h5"),
            ("gpu-torus-reshaped-1link", "torus_reshaped_1link.h5")]
CHIPS = [8, 16, 32, 64]
SERIES = [("1", "ATP-1", "#1f77b4"), ("2", "ATP-2", "#ff7f0e"), ("4", "ATP-4", "#2ca02c"),
          ("opt", "ATP-OPT", "#d62728")]


def closed_form(d1, d2):
    return (14 * d2 + 4 * d1 - 18) / (d1 * d2)


def formula_opt(n):
    return min((closed_form(n // d2, d2), f"{n // d2}x{d2}") for d2 in range(1, n + 1)
               if n % d2 == 0)


def main():
    here = mr.here(__file__)
    mr.require(__file__, "out/switch.h5", "out/torus.h5", "out/torus_reshaped.h5",
               "out/torus_reshaped_1link.h5")  # else: what to run first, exit 2
    out = mr.here(__file__, "out")
    plt = mr.setup_matplotlib()
    fig, axes = plt.subplots(1, len(SYSTEMS), figsize=(11, 4), squeeze=False)
    table, csv_rows = [], []
    for ax, (system, archive, label, group_bw) in zip(axes[0], SYSTEMS):
        delta = 2 * L * B * S * H * E / group_bw
        rows = mr.read_summary(os.path.join(out, archive))
        # Run order in the .ini: per chip count, ATP-1, ATP-2, ATP-4, auto.
        runs = {}
        for n in CHIPS:
            per = [r for r in rows if int(r["chips"]) == n]
            for (series, _, _), r in zip(SERIES, per):
                runs[(n, series)] = r
        for series, name, color in SERIES:
            sim, sim_transfer, form, meshes = [], [], [], []
            for n in CHIPS:
                r = runs[(n, series)]
                d1, d2 = (int(x) for x in r["mesh"].split("x"))
                total = r["comm.launch_s"] + r["comm.sync_s"] + r["comm.transfer_s"]
                sim.append(total / delta)
                sim_transfer.append(r["comm.transfer_s"] / delta)
                form.append(closed_form(d1, d2) if series != "opt" else formula_opt(n)[0])
                meshes.append(r["mesh"])
                csv_rows.append([system, n, name, r["mesh"], f"{closed_form(d1, d2):.4f}",
                                 f"{r['comm.transfer_s'] / delta:.4f}", f"{total / delta:.4f}",
                                 f"{total * 1e3:.4f}"])
                table.append([label, n, name, r["mesh"],
                              f"{closed_form(d1, d2):.3f}" + (f" (formula's best {formula_opt(n)[1]}: {formula_opt(n)[0]:.3f})" if series == "opt" else ""),
                              f"{r['comm.transfer_s'] / delta:.3f}", f"{total / delta:.3f}",
                              f"{100 * (total / delta / closed_form(d1, d2) - 1):+.1f}%"])
            ax.plot(CHIPS, form, "-", color=color, alpha=0.6, label=f"{name} closed form")
            ax.plot(CHIPS, sim, "o", color=color, label=f"{name} simulated")
            if series == "opt":
                for n, y, m in zip(CHIPS, sim, meshes):
                    ax.annotate(m, (n, y), textcoords="offset points", xytext=(4, -10),
                                fontsize=7, color=color)
        if system == "gpu-torus":
            # The tori reshaped to each mesh (run order per chip count: ATP-1, ATP-2, ATP-4);
            # plotted: ATP-2 and ATP-4 with length-2 dimensions joined twice (the default).
            for csv_system, reshaped in RESHAPED:
                rows2 = mr.read_summary(os.path.join(out, reshaped))
                for k, (series, name, color) in enumerate(SERIES[:3]):
                    pts = []
                    for n in CHIPS:
                        r = [r for r in rows2 if int(r["chips"]) == n][k]
                        d1, d2 = (int(x) for x in r["mesh"].split("x"))
                        total = r["comm.launch_s"] + r["comm.sync_s"] + r["comm.transfer_s"]
                        pts.append(total / delta)
                        csv_rows.append([csv_system, n, name, r["mesh"],
                                         f"{closed_form(d1, d2):.4f}",
                                         f"{r['comm.transfer_s'] / delta:.4f}",
                                         f"{total / delta:.4f}", f"{total * 1e3:.4f}"])
                    if csv_system == "gpu-torus-reshaped" and series != "1":
                        ax.plot(CHIPS, pts, "x", color=color, markersize=7,
                                label=f"{name}, torus reshaped to the mesh")
            ax.legend(fontsize=7)
        ax.set_xscale("log", base=2)
        ax.set_xticks(CHIPS)
        ax.set_xticklabels([str(n) for n in CHIPS])
        ax.set_xlabel("GPUs")
        ax.set_ylabel("communication time per layer / Δ")
        ax.set_title(f"{label} (GroupBW {group_bw / 1e9:.0f} GB/s)", fontsize=10)
        ax.set_ylim(bottom=0)
    axes[0, 0].legend(fontsize=7, ncol=2)
    fig.suptitle("ATP Figure 12 in meshsim: lines = (14·d2 + 4·d1 − 18)/(d1·d2); "
                 "points = simulated collectives per chip (launch + sync + transfer)", fontsize=10)
    mr.save_figure(fig, os.path.join(here, "atp_fig12_topologies"))
    mr.write_csv(os.path.join(here, "atp_fig12_topologies.csv"),
                 ["system", "gpus", "series", "mesh", "closed_form_delta", "sim_transfer_delta",
                  "sim_comm_delta", "sim_comm_ms"], csv_rows)
    text = ("# ATP Figure 12 in meshsim: communication time per layer in units of Δ\n\n"
            + mr.markdown_table(["interconnect", "GPUs", "series", "mesh", "closed form",
                                 "sim transfer", "sim launch+sync+transfer", "sim vs closed form"],
                                table, "lrllrrrr"))
    mr.write_text(os.path.join(out, "table.md"), text)


if __name__ == "__main__":
    main()
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
