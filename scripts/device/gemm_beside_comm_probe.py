#!/usr/bin/env python3
"""Measures how a cuBLAS GeMM slows when a communication kernel holds some of the GPU's SMs.

Run on a machine with one NVIDIA GPU, PyTorch and CuPy:
    python3 scripts/device/gemm_beside_comm_probe.py OUT.json [TRACE_DIR]
It prints one line per measurement and writes them all to OUT.json. What it found is in
docs/measurements/gemm_beside_comm.md.

The earlier probe (gpu_stack_probe.py) saw mid-size GeMMs slow by ~30% beside a copy kernel of only
4 CTAs, which a model of waves on the SMs left does not give. This probe separates the causes:
  1. which kernel cuBLAS runs for each shape (name, grid, block, registers, shared memory), from
     PyTorch's profiler: a grid of about one CTA per SM marks a persistent kernel;
  2. the GeMM's time beside a *hold* kernel of N CTAs that only spins on the clock (no memory
     traffic) and asks for 200 KiB of shared memory, so each CTA holds one SM alone: the pure loss
     of N SMs, with no HBM contention;
  3. the same with a 32-thread spinning CTA that asks no shared memory (a GeMM CTA may share its SM);
  4. the same beside a streaming copy of N CTAs of 512 threads, 200 KiB shared memory (SM loss plus
     HBM traffic), as the earlier probe;
  5. with PyTorch's SM carve-out (cuBLASLt's SM-count target) set to N, alone and beside the hold
     kernel: what a communication-aware GeMM launch costs.
Each GeMM time is the median of 3 batches timed with CUDA events; the hold/copy kernel is launched
first on a second stream and outlasts the batch.
"""
import json
import os
import statistics
import sys
import time

import torch

RESULTS = {}


def log(key, value, note=""):
    RESULTS[key] = value
    print(f"{key} = {value} {note}".rstrip(), flush=True)


KERNELS = r"""
extern "C" __global__ void hold_sm(long long cycles, int* sink) {
  extern __shared__ int pad[];
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  if (cycles < 0) pad[threadIdx.x] = sink[0];  // keeps the shared-memory request
}
extern "C" __global__ void comm_copy(const int4* __restrict__ src, int4* __restrict__ dst,
                                     long long n, int rounds) {
  extern __shared__ int4 staging[];
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (int r = 0; r < rounds; ++r)
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
      dst[i] = src[i];
  if (n < 0) staging[threadIdx.x] = src[0];
}
"""

SHAPES = [(8192, 8192, 8192), (8192, 16384, 4096), (4096, 4096, 4096), (3072, 3072, 3072),
          (8192, 4096, 1024), (8192, 1536, 4096), (2048, 8192, 2048), (2048, 2048, 2048),
          (1024, 1024, 1024), (64, 8192, 8192)]
HELD = [1, 2, 4, 8, 16, 32, 64]


