#!/usr/bin/env python3
"""Measures the host time PyTorch eager spends per collective call (torch.distributed on NCCL),
beside the host time per element-wise op and per matmul that stack.host.* already hold.

Run on a machine with one NVIDIA GPU and PyTorch:
    python3 scripts/device/collective_host_probe.py OUT.json
It prints one line per measurement and writes them all to OUT.json; docs/measurements/
collective_host_probe.md has the numbers it produced, with the card and library versions.

One process, a process group of one rank (world size 1) on the NCCL backend: NCCL has no peer to
move data to, so the GPU work is (at most) a local copy and the loop is host-bound — what is
measured is PyTorch's side of a collective call (argument checks, the Work object, the event that
makes the NCCL stream wait for the compute stream, the NCCL enqueue, the caching allocator's
stream bookkeeping) plus NCCL's enqueue on one rank. With peers NCCL's enqueue does more (proxy
operations for network peers), so these are lower bounds of the host time per call.

Each value is the median over 5 loops of n calls of host microseconds per call (wall clock, the
GPU drained between loops), as gpu_stack_probe.py's host_us.
"""
import json
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

RESULTS = {}


def log(key, value, note=""):
    RESULTS[key] = value
    print(f"{key} = {value} {note}".rstrip(), flush=True)


def host_us(fn, n, warmup=100):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        runs.append((t1 - t0) / n * 1e6)
    return round(statistics.median(runs), 3)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "collective_host_probe.json"
    log("torch", torch.__version__)
    log("cuda", torch.version.cuda)
    log("device", torch.cuda.get_device_name(0))
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=0, world_size=1)
    try:
        log("nccl", ".".join(str(v) for v in torch.cuda.nccl.version()))
    except Exception as e:  # noqa: BLE001 - report and go on
        log("nccl_version_error", repr(e))
    x = torch.zeros(16, device="cuda")
    w = torch.zeros(64, 64, device="cuda", dtype=torch.float16)
    small = torch.zeros(4096, device="cuda", dtype=torch.float16)  # 8 KiB
    log("host.add_us", host_us(lambda: x.add_(1), 2000), "(x.add_(1), the reference op)")
    log("host.matmul_us", host_us(lambda: torch.matmul(w, w), 2000), "(64x64 fp16 torch.matmul)")
    log("host.all_reduce_us", host_us(lambda: dist.all_reduce(small), 2000),
        "(dist.all_reduce of 8 KiB, async_op=False: the compute stream waits for it)")

    def async_wait():
        dist.all_reduce(small, async_op=True).wait()

    log("host.all_reduce_async_wait_us", host_us(async_wait, 2000),
        "(dist.all_reduce(async_op=True) then Work.wait(): ATP's chunk loop)")
    big = torch.zeros(16 << 20, device="cuda", dtype=torch.float16)  # 32 MiB
    log("host.all_reduce_32mib_us", host_us(lambda: dist.all_reduce(big), 200, warmup=20),
        "(dist.all_reduce of 32 MiB: the host time does not grow with the size)")
    log("host.broadcast_us", host_us(lambda: dist.broadcast(small, 0), 2000),
        "(dist.broadcast of 8 KiB)")
    side = torch.cuda.Stream()

    def cross_stream():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            x.add_(1)
        torch.cuda.current_stream().wait_stream(side)

    log("host.cross_stream_add_us", host_us(cross_stream, 2000),
        "(an add on a side stream fenced both ways: two event records and waits + the add)")
    dist.destroy_process_group()
    with open(out, "w") as f:
        json.dump(RESULTS, f, indent=1)


if __name__ == "__main__":
    main()
