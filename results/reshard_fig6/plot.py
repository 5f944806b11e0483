#!/usr/bin/env python3
"""Figure 6 plot: fig6.csv → fig6.png (200 dpi) + fig6.svg, grouped bars per Table 2 case."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plotenv  # noqa: E402,F401  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Send/Recv", "#1f77b4"), ("Alpa", "#ff7f0e"), ("Ours", "#d62728"), ("Signal", "#7f7f7f")]

if __name__ == "__main__":
    mrs.plot_cases(HERE, "fig6", METHODS, "Figure 6 (meshsim, p3.8xlarge): Table 2 cases, (1024,1024,512) fp16")