def kernel_info(fn, trace_dir, tag):
    """Name, grid, block, registers and shared memory of the kernels fn() runs, from the profiler."""
    from torch.profiler import ProfilerActivity, profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    path = os.path.join(trace_dir, f"{tag}.json")
    prof.export_chrome_trace(path)
    with open(path) as f:
        events = json.load(f).get("traceEvents", [])
    out = []
    for e in events:
        if e.get("cat") == "kernel":
            a = e.get("args", {})
            out.append({"name": e.get("name", "")[:160], "dur_us": e.get("dur"),
                        "grid": a.get("grid"), "block": a.get("block"),
                        "registers": a.get("registers per thread"),
                        "smem": a.get("shared memory"), "blocks_per_sm": a.get("blocks per SM"),
                        "occupancy": a.get("est. achieved occupancy %")})
    os.remove(path)
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "gemm_beside_comm.json"
    trace_dir = sys.argv[2] if len(sys.argv) > 2 else "/tmp"
    import cupy as cp
    props = torch.cuda.get_device_properties(0)
    log("torch", torch.__version__)
    log("cuda", torch.version.cuda)
    log("device", props.name)
    log("sms", props.multi_processor_count)
    mod = cp.RawModule(code=KERNELS)
    hold = mod.get_function("hold_sm")
    copy = mod.get_function("comm_copy")
    big = 200 * 1024
    hold.max_dynamic_shared_size_bytes = big
    copy.max_dynamic_shared_size_bytes = big
    sink = cp.zeros(1, dtype=cp.int32)
    n16 = (256 << 20) // 16
    src = cp.zeros(n16 * 4, dtype=cp.int32)
    dst = cp.zeros(n16 * 4, dtype=cp.int32)
    side = torch.cuda.Stream()
    cside = cp.cuda.ExternalStream(side.cuda_stream)
    clock_hz = 1.98e9  # the H100/H200 boost clock; the hold is sized with a wide margin anyway

    def launch(kind, ctas, seconds):
        with cside:
            if kind == "hold_own":
                hold((ctas,), (32,), (cp.int64(int(seconds * clock_hz)), sink), shared_mem=big)
            elif kind == "hold_share":
                hold((ctas,), (32,), (cp.int64(int(seconds * clock_hz)), sink), shared_mem=0)
            else:  # copy_own: ~90 GB/s per CTA (the earlier probe), sized to outlast `seconds`
                rounds = max(1, int(seconds * ctas * 90e9 / (2 * n16 * 16)) + 1)
                copy((ctas,), (512,), (src, dst, cp.int64(n16), cp.int32(rounds)), shared_mem=big)

    def batch_ms(fn, reps, kind=None, ctas=0):
        """Median over 3 of the GPU time per call of fn() run reps times, beside kind if named."""
        times = []
        for _ in range(3):
            torch.cuda.synchronize()
            if kind:
                launch(kind, ctas, 4 * reps * 1e-3 * est[0] + 0.004)
                time.sleep(0.002)  # the side kernel's CTAs become resident first
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(reps):
                fn()
            b.record()
            torch.cuda.synchronize()
            times.append(a.elapsed_time(b) / reps)
        return statistics.median(times)

    carveout = getattr(torch._C, "_set_sm_carveout_experimental", None)
    log("carveout_available", carveout is not None)
    for (m, n, k) in SHAPES:
        tag = f"gemm{m}x{n}x{k}"
        A = torch.randn(m, k, device="cuda", dtype=torch.float16)
        B = torch.randn(k, n, device="cuda", dtype=torch.float16)
        fn = lambda: torch.matmul(A, B)  # noqa: E731
        for _ in range(5):
            fn()
        est = [1.0]
        alone = batch_ms(fn, 20)
        reps = min(400, max(5, int(8.0 / alone)))  # ~8 ms per batch
        est[0] = alone
        alone = batch_ms(fn, reps)
        est[0] = alone
        log(f"{tag}.alone_us", round(alone * 1e3, 2),
            f"({2 * m * n * k / (alone * 1e-3) / 1e12:.0f} TFLOP/s, {reps} per batch)")
        RESULTS[f"{tag}.kernels"] = kernel_info(fn, trace_dir, tag)
        print(f"{tag}.kernels = {RESULTS[f'{tag}.kernels']}", flush=True)
        for kind in ("hold_own", "hold_share", "copy_own"):
            row = []
            for ctas in HELD:
                beside = batch_ms(fn, reps, kind, ctas)
                RESULTS[f"{tag}.{kind}.n{ctas}"] = round(beside / alone, 4)
                row.append(f"{beside / alone:.3f}")
            print(f"{tag}.{kind} slowdown at N = {HELD}: {' '.join(row)}", flush=True)
        if carveout is not None:
            for ctas in (4, 16, 32):
                try:
                    carveout(ctas)
                    for _ in range(3):
                        fn()
                    c_alone = batch_ms(fn, reps)
                    c_beside = batch_ms(fn, reps, "hold_own", ctas)
                    info = kernel_info(fn, trace_dir, f"{tag}_c{ctas}")
                finally:
                    try:
                        carveout(None)
                    except (TypeError, RuntimeError):
                        carveout(0)
                RESULTS[f"{tag}.carveout{ctas}"] = {
                    "alone": round(c_alone / alone, 4), "beside_hold": round(c_beside / alone, 4),
                    "kernels": info}
                print(f"{tag}.carveout{ctas}: alone {c_alone / alone:.3f}, beside hold "
                      f"{c_beside / alone:.3f} (of the GeMM alone without carve-out); "
                      f"grid {[i['grid'] for i in info]}", flush=True)
        del A, B
        with open(out, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
