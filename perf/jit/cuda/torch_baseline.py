"""What a PyTorch user would run instead of cuda_call_benchmark's workloads:
the same four computations, on the same shapes, in torch eager and
torch.compile (Inductor), timed the way cuda_call_benchmark times guardjit
(each call followed by a synchronize, wall clock, median of the calls).
scripts/gpu_check.sh runs it beside the benchmark on a GPU machine.

    python3 perf/jit/cuda/torch_baseline.py [--json OUT.json] [--min-time S]

Prints one line per workload and mode: median ms per synchronized call.
"""
import argparse
import json
import statistics
import sys
import time

import torch


def pointwise_chain(a):
    # cuda_call_benchmark's BM_CudaPointwiseChain graph.
    r = torch.relu(a * 1.5 + 2)
    return torch.clamp((r * r - 1) * 0.5 + a, max=3)


def softmax(x):
    return torch.softmax(x, dim=-1)


def layer_norm(x):
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), eps=1e-5)


def matmul_bias_relu(b, x, w):
    return torch.relu(torch.addmm(b, x, w))


def workloads(device):
    g = torch.Generator(device=device).manual_seed(0)

    def rand(*shape):
        return torch.rand(*shape, generator=g, device=device)

    n = 4096
    return [
        ("pointwise chain 64M", pointwise_chain, (rand(1 << 26),)),
        ("softmax 8192x4096", softmax, (rand(8192, 4096),)),
        ("layer norm 8192x4096", layer_norm, (rand(8192, 4096),)),
        ("matmul+bias+relu 4096", matmul_bias_relu, (rand(n), rand(n, n), rand(n, n))),
    ]


def time_ms(fn, args, min_time):
    for _ in range(3):
        fn(*args)
    torch.cuda.synchronize()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 10:
        t0 = time.perf_counter()
        fn(*args)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json")
    parser.add_argument("--min-time", type=float, default=0.5)
    opts = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_baseline: no CUDA device; nothing to time")
        return 0
    # fp32 products as cuBLASLt computes them in guardjit (no TF32).
    torch.backends.cuda.matmul.allow_tf32 = False
    results = []
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)}")
    for name, fn, args in workloads("cuda"):
        for mode in ("eager", "inductor"):
            f = fn if mode == "eager" else torch.compile(fn)
            with torch.no_grad():
                t0 = time.perf_counter()
                f(*args)
                torch.cuda.synchronize()
                first_ms = (time.perf_counter() - t0) * 1e3
                ms = time_ms(f, args, opts.min_time)
            results.append({"workload": name, "mode": mode, "ms": ms, "first_ms": first_ms})
            print(f"{name:24s} {mode:9s} {ms:9.4f} ms  (first call {first_ms:.0f} ms)", flush=True)
    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
