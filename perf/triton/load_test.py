"""Load test of guardjit's Triton backend against Triton's Python backend
running torch eager (the backend a Triton user without ONNX would write), in
the same tritonserver, same run, loopback only, a bounded request count.

For each model (an MLP of 784 -> 512 -> 256 -> 10 and torchvision's
resnet18), two Triton models are served: gj_<model> (backend "guardjit",
exported by guardjit.export with a dynamic batch dim, config auto-completed,
dynamic batching) and torch_<model> (backend "python", the same torch module
in eager under torch.no_grad, dynamic batching, the same max batch size).
Clients send requests of batch 1 from C threads at once (gRPC, one client
per thread) for C in --concurrency; the table has requests/s, p50 and p99
latency per backend, and guardjit's throughput over torch's.

    python load_test.py --prefix PREFIX [--models mlp,resnet18]
        [--concurrency 1,8,32] [--requests 400] [--out DIR]

PREFIX is an install of guardjit (PREFIX/backends/guardjit). The Python
running this needs torch, torchvision, guardjit, tritonclient[grpc] and
nvidia-pytriton (perf/triton/run.sh installs the last two). Prints the table
and writes DIR/triton_load.md.
"""
import argparse
import concurrent.futures
import os
import shutil
import socket
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import threading
import time
import urllib.request

import numpy as np
import torch

import guardjit

MAX_BATCH = 32


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(784, 512)
        self.fc2 = torch.nn.Linear(512, 256)
        self.fc3 = torch.nn.Linear(256, 10)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


def make_model(name):
    torch.manual_seed(0)
    if name == "mlp":
        return MLP().eval(), (784,)
    if name == "resnet18":
        import torchvision
        return torchvision.models.resnet18().eval(), (3, 224, 224)
    raise SystemExit(f"unknown model {name!r}: mlp or resnet18")


# How model.py makes each model before loading its weights (eager torch).
BUILD = {
    "mlp": textwrap.dedent("""\
        class MLP(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = torch.nn.Linear(784, 512)
                self.fc2 = torch.nn.Linear(512, 256)
                self.fc3 = torch.nn.Linear(256, 10)

            def forward(self, x):
                return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))
        self.model = MLP()"""),
    "resnet18": "import torchvision\nself.model = torchvision.models.resnet18()",
}

PYTHON_MODEL = textwrap.dedent('''\
    import sys
    sys.path.insert(0, {site!r})
    import numpy as np
    import torch
    import triton_python_backend_utils as pb_utils

    class TritonPythonModel:
        def initialize(self, args):
            torch.set_num_threads({threads})
    {build}
            self.model.load_state_dict(torch.load({path!r}))
            self.model.eval()

        def execute(self, requests):
            xs = [pb_utils.get_input_tensor_by_name(r, "x").as_numpy() for r in requests]
            with torch.no_grad():
                y = self.model(torch.from_numpy(np.concatenate(xs))).numpy()
            out, start = [], 0
            for x in xs:
                part = y[start:start + len(x)]
                start += len(x)
                out.append(pb_utils.InferenceResponse(
                    output_tensors=[pb_utils.Tensor("y", part)]))
            return out
    ''')


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def build_repository(root, models, threads):
    repo = os.path.join(root, "models")
    for name in models:
        model, shape = make_model(name)
        example = torch.randn(4, *shape)
        batch = torch.export.Dim("batch", min=2, max=1024)
        graph = guardjit.export(model, (example,), dynamic_shapes={"x": {0: batch}})
        d = os.path.join(repo, f"gj_{name}", "1")
        os.makedirs(d)
        graph.save(os.path.join(d, "model.pbtxt"), external_threshold=1024)
        with open(os.path.join(repo, f"gj_{name}", "config.pbtxt"), "w") as f:
            f.write(f'backend: "guardjit"\nmax_batch_size: {MAX_BATCH}\n'
                    'dynamic_batching { max_queue_delay_microseconds: 200 }\n'
                    f'parameters {{ key: "num_threads" value {{ string_value: "{threads}" }} }}\n'
                    'parameters { key: "warmup" value { string_value: "2,4,8,16,32" } }\n')
        d = os.path.join(repo, f"torch_{name}", "1")
        os.makedirs(d)
        weights = os.path.join(d, "model.pt")
        torch.save(model.state_dict(), weights)
        with open(os.path.join(d, "model.py"), "w") as f:
            f.write(PYTHON_MODEL.format(site=sysconfig.get_paths()["purelib"],
                                        threads=threads, path=weights,
                                        build=textwrap.indent(BUILD[name], " " * 8)))
        dims = ", ".join(str(s) for s in shape)
        out_dims = "10" if name == "mlp" else "1000"
        with open(os.path.join(repo, f"torch_{name}", "config.pbtxt"), "w") as f:
            f.write(f'backend: "python"\nmax_batch_size: {MAX_BATCH}\n'
                    'dynamic_batching { max_queue_delay_microseconds: 200 }\n'
                    f'input [ {{ name: "x" data_type: TYPE_FP32 dims: [ {dims} ] }} ]\n'
                    f'output [ {{ name: "y" data_type: TYPE_FP32 dims: [ {out_dims} ] }} ]\n'
                    'instance_group [ { kind: KIND_CPU count: 1 } ]\n')
    return repo


