#!/usr/bin/python3
"""Figure 8 (load-balance ablation, §5.3.1): the nine cases of Table 2 on p3.8xlarge, tensor
(1024, 1024, 512) fp16. All with broadcast: "Naive" (lowest-index sender, index order), "Load balance
only" (Eq. 4 greedy, its order), "Ours" (the DFS + randomized-greedy ensemble).
Writes fig8.csv."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Naive", "broadcast", "naive"),
           ("Load balance only", "broadcast", "load-balance"),
           ("Ours", "broadcast", "ensemble")]

if __name__ == "__main__":
    mrs.run_cases(HERE, "fig8", METHODS)
