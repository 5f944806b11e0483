#!/usr/bin/python3
"""Figure 6 (multi-device → multi-device): the nine cases of Table 2 on p3.8xlarge, tensor
(1024, 1024, 512) fp16. Methods as in §5.1.2: Send/Recv and Alpa (local all-gather) with the
greedy load balance of §3.2, Ours = broadcast + the DFS/randomized-greedy ensemble; Signal
(1 byte per unit task) as the lower bound. Writes fig6.csv, and call_overhead.csv: case 4 under
Alpa and Ours with a per-call cost on every point-to-point transfer (`stack.p2p.call_overhead`),
which no preset sets (no source states one): what such a cost could do to the speed-up."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "send-recv", "load-balance"),
           ("Alpa", "local-allgather", "load-balance"),
           ("Ours", "broadcast", "ensemble"),
           ("Signal", "signal", "ensemble")]

# Case 4: each of its 64 unit tasks goes to one receiver GPU, so both methods send it with one
# point-to-point call, and a per-call cost reaches both alike.
CALL_OVERHEAD_CASE = 4
CALL_OVERHEADS = ["0", "1ms", "10ms", "100ms"]


def call_overhead_sweep():
    rows = []
    for c in CALL_OVERHEADS:
        for label, strategy, scheduler in (m for m in METHODS if m[0] in ("Alpa", "Ours")):
            r = mrs.run(mrs.table2_args(CALL_OVERHEAD_CASE)
                        + ["--strategy", strategy, "--scheduler", scheduler,
                           "--set", f"stack.p2p.call_overhead={c}"])
            rows.append([CALL_OVERHEAD_CASE, c, label, r["unit_tasks"], f"{r['makespan_s']:.6f}"])
    mrs.write_csv(os.path.join(HERE, "call_overhead.csv"),
                  ["case", "call_overhead", "method", "unit_tasks", "time_s"], rows)


if __name__ == "__main__":
    mrs.run_cases(HERE, "fig6", METHODS)
    call_overhead_sweep()
