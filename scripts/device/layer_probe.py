#!/usr/bin/env python3
"""Times one GPT transformer layer, forward and backward, as an eager PyTorch program of unfused
kernels runs it on one GPU, op by op, with its forward linear layers split into 1, 2 or 4 chunks
of the batch (ATP §4.1: one GeMM per chunk writing its rows of a preallocated output).

Run on a machine with one NVIDIA GPU and PyTorch:
    python3 scripts/device/layer_probe.py OUT.json
It prints one line per measurement and writes them all to OUT.json. What it found, on which card
and software, is in docs/measurements/layer_probe.md, beside what meshsim predicts for the same
layer on one GPU.

The layer is the one meshsim's `--workload layer` lowers (workloads/layer.h) written out as the
kernels an eager program without fused kernels launches (the ATP paper's §5.1: "we do not use
optimized kernels"): LayerNorm; the QKV GeMM; the head split (a strided view, copied contiguous
for the batched GeMMs); the score GeMM; the 1/sqrt(d) scaling and the causal mask as two kernels
over the scores; softmax; the context GeMM; its heads merged back (a copy); the output GeMM; the
residual add; LayerNorm; FFN up, GeLU, FFN down; the residual add. Backward is the same ops'
gradients, each FC layer's dX GeMM before its dW GeMM, written with aten's backward kernels
(native_layer_norm_backward, _softmax_backward_data, gelu_backward). Only the forward FC GeMMs are
chunked; everything else runs once, as in ATP's benchmark.

Measurements (CUDA events on the one stream, medians of REPS iterations after WARMUP):
  - per op: the GPU time between the events recorded before and after it (the host issues ahead
    of the GPU here, so this is the kernels' time), for chunks 1 and 4;
  - per pass: forward and backward time for chunks 1, 2 and 4;
  - the host: wall time to issue the forward pass (no synchronisation inside it).
"""
import json
import math
import statistics
import sys
import time

import torch

RESULTS = {}
REPS, WARMUP = 7, 3
# (name, batch, seq, hidden, heads): ATP's M2 and M3 (Table 2) at batch 4, sequence 2048.
LAYERS = [("atp-m2", 4, 2048, 4096, 32), ("atp-m3", 4, 2048, 8192, 64)]
CHUNKS = [1, 2, 4]


def log(key, value):
    RESULTS[key] = value
    print(f"{key} = {value}", flush=True)


class Timer:
    """Events between named ops on the current stream; `ms()` gives each op's GPU time."""

    def __init__(self, on):
        self.on = on
        self.marks = []
        if on:
            self.mark("start")

    def mark(self, name):
        if self.on:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append((name, e))

    def ms(self):
        torch.cuda.synchronize()
        out = {}
        for (_, a), (name, b) in zip(self.marks, self.marks[1:]):
            out[name] = out.get(name, 0.0) + a.elapsed_time(b)
        return out


