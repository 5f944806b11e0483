#!/usr/bin/python3
"""Figure 6 (multi-device → multi-device): the nine cases of Table 2 on p3.8xlarge, tensor
(1024, 1024, 512) fp16. Methods as in §5.1.2: Send/Recv and Alpa (local all-gather) with the
greedy load balance of §3.2, Ours = broadcast + the DFS/randomized-greedy ensemble; Signal
(1 byte per unit task) as the lower bound. Writes fig6.csv."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "send-recv", "load-balance"),
           ("Alpa", "local-allgather", "load-balance"),
           ("Ours", "broadcast", "ensemble"),
           ("Signal", "signal", "ensemble")]

if __name__ == "__main__":
    mrs.run_cases(HERE, "fig6", METHODS)
