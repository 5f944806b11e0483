#!/usr/bin/env python3
"""Prints the Markdown tables of docs/measurements/gemm_beside_comm.md from the probe's JSON.

    python3 scripts/device/gemm_beside_comm_tables.py docs/measurements/gemm_beside_comm_h200.json
"""
import json
import sys

HELD = [1, 2, 4, 8, 16, 32, 64]


def main():
    r = json.load(open(sys.argv[1]))
    shapes = [k[:-len(".kernels")] for k in r if k.endswith(".kernels")]
    print("| GeMM (m×n×k) | kernel | grid × block | alone (µs) | TFLOP/s | carve-out 4, alone |")
    print("|---|---|---|---:|---:|---:|")
    for tag in shapes:
        m, n, k = (int(x) for x in tag[len("gemm"):].split("x"))
        kern = r[tag + ".kernels"][0]
        alone = r[tag + ".alone_us"]
        grid = "×".join(str(g) for g in kern["grid"])
        print(f"| {m}×{n}×{k} | `{kern['name']}` | {grid} × {kern['block'][0]} | {alone} | "
              f"{2 * m * n * k / (alone * 1e-6) / 1e12:.0f} | {r[tag + '.carveout4']['alone']} |")
    for kind, what in (("hold_own", "a spinning kernel, one CTA per SM (no memory traffic)"),
                       ("hold_share", "a spinning 32-thread CTA that a GeMM CTA may share an SM with"),
                       ("copy_own", "a copy kernel, 512 threads per CTA, one CTA per SM")):
        print()
        print(f"GeMM time beside {what}, N CTAs, over the GeMM alone (the faster of its two alone "
              "readings: plain and with a carve-out of 4):")
        print()
        print("| GeMM | " + " | ".join(f"N = {n}" for n in HELD) + " |")
        print("|---|" + "---:|" * len(HELD))
        for tag in shapes:
            base = min(1.0, r[tag + ".carveout4"]["alone"])
            cells = " | ".join(f"{r[f'{tag}.{kind}.n{n}'] / base:.3f}" for n in HELD)
            print(f"| {tag[len('gemm'):].replace('x', '×')} | {cells} |")


if __name__ == "__main__":
    main()