class Layer:
    def __init__(self, b, s, h, a, dev, dtype):
        self.b, self.s, self.h, self.a, self.d = b, s, h, a, h // a
        f = 4 * h
        g = torch.Generator(device=dev).manual_seed(0)

        def w(*shape):
            return (torch.randn(*shape, device=dev, generator=g) * 0.02).to(dtype)

        self.ln1_w, self.ln1_b = torch.ones(h, device=dev, dtype=dtype), w(h)
        self.ln2_w, self.ln2_b = torch.ones(h, device=dev, dtype=dtype), w(h)
        self.w_qkv, self.w_out = w(h, 3 * h), w(h, h)  # stored [in, out]: Y = X·W
        self.w_up, self.w_down = w(h, f), w(f, h)
        self.mask = torch.tril(torch.ones(s, s, device=dev, dtype=torch.bool))
        # Made once: a Python scalar turned into a device tensor per call would copy (and wait).
        self.neg = torch.tensor(-10000.0, device=dev, dtype=dtype)
        self.zero = torch.tensor(0.0, device=dev, dtype=dtype)
        self.x = w(b, s, h) * 50
        self.dy = w(b, s, h) * 50
        self.dev, self.dtype = dev, dtype

    def linear(self, x2d, wt, chunks):
        """Y = X·W with X's rows in `chunks` pieces, each GeMM writing its rows of Y."""
        y = torch.empty(x2d.shape[0], wt.shape[1], device=self.dev, dtype=self.dtype)
        for xc, yc in zip(torch.chunk(x2d, chunks), torch.chunk(y, chunks)):
            torch.mm(xc, wt, out=yc)
        return y

    def forward(self, chunks, t):
        b, s, h, a, d = self.b, self.s, self.h, self.a, self.d
        x = self.x.view(b * s, h)
        t.mark("start.fwd")
        ln1, mean1, rstd1 = torch.ops.aten.native_layer_norm(x, [h], self.ln1_w, self.ln1_b, 1e-5)
        t.mark("ln1.fwd")
        qkv = self.linear(ln1, self.w_qkv, chunks)
        t.mark("qkv.fwd")
        heads = qkv.view(b, s, a, 3 * d).permute(0, 2, 1, 3)  # [b, a, s, 3d]
        q = heads[..., :d].contiguous().view(b * a, s, d)
        kt = heads[..., d:2 * d].transpose(-1, -2).contiguous().view(b * a, d, s)
        v = heads[..., 2 * d:].contiguous().view(b * a, s, d)
        t.mark("head_split.fwd")
        scores = torch.bmm(q, kt)
        t.mark("attn_score.fwd")
        scaled = scores / math.sqrt(d)
        t.mark("scale.fwd")
        masked = torch.where(self.mask, scaled.view(b, a, s, s), self.neg)
        t.mark("mask.fwd")
        probs = torch.softmax(masked, dim=-1)
        t.mark("softmax.fwd")
        ctx = torch.bmm(probs.view(b * a, s, s), v)
        t.mark("attn_context.fwd")
        ctx2d = ctx.view(b, a, s, d).transpose(1, 2).contiguous().view(b * s, h)
        t.mark("head_merge.fwd")
        out = self.linear(ctx2d, self.w_out, chunks)
        t.mark("attn_out.fwd")
        x1 = x + out
        t.mark("residual1.fwd")
        ln2, mean2, rstd2 = torch.ops.aten.native_layer_norm(x1, [h], self.ln2_w, self.ln2_b, 1e-5)
        t.mark("ln2.fwd")
        up = self.linear(ln2, self.w_up, chunks)
        t.mark("ffn_up.fwd")
        act = torch.nn.functional.gelu(up)
        t.mark("gelu.fwd")
        down = self.linear(act, self.w_down, chunks)
        t.mark("ffn_down.fwd")
        y = x1 + down
        t.mark("residual2.fwd")
        return dict(x=x, ln1=ln1, mean1=mean1, rstd1=rstd1, q=q, kt=kt, v=v, probs=probs,
                    ctx2d=ctx2d, x1=x1, ln2=ln2, mean2=mean2, rstd2=rstd2, up=up, act=act, y=y)

    def backward(self, c, t):
        b, s, h, a, d = self.b, self.s, self.h, self.a, self.d
        dy = self.dy.view(b * s, h)
        t.mark("start.bwd")
        d_act = torch.mm(dy, self.w_down.t())
        t.mark("ffn_down.bwd_data")
        dw_down = torch.mm(c["act"].t(), dy)
        t.mark("ffn_down.bwd_weight")
        d_up = torch.ops.aten.gelu_backward(d_act, c["up"])
        t.mark("gelu.bwd")
        d_ln2 = torch.mm(d_up, self.w_up.t())
        t.mark("ffn_up.bwd_data")
        dw_up = torch.mm(c["ln2"].t(), d_up)
        t.mark("ffn_up.bwd_weight")
        d_x1_ln, _, _ = torch.ops.aten.native_layer_norm_backward(
            d_ln2, c["x1"], [h], c["mean2"], c["rstd2"], self.ln2_w, self.ln2_b,
            [True, False, False])
        t.mark("ln2.bwd")
        d_x1 = dy + d_x1_ln
        t.mark("residual2.bwd")
        d_ctx2d = torch.mm(d_x1, self.w_out.t())
        t.mark("attn_out.bwd_data")
        dw_out = torch.mm(c["ctx2d"].t(), d_x1)
        t.mark("attn_out.bwd_weight")
        d_ctx = d_ctx2d.view(b, s, a, d).transpose(1, 2).contiguous().view(b * a, s, d)
        t.mark("head_merge.bwd")
        d_probs = torch.bmm(d_ctx, c["v"].transpose(1, 2))
        t.mark("attn_context.bwd_data")
        d_v = torch.bmm(c["probs"].view(b * a, s, s).transpose(1, 2), d_ctx)
        t.mark("attn_context.bwd_weight")
        d_masked = torch.ops.aten._softmax_backward_data(d_probs.view(b, a, s, s), c["probs"], -1,
                                                         self.dtype)
        t.mark("softmax.bwd")
        d_scaled = torch.where(self.mask, d_masked, self.zero)
        t.mark("mask.bwd")
        d_scores = (d_scaled / math.sqrt(d)).view(b * a, s, s)
        t.mark("scale.bwd")
        d_q = torch.bmm(d_scores, c["kt"].transpose(1, 2))
        t.mark("attn_score.bwd_data")
        d_k = torch.bmm(d_scores.transpose(1, 2), c["q"])
        t.mark("attn_score.bwd_weight")
        d_qkv = torch.cat([d_q.view(b, a, s, d), d_k.view(b, a, s, d), d_v.view(b, a, s, d)],
                          dim=-1).permute(0, 2, 1, 3).contiguous().view(b * s, 3 * h)
        t.mark("head_split.bwd")
        d_ln1 = torch.mm(d_qkv, self.w_qkv.t())
        t.mark("qkv.bwd_data")
        dw_qkv = torch.mm(c["ln1"].t(), d_qkv)
        t.mark("qkv.bwd_weight")
        d_x_ln, _, _ = torch.ops.aten.native_layer_norm_backward(
            d_ln1, c["x"], [h], c["mean1"], c["rstd1"], self.ln1_w, self.ln1_b,
            [True, False, False])
        t.mark("ln1.bwd")
        dx = d_x1 + d_x_ln
        t.mark("residual1.bwd")
        return dx, (dw_down, dw_up, dw_out, dw_qkv)


