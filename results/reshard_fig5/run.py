#!/usr/bin/python3
"""Figure 5 (single device → multiple devices): 1 sender GPU (host 0) → m receiver GPUs, 1 GiB
replicated (RRR → RRR, (1024, 1024, 512) fp16). Group "1 host": 1–4 GPUs of host 1; group
"2 GPUs/host": 2 GPUs on each of 1–4 hosts. Writes fig5.csv."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

STRATEGIES = ["send-recv", "local-allgather", "global-allgather", "broadcast"]


def main():
    rows = []
    setups = [("1 host", m, 1, f"1x{m}", f"4-{3 + m}") for m in range(1, 5)]
    setups += [("2 GPUs/host", 2 * n, n, f"{n}x2", ",".join(f"{4 * h}-{4 * h + 1}"
                                                            for h in range(1, n + 1)))
               for n in range(1, 5)]
    for group, gpus, hosts, mesh, placement in setups:
        for s in STRATEGIES:
            r = mrs.run(["--src-mesh", "1x1", "--src-placement", "0", "--src-spec", "RRR",
                         "--dst-mesh", mesh, "--dst-placement", placement, "--dst-spec", "RRR",
                         "--shape", mrs.SHAPE, "--strategy", s, "--scheduler", "naive"])
            rows.append([group, gpus, hosts, s, f"{r['makespan_s']:.6f}",
                         f"{r['model_makespan_s']:.6f}", r["inter_host_bytes"]])
            print(group, gpus, s, f"{r['makespan_s']:.4f} s", flush=True)
    mrs.write_csv(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fig5.csv"),
                  ["group", "receiver_gpus", "receiver_hosts", "strategy", "time_s",
                   "model_time_s", "inter_host_bytes"], rows)


if __name__ == "__main__":
    main()
