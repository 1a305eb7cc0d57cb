"""guardjit's Triton backend, over HTTP and gRPC, against a tritonserver
that bindings/triton/test.sh started (addresses in GJ_TRITON_*)."""
import concurrent.futures
import json
import os
import re
import time
import unittest
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

HTTP = os.environ["GJ_TRITON_HTTP"]
GRPC = os.environ["GJ_TRITON_GRPC"]
METRICS = os.environ["GJ_TRITON_METRICS"]
LOG = os.environ["GJ_TRITON_LOG"]
REPO = os.environ["GJ_TRITON_REPO"]
EXPORTED = os.environ.get("GJ_TRITON_EXPORTED") == "1"


def get_json(path):
    with urllib.request.urlopen(f"http://{HTTP}{path}") as r:
        return json.loads(r.read())


def exported_reference(x):
    """The exported MLP (tests/make_models.py) with numpy."""
    w = {n: np.load(os.path.join(REPO, "mlp_dyn", "1", n + ".npy"))
         for n in ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")}
    h = np.maximum(x @ w["fc1_weight"].T + w["fc1_bias"], 0)
    return h @ w["fc2_weight"].T + w["fc2_bias"]


def infer_http(model, x, output, client=None):
    client = client or httpclient.InferenceServerClient(HTTP)
    inp = httpclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    out = httpclient.InferRequestedOutput(output)
    return client.infer(model, [inp], outputs=[out]).as_numpy(output)


def infer_grpc(model, x, output):
    client = grpcclient.InferenceServerClient(GRPC)
    inp = grpcclient.InferInput("x", list(x.shape), "FP32")
    inp.set_data_from_numpy(x)
    out = grpcclient.InferRequestedOutput(output)
    return client.infer(model, [inp], outputs=[out]).as_numpy(output)


def compiles_logged(model):
    """The compile counts each of `model`'s instances logged when unloaded."""
    with open(LOG, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return [int(c) for c in re.findall(
        rf"model '{model}' instance '[^']*': \d+ calls, \d+ hits, \d+ misses, (\d+) compiles",
        text)]


class ExampleModelTest(unittest.TestCase):
    def test_values_match_over_http_and_grpc(self):
        # examples/mlp.pbtxt (x: [n, 8] -> addmm_1: [n, 4]); the same input
        # through both protocols gives the same values, and a second shape
        # too (max_batch_size 0: the graph sees the request's shape).
        rng = np.random.default_rng(0)
        for n in (4, 3):
            x = rng.standard_normal((n, 8)).astype(np.float32)
            a = infer_http("mlp", x, "addmm_1")
            b = infer_grpc("mlp", x, "addmm_1")
            self.assertEqual(a.shape, (n, 4))
            np.testing.assert_array_equal(a, b)
            self.assertTrue(np.all(np.isfinite(a)))

    def test_wrong_shape_is_invalid_arg_naming_the_input(self):
        # The config's dims [-1, -1] let [2, 5] through to the library.
        x = np.ones((2, 5), np.float32)
        with self.assertRaises(InferenceServerException) as cm:
            infer_http("mlp", x, "addmm_1")
        self.assertEqual(cm.exception.status(), "400")
        self.assertIn("inputs x TYPE_FP32 [2, 5]: gj_function_call_alloc: function 'mlp': "
                      "node 'addmm' (aten.addmm.default)", cm.exception.message())
        self.assertIn("mat1 and mat2 shapes cannot be multiplied", cm.exception.message())

    def test_wrong_dtype_is_refused(self):
        client = httpclient.InferenceServerClient(HTTP)
        inp = httpclient.InferInput("x", [2, 8], "INT32")
        inp.set_data_from_numpy(np.ones((2, 8), np.int32))
        with self.assertRaises(InferenceServerException) as cm:
            client.infer("mlp", [inp])
        # Triton checks data types against the config before the backend.
        self.assertIn("input 'x' data-type is 'INT32'", cm.exception.message())

    def test_guardjit_counters_are_triton_metrics(self):
        x = np.ones((2, 8), np.float32)
        for _ in range(3):
            infer_http("mlp", x, "addmm_1")
        with urllib.request.urlopen(f"http://{METRICS}/metrics") as r:
            text = r.read().decode()

        def value(metric):
            m = re.search(metric + r'\{[^}]*model="mlp"[^}]*\} (\S+)', text)
            self.assertIsNotNone(m, f"no {metric} for model mlp in /metrics")
            return float(m.group(1))
        self.assertGreaterEqual(value("guardjit_cache_hits_total"), 2)
        self.assertGreaterEqual(value("guardjit_cache_misses_total"), 1)
        self.assertGreaterEqual(value("guardjit_compiles_total"), 1)
        self.assertGreater(value("guardjit_compile_seconds_total"), 0)
        self.assertGreaterEqual(value("guardjit_cache_entries"), 1)
        self.assertGreaterEqual(value("guardjit_recompiles_total"), 0)
        self.assertIn('instance="mlp_0"', text)

    def test_a_reloaded_model_loads_its_code_from_the_compile_cache(self):
        client = httpclient.InferenceServerClient(HTTP)
        x = np.arange(16, dtype=np.float32).reshape(2, 8)

        def entries_loaded():
            with urllib.request.urlopen(f"http://{METRICS}/metrics") as r:
                text = r.read().decode()
            m = re.search(r'guardjit_entries_loaded_total\{[^}]*model="mlp_cached"[^}]*\} (\S+)',
                          text)
            self.assertIsNotNone(m, "no guardjit_entries_loaded_total for mlp_cached")
            return float(m.group(1))

        client.load_model("mlp_cached")
        first = infer_http("mlp_cached", x, "addmm_1")
        self.assertEqual(entries_loaded(), 0)
        records = [f for _, _, files in os.walk(os.environ["GJ_TRITON_CACHE"])
                   for f in files if f.endswith(".gjc")]
        self.assertGreater(len(records), 0, "nothing stored in the cache directory")
        client.unload_model("mlp_cached")
        deadline = time.time() + 30
        while client.is_model_ready("mlp_cached") and time.time() < deadline:
            time.sleep(0.1)
        client.load_model("mlp_cached")
        np.testing.assert_allclose(infer_http("mlp_cached", x, "addmm_1"), first,
                                   rtol=1e-6)
        self.assertEqual(entries_loaded(), 1)
        client.unload_model("mlp_cached")

    def test_unreadable_cache_key_file_fails_the_load_naming_it(self):
        client = httpclient.InferenceServerClient(HTTP)
        with self.assertRaises(InferenceServerException) as cm:
            client.load_model("mlp_badkey")
        self.assertIn("parameter 'cache_key_file'", cm.exception.message())
        self.assertIn("missing.key", cm.exception.message())
        self.assertTrue(client.is_server_live())

    def test_model_that_does_not_load_is_unavailable_with_the_loaders_message(self):
        client = httpclient.InferenceServerClient(HTTP)
        with self.assertRaises(InferenceServerException) as cm:
            client.load_model("broken")
        self.assertIn("aten.nope.default", cm.exception.message())
        index = {m["name"]: m for m in client.get_model_repository_index()}
        self.assertEqual(index["broken"]["state"], "UNAVAILABLE")
        self.assertIn("node 'n'", index["broken"]["reason"])
        self.assertTrue(client.is_server_live())
        self.assertTrue(client.is_model_ready("mlp"))


@unittest.skipUnless(EXPORTED, "no exported models (the Python binding's venv)")
class ExportedModelTest(unittest.TestCase):
    def test_config_is_auto_completed_from_the_graph(self):
        config = get_json("/v2/models/mlp_dyn/config")
        # Triton's default-max-batch-size (4): the graph's dim 0 is "batch".
        self.assertEqual(config["max_batch_size"], 4)
        self.assertEqual([(i["name"], i["data_type"], [int(d) for d in i["dims"]])
                          for i in config["input"]], [("x", "TYPE_FP32", [32])])
        self.assertEqual([(o["data_type"], [int(d) for d in o["dims"]])
                          for o in config["output"]], [("TYPE_FP32", [10])])
        meta = get_json("/v2/models/mlp_dyn")
        self.assertEqual(meta["inputs"][0]["shape"], [-1, 32])

    def output_name(self, model="mlp_dyn"):
        return get_json(f"/v2/models/{model}/config")["output"][0]["name"]

    def test_values_against_numpy_over_http_and_grpc(self):
        rng = np.random.default_rng(1)
        out = self.output_name()
        for n in (1, 3, 4):
            x = rng.standard_normal((n, 32)).astype(np.float32)
            expected = exported_reference(x)
            np.testing.assert_allclose(infer_http("mlp_dyn", x, out), expected,
                                       rtol=1e-4, atol=1e-5)
            np.testing.assert_allclose(infer_grpc("mlp_dyn", x, out), expected,
                                       rtol=1e-4, atol=1e-5)

    def test_concurrent_requests_run_batched_with_one_compile(self):
        client = httpclient.InferenceServerClient(HTTP)
        out = self.output_name()
        # A fresh instance: its log line at unload counts its compiles.
        client.unload_model("mlp_dyn")
        client.load_model("mlp_dyn")
        before = get_json("/v2/models/mlp_dyn/stats")["model_stats"][0]
        rng = np.random.default_rng(2)
        xs = [rng.standard_normal((1 + i % 4, 32)).astype(np.float32) for i in range(24)]
        with concurrent.futures.ThreadPoolExecutor(24) as pool:
            results = list(pool.map(
                lambda x: infer_http("mlp_dyn", x, out,
                                     httpclient.InferenceServerClient(HTTP)), xs))
        for x, got in zip(xs, results):
            np.testing.assert_allclose(got, exported_reference(x), rtol=1e-4, atol=1e-5)
        after = get_json("/v2/models/mlp_dyn/stats")["model_stats"][0]
        requests = int(after["inference_stats"]["success"]["count"]) - \
            int(before["inference_stats"]["success"]["count"])
        executions = int(after["execution_count"]) - int(before["execution_count"])
        inferences = int(after["inference_count"]) - int(before["inference_count"])
        self.assertEqual(requests, len(xs))
        self.assertEqual(inferences, sum(x.shape[0] for x in xs))
        self.assertLess(executions, len(xs), f"{executions} executions for {len(xs)} requests")
        print(f"\n  mlp_dyn: {requests} requests, {inferences} rows, {executions} executions",
              end=" ", flush=True)
        # Every batch size ran on one cache entry: the warmup compiled it.
        client.unload_model("mlp_dyn")
        deadline = time.time() + 30
        while not compiles_logged("mlp_dyn")[1:] and time.time() < deadline:
            time.sleep(0.2)
        # [first load's instance, this instance] (the first was unloaded above)
        logged = compiles_logged("mlp_dyn")
        self.assertGreaterEqual(len(logged), 2, logged)
        self.assertEqual(logged[-1], 1, logged)
        print(f"compiles per instance {logged}", end=" ... ", flush=True)
        client.load_model("mlp_dyn")
        self.assertTrue(client.is_model_ready("mlp_dyn"))
        x = np.ones((2, 32), np.float32)
        np.testing.assert_allclose(infer_http("mlp_dyn", x, out), exported_reference(x),
                                   rtol=1e-4, atol=1e-5)

    def test_warmup_of_one_serves_single_requests_unpadded(self):
        # Warmed up at 1, single requests run on the batch-of-one entry the
        # warmup compiled, so a batch of 3 compiles the dynamic entry after
        # them. Padded to two rows, they would have run on the dynamic entry
        # (then compiled by the warmup), which the batch of 3 would hit.
        def compiles():
            with urllib.request.urlopen(f"http://{METRICS}/metrics") as r:
                text = r.read().decode()
            found = re.findall(
                r'guardjit_compiles_total\{[^}]*model="mlp_one"[^}]*\} (\S+)', text)
            self.assertEqual(len(found), 1, "one mlp_one instance in /metrics")
            return float(found[0])
        out = self.output_name("mlp_one")
        rng = np.random.default_rng(3)
        for rows in (1, 1, 1, 3):
            x = rng.standard_normal((rows, 32)).astype(np.float32)
            np.testing.assert_allclose(infer_http("mlp_one", x, out),
                                       exported_reference(x), rtol=1e-4, atol=1e-5)
            self.assertEqual(compiles(), 1 if rows == 1 else 2)

    def test_bad_request_fails_alone_while_its_batch_succeeds(self):
        out = self.output_name("mlp_any")
        rng = np.random.default_rng(3)
        good = [rng.standard_normal((2, 32)).astype(np.float32) for _ in range(6)]
        bad = np.ones((2, 7), np.float32)

        def call(x):
            try:
                return infer_http("mlp_any", x, out, httpclient.InferenceServerClient(HTTP))
            except InferenceServerException as e:
                return e
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            results = list(pool.map(call, good[:3] + [bad] + good[3:]))
        err = results.pop(3)
        self.assertIsInstance(err, InferenceServerException)
        self.assertEqual(err.status(), "400")
        self.assertIn("inputs x TYPE_FP32 [2, 7]: gj_function_call_alloc: function 'mlp_any'",
                      err.message())
        self.assertIn("shapes cannot be multiplied", err.message())
        for x, got in zip(good, results):
            self.assertNotIsInstance(got, Exception)
            np.testing.assert_allclose(got, exported_reference(x), rtol=1e-4, atol=1e-5)


if __name__ == "__main__":
    unittest.main()
