#!/usr/bin/python3
"""Figure 6 (multi-device → multi-device): the nine cases of Table 2 on p3.8xlarge, tensor
(1024, 1024, 512) fp16. Methods as in §5.1.2: Send/Recv and Alpa (local all-gather) with the
greedy load balance of §3.2, Ours = broadcast + the DFS/randomized-greedy ensemble; Signal
(1 byte per unit task) as the lower bound. Writes fig6.csv."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "send-recv", "load-balance"),
           ("Alpa", "local-allgather", "load-balance"),
           ("Ours", "broadcast", "ensemble"),
           ("Signal", "signal", "ensemble")]


def main():
    rows = []
    for case in range(1, 10):
        for name, strategy, scheduler in METHODS:
            r = mrs.run(mrs.table2_args(case) + ["--strategy", strategy, "--scheduler", scheduler])
            rows.append([case, name, strategy, scheduler, r["unit_tasks"],
                         f"{r['makespan_s']:.6f}", f"{r['model_makespan_s']:.6f}",
                         r["inter_host_bytes"]])
            print(case, name, r["unit_tasks"], f"{r['makespan_s']:.4f} s", flush=True)
    mrs.write_csv(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fig6.csv"),
                  ["case", "method", "strategy", "scheduler", "unit_tasks", "time_s",
                   "model_time_s", "inter_host_bytes"], rows)


if __name__ == "__main__":
    main()
