#!/usr/bin/env python3
"""When does a communication-like kernel launched during a persistent cuBLAS GeMM start?

Run on a machine with one NVIDIA GPU, PyTorch and CuPy:
    python3 scripts/device/comm_after_gemm_probe.py OUT.json
The compute stream runs R back-to-back GeMMs with a 1-thread kernel between them that writes the
GPU's global timer (so every GeMM's start and end are known on the GPU's clock). While they run,
the host launches on a second stream a kernel of N CTAs (200 KiB of shared memory each: one CTA
per SM, as an NCCL channel) whose CTAs write the timer when they start and then spin for 20 µs.
If each CTA starts at a GeMM boundary, it waited for the persistent GeMM's CTAs to leave their
SMs; if it starts inside a GeMM, it found a free SM. Reported per case: for each CTA, the time
from its start back to the last GeMM boundary and forward to the next, and the GeMM it fell in.
"""
import json
import statistics
import sys
import time

import torch

KERNELS = r"""
__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
extern "C" __global__ void stamp(unsigned long long* t, int i) { t[i] = now(); }
extern "C" __global__ void held(unsigned long long* t, int base, long long spin_ns) {
  extern __shared__ int pad[];
  const unsigned long long t0 = now();
  if (threadIdx.x == 0) t[base + blockIdx.x] = t0;
  while (now() - t0 < (unsigned long long)spin_ns) {
  }
  if (spin_ns < 0) pad[threadIdx.x] = 0;
}
"""


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "comm_after_gemm.json"
    import cupy as cp
    mod = cp.RawModule(code=KERNELS)
    stamp = mod.get_function("stamp")
    held = mod.get_function("held")
    held.max_dynamic_shared_size_bytes = 200 * 1024
    side = torch.cuda.Stream()
    cside = cp.cuda.ExternalStream(side.cuda_stream)
    cmain = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    results = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cases": []}
    for (m, n, k), reps in (((8192, 8192, 8192), 8), ((4096, 4096, 4096), 40),
                            ((2048, 2048, 2048), 200)):
        A = torch.randn(m, k, device="cuda", dtype=torch.float16)
        B = torch.randn(k, n, device="cuda", dtype=torch.float16)
        for _ in range(5):
            torch.matmul(A, B)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.matmul(A, B)
        torch.cuda.synchronize()
        batch_s = time.perf_counter() - t0
        for ctas in (4, 16, 64):
            for trial in range(3):
                stamps = cp.zeros(reps + 1 + ctas, dtype=cp.uint64)
                torch.cuda.synchronize()
                with cmain:
                    stamp((1,), (1,), (stamps, cp.int32(0)))
                for i in range(reps):
                    torch.matmul(A, B)
                    with cmain:
                        stamp((1,), (1,), (stamps, cp.int32(i + 1)))
                time.sleep(batch_s * (0.3 + 0.2 * trial))  # land somewhere inside the batch
                with cside:
                    held((ctas,), (32,), (stamps, cp.int32(reps + 1), cp.int64(20000)),
                         shared_mem=200 * 1024)
                torch.cuda.synchronize()
                s = [int(x) for x in stamps.get()]
                bounds = s[:reps + 1]
                starts = s[reps + 1:]
                rows = []
                for st in starts:
                    i = max(j for j in range(reps + 1) if bounds[j] <= st) if st >= bounds[0] else -1
                    back = (st - bounds[i]) / 1e3 if i >= 0 else None
                    fwd = (bounds[i + 1] - st) / 1e3 if 0 <= i < reps else None
                    rows.append({"gemm": i, "after_boundary_us": back, "before_next_us": fwd})
                gemm_us = statistics.median(
                    (bounds[j + 1] - bounds[j]) / 1e3 for j in range(reps))
                backs = [r["after_boundary_us"] for r in rows if r["after_boundary_us"] is not None]
                case = {"gemm": [m, n, k], "ctas": ctas, "trial": trial,
                        "gemm_us_median": gemm_us, "ctas_start": rows,
                        "gemm_us": [(bounds[j + 1] - bounds[j]) / 1e3 for j in range(reps)]}
                results["cases"].append(case)
                print(f"gemm{m}x{n}x{k} ({gemm_us:.1f} us each) ctas {ctas} trial {trial}: "
                      f"CTA starts after the last GeMM boundary: min {min(backs):.1f} "
                      f"median {statistics.median(backs):.1f} max {max(backs):.1f} us; "
                      f"GeMMs hit {sorted(set(r['gemm'] for r in rows))}", flush=True)
        del A, B
        with open(out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
