#!/usr/bin/env python3
"""Fuzzes the meshsim command line: random argument lists, damaged config/experiment files and
damaged HDF5 archives through the real binary, one process per case.

Every case must exit 0 (accepted) or 2 (bad input, one line on stderr) and must never print a
sanitizer report; anything else (a crash, exit 1, a timeout, an AddressSanitizer/UBSan/LeakSanitizer
report) is a finding, printed with the arguments that reproduce it. Run it on a sanitizer build
(scripts/sanitize.sh does), or on any build as a smoke test.

Usage: scripts/cli_fuzz.py --binary build-asan/sim/meshsim [--cases 300] [--seed 1]
                           [--time-budget 110] [--jobs 2]
"""

import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:",
                     "UndefinedBehaviorSanitizer", "AddressSanitizer:")

COMMANDS = ["run", "compare", "tune", "reshard", "sweep", "merge", "trace", "report", "list",
            "show", "help", "completion", "bogus", ""]

# Option names worth hitting: the real ones (run, sweep, tune, reshard, trace, report) and a few
# that are not options at all.
OPTIONS = [
    "config", "system", "chips", "mesh", "placement", "topology", "workload", "model", "hidden",
    "heads", "ffn", "layers", "batch", "seq", "pass", "gemm", "collective", "group", "bytes",
    "algorithm", "dataflow", "slices", "chunks", "param", "stages", "dp", "microbatches", "schedule",
    "overlap", "delay-dw", "recompute", "reshard", "reshard-scheduler", "seed", "set", "steps",
    "step-time", "out", "trace", "trace-format", "trace-detail", "format", "max-ops", "max-flows",
    "max-timeline-bytes", "algorithms", "cost-model", "validate", "atp-bandwidth", "src-mesh",
    "src-placement", "src-spec", "dst-mesh", "dst-placement", "dst-spec", "shape", "dtype-bytes",
    "strategy", "scheduler", "dfs-budget", "jobs", "shard", "timelines", "keep-going", "run",
    "detail", "markdown", "dot", "hbm.bandwidth", "link.bandwidth", "comm.two_level",
    "comm.packets", "help", "version", "nope", "chip", "c",
]

VALUES = [
    "0", "1", "2", "3", "4", "8", "16", "-1", "-0", "07", "1e3", "1.5", "nan", "inf", "-inf",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "18446744073709551616",
    "4294967296", "2147483648", "65536", "", " ", "auto", "x", "4x4", "2x8", "0x4", "4x0", "-2x-8",
    "1x1", "16x16", "3x", "x3", "4x4x4", "0-3", "3-0", "0-", "-", "0,0", "0,1,2,3", "8-15",
    "99999999-100000000", "chain", "llm", "gemm", "collective", "layer", "pipeline", "gpt3",
    "atp-m1", "u-transformer", "tpuv4", "dgx-a100", "p3.8xlarge", "a100-ib", "torus2d", "ring",
    "fattree", "switch", "hierarchical", "graphviz:/nonexistent", "graphviz:", "meshslice", "wang",
    "summa", "cannon", "tp1d", "fsdp", "atp", "megatron", "tp2d", "collective", "allgather",
    "alltoall", "sendrecv", "os", "ls", "rs", "fwd", "bwd", "train", "row", "col", "all",
    "64MiB", "1KiB", "1B", "0B", "-1MiB", "16EiB", "1e30GB", "10us", "0us", "-1us", "1e400s",
    "1ns", "table", "json", "csv", "xml", "perfetto", "full", "minimal", "gpipe", "1f1b",
    "eager-1f1b", "send-recv", "broadcast", "signal", "naive", "dfs", "greedy", "ensemble",
    "RS01R", "S0RR", "S01", "R", "S2", "SS", "1024,1024,512", "1,1", "0,1", "1024,,512",
    "8192,8192,8192", "1,1,1", "0,0,0", "a,b,c", "1/1", "2/1", "0/0", "1/0", "K/N",
    "hbm.bandwidth=600GB/s", "link.bandwidth=0", "comm.two_level=2", "nokey=1", "=", "a=",
    "chunks=2", "chunks=3", "slices=0", "dataflow=xs", "chunks=",
    "simulation-fitted", "tpuv4-measured", "2x2:1,1", "2x2:", "x:1,2", "%s%n%x", "\\x00",
    "é", "\n", "--", "-", "--chips", "algorithms", "systems", "models", "bash", "zsh", "fish",
]


