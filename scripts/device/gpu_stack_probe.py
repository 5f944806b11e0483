#!/usr/bin/env python3
"""Measures on one real GPU what meshsim's software-stack model (stack.*) needs.

Run on a machine with one NVIDIA GPU, PyTorch and CuPy:
    python3 scripts/device/gpu_stack_probe.py OUT.json
It prints one line per measurement and writes them all to OUT.json. The numbers it produced are
in docs/measurements/gpu_stack_probe.md (with the card, driver and library versions).

What it measures (each a median over repeats, CUDA events for GPU time, wall clock for host time):
  1. launch: host time per PyTorch eager op (a tiny add, host-bound loop), host time per raw CUDA
     launch (CuPy RawKernel), and GPU time per back-to-back tiny kernel (CUDA graph replay, so
     no host cost).
  2. memory-bound kernels: achieved bytes/s of unfused PyTorch softmax (forward and backward over
     b·a·s² fp16 scores), LayerNorm, GeLU, dropout, a residual add and an fp16→fp32 cast, beside
     a device-to-device copy (the practical HBM roofline).
  3. a GeMM beside a communication-like kernel: a copy kernel of N CTAs (as an NCCL kernel runs N
     channels, one CTA each) streaming HBM→HBM on a second stream while cuBLAS GeMMs run on the
     first. Two variants: CTAs that can share an SM with a GeMM CTA (no shared memory) and CTAs
     that cannot (a large dynamic shared-memory request, as NCCL's 512-thread CTAs with their
     register use cannot sit beside a cuBLAS CTA). Reports the GeMM's slowdown and the copy's
     bandwidth per CTA alone and beside the GeMM.
"""
import json
import statistics
import sys
import time

import torch

RESULTS = {}


def log(key, value, note=""):
    RESULTS[key] = value
    print(f"{key} = {value} {note}".rstrip(), flush=True)


