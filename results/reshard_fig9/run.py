#!/usr/bin/python3
"""Figure 9 (overlap ablation, MLSys'23 §5.3.2): U-Transformer, microbatches of 32 sequences, batch
= 32 x microbatches for 2, 4, 16, 64 microbatches; all with broadcast resharding:
Broadcast (1F1B, no overlap), Overlap (1F1B, overlap), Eager-1F1B (overlap), and Eager-1F1B with
backward-weight delaying. Same U-Transformer setup as Figure 7 (DP 2 x OP 2 per stage, FP32).
Writes fig9.csv."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import meshsim_pipeline as mp  # noqa: E402

MICROBATCH = 32
COUNTS = [2, 4, 16, 64]
STAGE = ["--dp", "2", "--mesh", "1x2"]
METHODS = [
    # The baseline on Alpa's runtime (paired, blocking send/recv); the paper's overlapping
    # optimizations on its own asynchronous transfers (the default nccl stack).
    ("Broadcast", mp.BASELINE + ["--schedule", "1f1b"]),
    ("Overlap", ["--schedule", "1f1b", "--overlap", "1"]),
    ("Eager-1F1B", ["--schedule", "eager-1f1b", "--overlap", "1"]),
    ("Eager-1F1B + delay-dw", ["--schedule", "eager-1f1b", "--overlap", "1", "--delay-dw", "1"]),
]

if __name__ == "__main__":
    jobs = [((m, method), mp.UTRANS + STAGE + ["--reshard", "broadcast", "--microbatches", str(m),
                                                "--batch", str(m * MICROBATCH)] + margs)
            for m in COUNTS for method, margs in METHODS]
    res = mp.run_all(jobs)
    rows = []
    for (m, method), (r, cmd) in res.items():
        rows.append([m, m * MICROBATCH, method, f"{r['tflops']:.3f}", f"{r['step_time_s']:.4f}",
                     f"{r['stage0_peak_bytes'] / 1e9:.2f}", f"{r['stage1_peak_bytes'] / 1e9:.2f}",
                     cmd])
    mp.write_csv(os.path.join(HERE, "fig9.csv"),
                 ["microbatches", "batch", "method", "tflops", "step_time_s", "stage0_peak_gb",
                  "stage1_peak_gb", "command"], rows)
    mp.write_wall_times(HERE, "fig9", ["microbatches", "method"], res)