# Small valid invocations; a case mutates one of them (a value replaced, an option added or
# dropped), so that the fuzz also reaches the simulator and the writers, not only the parser.
TEMPLATES = [
    ["run", "--workload", "chain", "--chips", "4", "--steps", "3"],
    ["run", "--workload", "gemm", "--gemm", "256,256,512", "--chips", "4", "--mesh", "2x2",
     "--algorithm", "meshslice", "--slices", "1"],
    ["run", "--workload", "collective", "--collective", "allgather", "--bytes", "1MiB",
     "--chips", "4", "--mesh", "2x2", "--group", "row"],
    ["run", "--workload", "llm", "--hidden", "256", "--heads", "2", "--chips", "4", "--batch",
     "2", "--seq", "64", "--mesh", "2x2"],
    ["run", "--workload", "layer", "--system", "dgx-a100", "--chips", "8", "--hidden", "256",
     "--heads", "4", "--seq", "64", "--algorithm", "atp"],
    ["run", "--workload", "pipeline", "--system", "p3.8xlarge", "--chips", "8", "--hidden",
     "256", "--heads", "4", "--layers", "4", "--seq", "64", "--stages", "2", "--dp", "2",
     "--mesh", "2x1", "--batch", "8", "--microbatches", "4"],
    ["compare", "--workload", "gemm", "--gemm", "256,256,512", "--chips", "4",
     "--algorithms", "meshslice,collective"],
    ["tune", "--chips", "16", "--hidden", "256", "--heads", "2", "--batch", "8", "--seq", "64"],
    ["reshard", "--system", "p3.8xlarge", "--chips", "8", "--src-mesh", "2x2", "--src-placement",
     "0-3", "--src-spec", "RS0", "--dst-mesh", "2x2", "--dst-placement", "4-7", "--dst-spec",
     "S0R", "--shape", "64,64"],
    ["show", "topology", "hierarchical", "--system", "dgx-a100", "--chips", "16"],
    ["show", "system", "a100-ib"],
    ["list", "algorithms"],
]


def mutated_args(rng, files, work):
    args = list(rng.choice(TEMPLATES))
    for _ in range(rng.randint(0, 2)):
        r = rng.random()
        if r < 0.45 and len(args) > 2:
            i = rng.randrange(1, len(args))
            args[i] = rng.choice(VALUES + files)
        elif r < 0.8:
            name = rng.choice(OPTIONS)
            if name in ("out", "trace"):
                args += ["--" + name, os.path.join(work, rng.choice(
                    ["o.h5", "t.json", "t.pftrace", "o.json", "sub/none.h5", ""]))]
            else:
                args += ["--" + name, rng.choice(VALUES)]
        elif len(args) > 2:
            del args[rng.randrange(1, len(args))]
    return args


def random_args(rng, files):
    """One random argument list (without the binary)."""
    args = []
    cmd = rng.choice(COMMANDS)
    if cmd:
        args.append(cmd)
    if cmd in ("list", "show", "completion", "help") and rng.random() < 0.7:
        args.append(rng.choice(["algorithms", "models", "systems", "topologies", "collectives",
                                "workloads", "system", "topology", "bash", "zsh", "run",
                                "tpuv4", "torus2d", "nope", "--markdown"]))
        if cmd == "show" and rng.random() < 0.7:
            args.append(rng.choice(VALUES))
    if cmd in ("sweep", "trace", "report", "merge") and rng.random() < 0.8:
        args.append(rng.choice(files))
        if cmd == "merge":
            args.append(rng.choice(files))
    if cmd in ("run", "compare", "tune") or (cmd in ("reshard", "show") and rng.random() < 0.85):
        # Keep accepted runs small: sanitizer builds are slow, and big runs test nothing new.
        args += ["--chips", rng.choice(["1", "2", "4", "8", "16"])]
        if rng.random() < 0.6:
            args += ["--workload", rng.choice(["chain", "gemm", "collective", "llm", "layer"])]
        if rng.random() < 0.8:
            args += ["--max-ops", rng.choice(["20000", "100000", "1"])]
    for _ in range(rng.randint(0, 6)):
        r = rng.random()
        name = rng.choice(OPTIONS)
        if r < 0.75:
            args += ["--" + name, rng.choice(VALUES + files)]
        elif r < 0.85:
            args.append("--" + name)
        elif r < 0.92:
            args.append("--" + name + "=" + rng.choice(VALUES))
        else:
            args.append(rng.choice(VALUES + files + ["-h", "--", "-x", "---chips"]))
    return args


