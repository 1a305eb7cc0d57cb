"""KIND_GPU instances of guardjit's Triton backend on a real GPU, against a
tritonserver that bindings/triton/gpu_test.sh started on a GPU machine
(scripts/gpu_check.sh's triton step; address in GJ_TRITON_GPU_HTTP).
Elsewhere every test is skipped. Plain HTTP (KServe v2 JSON) with the
standard library and numpy, so it runs under the GPU machine's python3."""
import concurrent.futures
import json
import os
import re
import unittest
import urllib.error
import urllib.request

import numpy as np

HTTP = os.environ.get("GJ_TRITON_GPU_HTTP")
METRICS = os.environ.get("GJ_TRITON_GPU_METRICS")
REPO = os.environ.get("GJ_TRITON_GPU_REPO")


def get_json(path):
    with urllib.request.urlopen(f"http://{HTTP}{path}", timeout=60) as r:
        return json.loads(r.read())


def infer(model, x, datatype="FP32"):
    """The model's outputs by name, or raises HTTPError with the body read."""
    body = {"inputs": [{"name": "x", "shape": list(x.shape),
                        "datatype": datatype, "data": x.ravel().tolist()}]}
    request = urllib.request.Request(
        f"http://{HTTP}/v2/models/{model}/infer", data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as r:
        reply = json.loads(r.read())
    return {o["name"]: np.array(o["data"], np.float32).reshape(o["shape"])
            for o in reply["outputs"]}


def exported_reference(x):
    """The exported MLP (tests/make_models.py) with numpy."""
    w = {n: np.load(os.path.join(REPO, "mlp_dyn_gpu", "1", n + ".npy"))
         for n in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")}
    h = np.maximum(x @ w["fc1_weight"].T + w["fc1_bias"], 0)
    return h @ w["fc2_weight"].T + w["fc2_bias"]


def metric(text, name, model):
    """Sum of `name` over `model`'s instances in a /metrics page."""
    found = re.findall(name + r'\{[^}]*model="' + model + r'"[^}]*\} (\S+)', text)
    return sum(float(v) for v in found), len(found)


def metrics_text():
    with urllib.request.urlopen(f"http://{METRICS}/metrics", timeout=30) as r:
        return r.read().decode()


# float32 products on the GPU (cuBLASLt, its own summation order) against
# numpy's and the CPU instance's.
TOL = dict(rtol=1e-4, atol=1e-4)


@unittest.skipUnless(HTTP, "no GPU tritonserver (GJ_TRITON_GPU_HTTP): runs on "
                     "a GPU machine under scripts/gpu_check.sh")
class GpuInstanceTest(unittest.TestCase):
    def test_instances_are_on_the_gpu(self):
        config = get_json("/v2/models/mlp_gpu/config")
        kinds = [(g["kind"], g.get("gpus")) for g in config["instance_group"]]
        self.assertEqual(kinds, [("KIND_GPU", [0])])

    def test_gpu_instance_matches_the_cpu_instance(self):
        rng = np.random.default_rng(0)
        for n in (1, 4, 7):
            x = rng.standard_normal((n, 8)).astype(np.float32)
            gpu = infer("mlp_gpu", x)["addmm_1"]
            cpu = infer("mlp_cpu", x)["addmm_1"]
            self.assertEqual(gpu.shape, (n, 4))
            np.testing.assert_allclose(gpu, cpu, **TOL)

    def test_gpu_counters_are_triton_metrics(self):
        x = np.ones((2, 8), np.float32)
        for _ in range(3):
            infer("mlp_gpu", x)
        text = metrics_text()
        hits, instances = metric(text, "guardjit_cache_hits_total", "mlp_gpu")
        self.assertEqual(instances, 1)
        self.assertGreaterEqual(hits, 2)
        compiles, _ = metric(text, "guardjit_compiles_total", "mlp_gpu")
        self.assertGreaterEqual(compiles, 1)

    def test_concurrent_requests_batch_on_two_gpu_instances(self):
        before_text = metrics_text()
        before = get_json("/v2/models/mlp_dyn_gpu/stats")["model_stats"][0]
        compiles_before, instances = metric(before_text, "guardjit_compiles_total",
                                            "mlp_dyn_gpu")
        self.assertEqual(instances, 2, "count: 2 KIND_GPU instances")
        # The warmup (2,4) compiled one dynamic-batch entry per instance.
        self.assertEqual(compiles_before, 2)
        rng = np.random.default_rng(1)
        xs = [rng.standard_normal((1 + i % 8, 32)).astype(np.float32)
              for i in range(48)]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            results = list(pool.map(lambda x: infer("mlp_dyn_gpu", x), xs))
        out = get_json("/v2/models/mlp_dyn_gpu/config")["output"][0]["name"]
        for x, got in zip(xs, results):
            np.testing.assert_allclose(got[out], exported_reference(x), **TOL)
        after = get_json("/v2/models/mlp_dyn_gpu/stats")["model_stats"][0]
        executions = int(after["execution_count"]) - int(before["execution_count"])
        inferences = int(after["inference_count"]) - int(before["inference_count"])
        self.assertEqual(inferences, sum(x.shape[0] for x in xs))
        self.assertLess(executions, len(xs))
        compiles_after, _ = metric(metrics_text(), "guardjit_compiles_total",
                                   "mlp_dyn_gpu")
        # Every batch size of 2..8 ran on the warmed-up entries; a batch of
        # one is padded to two rows.
        self.assertEqual(compiles_after, compiles_before)
        print(f"\n  mlp_dyn_gpu: {len(xs)} requests, {inferences} rows, "
              f"{executions} executions, {int(compiles_after)} compiles",
              end=" ... ", flush=True)

    def test_reduce_overhead_mode_replays_match(self):
        rng = np.random.default_rng(2)
        for i in range(12):
            x = rng.standard_normal((3 + i % 2, 32)).astype(np.float32)
            got = infer("mlp_graphs_gpu", x)
            (value,) = got.values()
            np.testing.assert_allclose(value, exported_reference(x), **TOL)

    def test_wrong_shape_on_a_gpu_instance_is_invalid_arg_naming_the_input(self):
        # The config's dims [-1, -1] let [2, 5] through to the library.
        x = np.ones((2, 5), np.float32)
        with self.assertRaises(urllib.error.HTTPError) as caught:
            infer("mlp_gpu", x)
        self.assertEqual(caught.exception.code, 400)
        message = json.loads(caught.exception.read())["error"]
        self.assertIn("inputs x TYPE_FP32 [2, 5]: gj_function_call_alloc: "
                      "function 'mlp_gpu'", message)
        self.assertIn("node 'addmm'", message)
        # The instance still serves.
        x = np.ones((2, 8), np.float32)
        np.testing.assert_allclose(infer("mlp_gpu", x)["addmm_1"],
                                   infer("mlp_cpu", x)["addmm_1"], **TOL)

if __name__ == "__main__":
    unittest.main()
