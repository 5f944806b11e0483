#!/usr/bin/env python3
"""Figure 8 plot: fig8.csv → fig8.png (200 dpi) + fig8.svg, grouped bars per Table 2 case."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plotenv  # noqa: E402,F401  (first: re-executes under /usr/bin/python3 without matplotlib)
import meshsim_reshard as mrs  # noqa: E402

METHODS = [("Naive", "#9467bd"), ("Load balance only", "#2ca02c"), ("Ours", "#d62728")]

if __name__ == "__main__":
    mrs.plot_cases(HERE, "fig8", METHODS, "Figure 8 (meshsim, p3.8xlarge): load-balance ablation, broadcast, Table 2 cases")
    import table  # noqa: E402  (the README's tables and verdicts, from the same CSV)
    table.main()
