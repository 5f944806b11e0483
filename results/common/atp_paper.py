"""The ATP paper's (Adaptive Tensor Parallelism) measured numbers and their unit, one place for
the figures that set meshsim beside them (atp_table3_overlap, atp_fig10_sota).

The unit. ATP's Table 2 lists each model's "#TFLOPs per layer" as Megatron-LM's count
72·b·s·h²·(1 + s/(6h)) for b = 4, s = 2048 divided by 2^40, not 1e12, to every printed digit:
M1 2.886e12 / 2^40 = 2.625, M2 1.0720e13 / 2^40 = 9.750, M3 4.1232e13 / 2^40 = 37.50,
M4 9.1534e13 / 2^40 = 83.25 (in 1e12 they would be 2.886, 10.72, 41.23, 91.53; its parameter
counts are binary too: 12h² / (1000·2^20) gives 0.192, 0.768, 1.728). §5 reads "achieved
teraFLOPs per GPU" with those counts, so its TFLOPS per GPU (Table 3, Figure 10) are read here
as 2^40 flop/s: a printed 97.45 is 97.45 · 2^40 / 1e12 = 107.15 · 1e12 flop/s. meshsim reports
`tflops_per_gpu` in 1e12 flop/s; every comparison converts the paper's number with
`in_1e12`. Gains (ratios) do not depend on the unit."""

TFLOPS_UNIT = 2.0**40 / 1e12  # one of the paper's "TFLOPS" in 1e12 flop/s: 1.0995


def in_1e12(paper_tflops):
    """A TFLOPS number as the paper prints it (2^40 flop/s) in meshsim's unit (1e12 flop/s)."""
    return paper_tflops * TFLOPS_UNIT


# Table 3: TFLOPS per GPU as printed, (baseline, chunk 2, chunk 4) per model and interconnect,
# 8 GPUs each. "Baseline" is ATP on its optimal mesh without chunks: on IC1–IC3 the same runs as
# Figure 10's ATP bars (Figure 10's IC4 has 16 GPUs, Table 3's 8).
TABLE3 = {
    "atp-m2": {"IC1": (3.45, 3.46, 3.51), "IC2": (42.82, 43.59, 43.73),
               "IC3": (97.45, 100.38, 98.20), "IC4": (15.31, 17.20, 18.62)},
    "atp-m3": {"IC1": (6.68, 6.79, 6.72), "IC2": (73.61, 75.27, 75.95),
               "IC3": (151.98, 152.64, 151.79), "IC4": (22.47, 26.09, 26.18)},
    "atp-m4": {"IC1": (10.71, 10.70, 10.70), "IC2": (96.83, 100.25, 100.23),
               "IC3": (178.19, 178.17, 177.78), "IC4": (32.52, 34.95, 38.81)},
}