def gpu_ms(fn, reps=10, warmup=3, stream=None):
    """Median GPU milliseconds of fn() over reps, timed with CUDA events on the current stream."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def host_us(fn, n, sync=torch.cuda.synchronize, warmup=0):
    """Median host microseconds per call of fn() over 5 loops of n calls (the loop is host-bound:
    the host issues faster than the GPU runs these tiny kernels); the GPU is drained between."""
    for _ in range(warmup):
        fn()
    sync()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        sync()
        runs.append((t1 - t0) / n * 1e6)
    return round(statistics.median(runs), 3)


def probe_launch():
    x = torch.zeros(16, device="cuda")
    log("launch.torch_eager_add_host_us", host_us(lambda: x.add_(1), 2000, warmup=200),
        "(host time per x.add_(1) on the GPU, PyTorch eager)")
    y = torch.zeros(1024, 1024, device="cuda", dtype=torch.float16)
    log("launch.torch_eager_gelu_host_us", host_us(lambda: torch.nn.functional.gelu(y), 1000),
        "(host time per F.gelu on a 1024x1024 fp16 tensor, allocation included)")
    w = torch.zeros(64, 64, device="cuda", dtype=torch.float16)
    log("launch.torch_eager_matmul_host_us", host_us(lambda: torch.matmul(w, w), 1000),
        "(host time per torch.matmul of 64x64 fp16)")
    # One kernel and wait: launch + completion round trip on an idle GPU.
    runs = []
    for _ in range(200):
        t0 = time.perf_counter()
        x.add_(1)
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) * 1e6)
    log("launch.torch_add_roundtrip_us", round(statistics.median(runs), 3),
        "(x.add_(1) then synchronize, wall)")
    # GPU time per back-to-back tiny kernel with no host cost: CUDA graph of 1000 adds.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(1000):
            x.add_(1)
    ms = gpu_ms(g.replay, reps=10)
    log("launch.graph_kernel_gpu_us", round(ms * 1e3 / 1000, 3),
        "(GPU time per tiny kernel, back to back in a CUDA graph)")
    # The same kernels from the host with no graph: GPU-side span per kernel when the host keeps up.
    def eager_1000():
        for _ in range(1000):
            x.add_(1)
    ms = gpu_ms(eager_1000, reps=5)
    log("launch.eager_kernel_gpu_span_us", round(ms * 1e3 / 1000, 3),
        "(GPU span per tiny kernel issued eagerly: max(host, GPU) rate)")
    try:
        import cupy as cp
        k = cp.RawKernel(r'extern "C" __global__ void nop(int* p) { if (p == 0) p[0] = 1; }', "nop")
        buf = cp.zeros(1, dtype=cp.int32)
        launch_us = host_us(lambda: k((1,), (32,), (buf,)), 2000,
                            sync=cp.cuda.Device().synchronize, warmup=100)
        log("launch.raw_cuda_launch_host_us", launch_us,
            "(host time per cuLaunchKernel through CuPy)")
    except Exception as e:  # noqa: BLE001 - report and go on
        log("launch.raw_cuda_launch_error", repr(e))


def probe_memory_kernels():
    f16 = torch.float16
    big = torch.empty(1 << 29, device="cuda", dtype=f16)  # 1 GiB
    dst = torch.empty_like(big)
    ms = gpu_ms(lambda: dst.copy_(big))
    copy_bw = 2 * big.numel() * 2 / (ms * 1e-3)
    log("mem.copy_bytes_per_s", round(copy_bw / 1e9, 1), "GB/s (read + write, 1 GiB d2d copy)")
    del big, dst
    b, a, s = 4, 32, 2048  # ATP's batch 4, seq 2048, M2's 32 heads
    scores = torch.randn(b * a, s, s, device="cuda", dtype=f16)
    nbytes = scores.numel() * 2
    cases = []
    probs = torch.softmax(scores, dim=-1)
    cases.append(("softmax_fwd", lambda: torch.softmax(scores, dim=-1), 2 * nbytes))
    grad = torch.randn_like(probs)
    cases.append(("softmax_bwd",
                  lambda: torch.ops.aten._softmax_backward_data(grad, probs, -1, f16),
                  3 * nbytes))
    cases.append(("dropout_scores",
                  lambda: torch.nn.functional.dropout(scores, p=0.1, training=True),
                  2 * nbytes + scores.numel()))  # + a 1-byte mask
    t, h = b * s, 4096
    xh = torch.randn(t, h, device="cuda", dtype=f16)
    ln = torch.nn.LayerNorm(h, device="cuda", dtype=f16)
    hb = xh.numel() * 2
    cases.append(("layernorm_fwd", lambda: ln(xh), 2 * hb))
    xf = torch.randn(t, 4 * h, device="cuda", dtype=f16)
    cases.append(("gelu_fwd", lambda: torch.nn.functional.gelu(xf), 2 * xf.numel() * 2))
    r = torch.randn_like(xh)
    cases.append(("residual_add", lambda: xh + r, 3 * hb))
    wt = torch.randn(4 * h, h, device="cuda", dtype=f16)
    cases.append(("cast_fp16_to_fp32", lambda: wt.float(), wt.numel() * (2 + 4)))
    for name, fn, moved in cases:
        ms = gpu_ms(fn)
        bw = moved / (ms * 1e-3)
        log(f"mem.{name}.us", round(ms * 1e3, 1))
        log(f"mem.{name}.fraction_of_copy", round(bw / copy_bw, 3),
            f"({bw / 1e9:.0f} GB/s of {copy_bw / 1e9:.0f})")
    # LayerNorm backward through autograd (the kernels PyTorch runs for it).
    xg = xh.clone().requires_grad_(True)
    out = ln(xg)
    go = torch.randn_like(out)
    ms = gpu_ms(lambda: torch.autograd.grad(out, xg, go, retain_graph=True))
    log("mem.layernorm_bwd.us", round(ms * 1e3, 1))
    log("mem.layernorm_bwd.fraction_of_copy", round(3 * hb / (ms * 1e-3) / copy_bw, 3),
        "(3 tensors moved: x, dy, dx; weight grads not counted)")


COPY_SRC = r"""
extern "C" __global__ void comm_copy(const int4* __restrict__ src, int4* __restrict__ dst,
                                     long long n, int rounds) {
  extern __shared__ int4 staging[];
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (int r = 0; r < rounds; ++r)
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
      dst[i] = src[i];
  if (n < 0) staging[threadIdx.x] = src[0];  // keeps the shared-memory request
}
"""


def probe_overlap():
    import cupy as cp
    kern = cp.RawKernel(COPY_SRC, "comm_copy")
    kern.max_dynamic_shared_size_bytes = 200 * 1024
    n16 = (256 << 20) // 16  # 256 MiB buffers
    src = cp.zeros(n16 * 4, dtype=cp.int32)
    dst = cp.zeros(n16 * 4, dtype=cp.int32)
    props = torch.cuda.get_device_properties(0)
    log("device.name", props.name)
    log("device.sms", props.multi_processor_count)
    comm = torch.cuda.Stream()
    cstream = cp.cuda.ExternalStream(comm.cuda_stream)

    def copy_launch(ctas, smem, rounds):
        with cstream:
            kern((ctas,), (512,), (src, dst, cp.int64(n16), cp.int32(rounds)), shared_mem=smem)

    # Copy bandwidth alone per CTA count.
    per_cta = {}
    for smem in (0, 200 * 1024):
        for ctas in (1, 2, 4, 8, 16, 32, 64):
            with torch.cuda.stream(comm):
                ms = gpu_ms(lambda: copy_launch(ctas, smem, 1), reps=5, warmup=1)
            bw = 2 * n16 * 16 / (ms * 1e-3)
            per_cta[(ctas, smem)] = bw
            log(f"overlap.copy_alone.ctas{ctas}.smem{smem // 1024}k_GBps", round(bw / 1e9, 1))
    shapes = [(8192, 8192, 8192), (4096, 4096, 4096), (2048, 8192, 2048), (64, 8192, 8192)]
    for (m, n, k) in shapes:
        A = torch.randn(m, k, device="cuda", dtype=torch.float16)
        B = torch.randn(k, n, device="cuda", dtype=torch.float16)
        # About 20 ms of GeMMs per timed batch (at ~700 TFLOP/s; memory-bound ones run longer).
        reps = min(200, max(5, int(0.02 / (2 * m * n * k / 7e14))))

        def gemms():
            for _ in range(reps):
                torch.matmul(A, B)
        alone = gpu_ms(gemms, reps=5, warmup=1) / reps
        log(f"overlap.gemm{m}x{n}x{k}.alone_us", round(alone * 1e3, 2),
            f"({2 * m * n * k / (alone * 1e-3) / 1e12:.0f} TFLOP/s)")
        for smem in (0, 200 * 1024):
            for ctas in (4, 8, 16, 32):
                # A copy that outlasts the GeMMs: its time alone at this CTA count, times ~3.
                bw = per_cta[(ctas, smem)]
                rounds = max(1, int(3 * alone * reps * 1e-3 * bw / (2 * n16 * 16)) + 1)
                torch.cuda.synchronize()
                c0 = torch.cuda.Event(enable_timing=True)
                c1 = torch.cuda.Event(enable_timing=True)
                with torch.cuda.stream(comm):
                    c0.record()
                    copy_launch(ctas, smem, rounds)
                    c1.record()
                time.sleep(0.002)  # let the copy's CTAs become resident first
                g0 = torch.cuda.Event(enable_timing=True)
                g1 = torch.cuda.Event(enable_timing=True)
                g0.record()
                gemms()
                g1.record()
                torch.cuda.synchronize()
                beside = g0.elapsed_time(g1) / reps
                copy_ms = c0.elapsed_time(c1)
                copy_bw = 2 * n16 * 16 * rounds / (copy_ms * 1e-3)
                tag = f"overlap.gemm{m}x{n}x{k}.ctas{ctas}.smem{smem // 1024}k"
                log(f"{tag}.slowdown", round(beside / alone, 4),
                    f"(GeMM {beside * 1e3:.1f} us beside the copy vs {alone * 1e3:.1f} alone; "
                    f"copy {copy_bw / 1e9:.0f} GB/s over its life vs {bw / 1e9:.0f} alone)")
        del A, B


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "gpu_stack_probe.json"
    log("torch", torch.__version__)
    log("cuda", torch.version.cuda)
    log("device", torch.cuda.get_device_name(0))
    for probe in (probe_launch, probe_memory_kernels, probe_overlap):
        try:
            probe()
        except Exception as e:  # noqa: BLE001 - keep what the others measured
            log(f"{probe.__name__}.error", repr(e))
        with open(out, "w") as f:
            json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
