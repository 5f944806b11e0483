#!/usr/bin/python3
"""Figure 8 (load-balance ablation, §5.3.1): the nine cases of Table 2 on p3.8xlarge, tensor
(1024, 1024, 512) fp16. All with broadcast: "Naive" (lowest-index sender, index order), "Load balance
only" (Eq. 4 greedy, its order), "Ours" (the DFS + randomized-greedy ensemble).
Writes fig8.csv."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Naive", "broadcast", "naive"),
           ("Load balance only", "broadcast", "load-balance"),
           ("Ours", "broadcast", "ensemble")]

def main():
    rows = []
    for case in range(1, 10):
        for name, strategy, scheduler in METHODS:
            r = mrs.run(mrs.table2_args(case) + ["--strategy", strategy, "--scheduler", scheduler])
            rows.append([case, name, strategy, scheduler, r["unit_tasks"],
                         f"{r['makespan_s']:.6f}", f"{r['model_makespan_s']:.6f}",
                         r["inter_host_bytes"]])
            print(case, name, r["unit_tasks"], f"{r['makespan_s']:.4f} s", flush=True)
    mrs.write_csv(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fig8.csv"),
                  ["case", "method", "strategy", "scheduler", "unit_tasks", "time_s",
                   "model_time_s", "inter_host_bytes"], rows)


if __name__ == "__main__":
    main()