def median_dicts(ds):
    return {k: round(statistics.median(d[k] for d in ds), 4) for k in ds[0]}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "layer_probe.json"
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    log("device", props.name)
    log("sms", props.multi_processor_count)
    log("torch", torch.__version__)
    log("cuda", torch.version.cuda)
    for name, b, s, h, a in LAYERS:
        layer = Layer(b, s, h, a, dev, torch.float16)
        for c in CHUNKS:
            for _ in range(WARMUP):
                layer.backward(layer.forward(c, Timer(False)), Timer(False))
            torch.cuda.synchronize()
            per_op, passes, host = [], [], []
            for _ in range(REPS):
                t = Timer(True)
                h0 = time.perf_counter()
                cache = layer.forward(c, t)
                host.append(1e3 * (time.perf_counter() - h0))
                layer.backward(cache, t)
                ms = t.ms()
                per_op.append(ms)
                fwd = sum(v for k, v in ms.items() if k.endswith(".fwd"))
                bwd = sum(v for k, v in ms.items() if not k.endswith(".fwd"))
                passes.append({"fwd_ms": fwd, "bwd_ms": bwd, "layer_ms": fwd + bwd})
                del cache
            p = median_dicts(passes)
            log(f"{name}.chunks{c}.fwd_ms", p["fwd_ms"])
            log(f"{name}.chunks{c}.bwd_ms", p["bwd_ms"])
            log(f"{name}.chunks{c}.layer_ms", p["layer_ms"])
            log(f"{name}.chunks{c}.host_fwd_issue_ms", round(statistics.median(host), 4))
            if c in (1, 4):
                log(f"{name}.chunks{c}.ops_ms", median_dicts(per_op))
        del layer
        torch.cuda.empty_cache()
    with open(out, "w") as fh:
        json.dump(RESULTS, fh, indent=1)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