def damaged_files(rng, binary, work):
    """Creates valid and damaged inputs in `work`; returns their paths."""
    env = dict(os.environ)
    good = os.path.join(work, "good.h5")
    subprocess.run([binary, "run", "--workload", "chain", "--chips", "4", "--out", good,
                    "--format", "csv"], cwd=work, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120, check=False)
    files = [good, os.path.join(work, "missing.h5"), work]
    if os.path.exists(good):
        data = open(good, "rb").read()
        for i in range(6):
            cut = os.path.join(work, f"truncated{i}.h5")
            with open(cut, "wb") as f:
                f.write(data[:rng.randint(0, len(data) - 1)])
            files.append(cut)
        for i in range(10):
            flipped = bytearray(data)
            for _ in range(rng.choice([1, 4, 64])):
                pos = rng.randrange(len(flipped))
                flipped[pos] = rng.randrange(256)
            path = os.path.join(work, f"flipped{i}.h5")
            with open(path, "wb") as f:
                f.write(bytes(flipped))
            files.append(path)
        # Without meshsim's 16-byte integrity trailer (as an HDF5 tool rewriting the file leaves
        # it), damage is found by libhdf5 itself, not by meshsim's probe.
        bare = data[:-16]
        for i in range(8):
            flipped = bytearray(bare)
            pos = rng.randrange(len(flipped))
            flipped[pos] ^= 1 << rng.randrange(8)
            path = os.path.join(work, f"notrailer{i}.h5")
            with open(path, "wb") as f:
                f.write(bytes(flipped))
            files.append(path)
    for name, text in [
        ("empty.h5", b""),
        ("text.h5", b"not an archive\n"),
        ("good.ini", b"workload = chain\nchips = [2, 4]\nmax-ops = 100000\n"),
        ("bad1.ini", b"chips = [2, 4\n[zip]\nchips\n"),
        ("bad2.ini", b"[filter]\nskip = chips=4\n= 3\nworkload chain\n"),
        ("bad3.ini", b"\x00\xff\xfe garbage = = =\n[[[\n"),
        ("bad4.ini", b"chips = " + b"1," * 2000 + b"\nworkload = chain\n"),
        ("bad5.ini", b"config = bad5.ini\n"),
        ("conf.ini", b"workload = chain\nchips = 4\nset = hbm.bandwidth=1GB/s\n"),
    ]:
        path = os.path.join(work, name)
        with open(path, "wb") as f:
            f.write(text)
        files.append(path)
    return files


def run_case(binary, args, work, timeout):
    start = time.monotonic()
    try:
        p = subprocess.run([binary] + args, cwd=work, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
                           check=False)
        stderr = p.stderr.decode("utf-8", "replace")
        return args, p.returncode, stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        stderr = (e.stderr or b"").decode("utf-8", "replace")
        return args, None, stderr, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-budget", type=float, default=110,
                        help="stop starting new cases after this many seconds")
    parser.add_argument("--timeout", type=float, default=30, help="seconds per case")
    parser.add_argument("--jobs", type=int, default=2)
    opts = parser.parse_args()
    binary = os.path.abspath(opts.binary)
    rng = random.Random(opts.seed)
    work = tempfile.mkdtemp(prefix="meshsim-fuzz-")
    start = time.monotonic()
    findings, timeouts, ran, codes = [], [], 0, {}
    try:
        files = damaged_files(rng, binary, work)
        cases = [mutated_args(rng, files, work) if rng.random() < 0.5 else random_args(rng, files)
                 for _ in range(opts.cases)]
        # Every damaged file through every reader at least once.
        for f in files:
            cases.append(["report", f])
            cases.append(["trace", f, "--out", os.path.join(work, "t.json")])
            cases.append(["merge", os.path.join(work, "merged.h5"), f, files[0]])
            cases.append(["sweep", f, "--jobs", "1", "--out", os.path.join(work, "s.h5")])
            cases.append(["run", "--config", f])
        with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
            pending = set()
            it = iter(cases)
            while True:
                while len(pending) < opts.jobs and time.monotonic() - start < opts.time_budget:
                    args = next(it, None)
                    if args is None:
                        break
                    pending.add(pool.submit(run_case, binary, args, work, opts.timeout))
                if not pending:
                    break
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in done:
                    args, rc, stderr, _ = fut.result()
                    ran += 1
                    codes[rc] = codes.get(rc, 0) + 1
                    sanitizer = any(m in stderr for m in SANITIZER_MARKERS)
                    if rc is None and not sanitizer:
                        timeouts.append(args)
                    elif sanitizer or rc not in (0, 2):
                        findings.append((args, rc, stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    elapsed = time.monotonic() - start
    print(f"cli_fuzz: {ran} of {len(cases)} cases in {elapsed:.0f} s (seed {opts.seed}); "
          f"exit codes {dict(sorted(codes.items(), key=lambda kv: str(kv[0])))}; "
          f"{len(timeouts)} timed out after {opts.timeout:.0f} s; {len(findings)} findings")
    for args in timeouts[:5]:
        print("  timeout (slow, not a finding):", " ".join(repr(a) for a in args))
    for args, rc, stderr in findings:
        print(f"\nFINDING exit {rc}: meshsim", " ".join(repr(a) for a in args))
        print("  " + "\n  ".join(stderr.strip().splitlines()[:40]))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