def build_backends(root, prefix):
    """guardjit's backend and pytriton's Python backend in one directory."""
    import pytriton
    server = os.path.join(os.path.dirname(pytriton.__file__), "tritonserver")
    backends = os.path.join(root, "backends")
    os.makedirs(os.path.join(backends, "python"))
    os.symlink(os.path.join(prefix, "backends", "guardjit"), os.path.join(backends, "guardjit"))
    for f in ("libtriton_python.so", "triton_python_backend_utils.py"):
        shutil.copy(os.path.join(server, "backends", "python", f), os.path.join(backends, "python"))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    shutil.copy(os.path.join(server, "python_backend_stubs", version, "triton_python_backend_stub"),
                os.path.join(backends, "python"))
    return os.path.join(server, "bin", "tritonserver"), backends


def server_env():
    """The Python backend's stub loads the CUDA runtime the wheel carries
    (nvidia_pytriton.libs), though it runs no CUDA code."""
    env = dict(os.environ)
    libs = os.path.join(sysconfig.get_paths()["purelib"], "nvidia_pytriton.libs")
    env["LD_LIBRARY_PATH"] = libs + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def output_name(client, model):
    return client.get_model_config(model, as_json=True)["config"]["output"][0]["name"]


def run_load(grpc_address, model, shape, concurrency, requests):
    import tritonclient.grpc as grpcclient
    x = np.random.default_rng(0).standard_normal((1, *shape), dtype=np.float32)
    clients = [grpcclient.InferenceServerClient(grpc_address) for _ in range(concurrency)]
    out = output_name(clients[0], model)

    def infer(client):
        inp = grpcclient.InferInput("x", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        start = time.perf_counter()
        client.infer(model, [inp], outputs=[grpcclient.InferRequestedOutput(out)])
        return time.perf_counter() - start

    for _ in range(10):  # warm-up
        infer(clients[0])
    latencies, lock = [], threading.Lock()
    remaining = [requests]

    def worker(client):
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
            t = infer(client)
            with lock:
                latencies.append(t)

    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(worker, clients))
    wall = time.perf_counter() - start
    latencies.sort()
    return {"rps": requests / wall,
            "p50": statistics.median(latencies) * 1e3,
            "p99": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] * 1e3}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--models", default="mlp,resnet18")
    parser.add_argument("--concurrency", default="1,8,32")
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args()
    models = args.models.split(",")
    levels = [int(c) for c in args.concurrency.split(",")]
    root = tempfile.mkdtemp(prefix="guardjit-triton-load.")
    server_pid = None
    try:
        repo = build_repository(root, models, args.threads)
        tritonserver, backends = build_backends(root, args.prefix)
        http, grpc, metrics = free_ports(3)
        log = open(os.path.join(root, "tritonserver.log"), "w")
        server = subprocess.Popen(
            [tritonserver, f"--model-repository={repo}", f"--backend-directory={backends}",
             "--http-address=127.0.0.1", f"--http-port={http}",
             "--grpc-address=127.0.0.1", f"--grpc-port={grpc}",
             "--metrics-address=127.0.0.1", f"--metrics-port={metrics}"],
            stdout=log, stderr=subprocess.STDOUT, env=server_env())
        server_pid = server.pid
        deadline = time.time() + 300
        while time.time() < deadline:
            if server.poll() is not None:
                break
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{http}/v2/health/ready", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        else:
            server.kill()
        if server.poll() is not None:
            log.close()
            sys.exit("tritonserver did not start:\n" + open(log.name).read()[-4000:])
        print(f"tritonserver ready (pid {server_pid}, grpc {grpc})", flush=True)
        rows = []
        for name in models:
            _, shape = make_model(name)
            for c in levels:
                row = {"model": name, "concurrency": c}
                for backend in ("gj", "torch"):
                    r = run_load(f"127.0.0.1:{grpc}", f"{backend}_{name}", shape, c, args.requests)
                    row.update({f"{backend}_{k}": v for k, v in r.items()})
                rows.append(row)
                print(f"{name} c={c}: guardjit {row['gj_rps']:.1f} req/s "
                      f"(p50 {row['gj_p50']:.2f} ms, p99 {row['gj_p99']:.2f}), torch "
                      f"{row['torch_rps']:.1f} req/s (p50 {row['torch_p50']:.2f}, "
                      f"p99 {row['torch_p99']:.2f})", flush=True)
        lines = [
            f"guardjit {guardjit.__version__}, torch {torch.__version__}; {os.cpu_count()} cpus, "
            f"{args.threads} threads per model instance; {args.requests} requests of batch 1 "
            "per cell over gRPC on loopback, dynamic batching (max 32, 200 us queue delay).", "",
            "| model | clients | guardjit req/s | p50 ms | p99 ms | torch (Python backend) "
            "req/s | p50 ms | p99 ms | guardjit/torch |",
            "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            lines.append(
                f"| {r['model']} | {r['concurrency']} | {r['gj_rps']:.1f} | {r['gj_p50']:.2f} | "
                f"{r['gj_p99']:.2f} | {r['torch_rps']:.1f} | {r['torch_p50']:.2f} | "
                f"{r['torch_p99']:.2f} | {r['gj_rps'] / r['torch_rps']:.2f} |")
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "triton_load.md"), "w") as f:
            f.write("\n".join(lines) + "\n")
        print("\n".join(lines))
    except BaseException:
        log_path = os.path.join(root, "tritonserver.log")
        if os.path.exists(log_path):
            lines = open(log_path, errors="replace").read().splitlines()
            errors = [l for l in lines if l.startswith("E") or "rror" in l]
            print("tritonserver's errors:\n" + "\n".join(errors[-20:]), file=sys.stderr)
        raise
    finally:
        if server_pid is not None:
            try:
                os.kill(server_pid, 15)
                os.waitpid(server_pid, 0)
            except OSError:
                pass
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
