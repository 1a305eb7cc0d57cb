"""guardjit.export of small torch modules, run against torch eager."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import guardjit

from .util import max_rel_error, needs_torch, np, torch

TOLERANCE = 1e-4

if torch is not None:
    import torch.nn as nn
    import torch.nn.functional as F

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(32, 64), nn.Linear(64, 10)

        def forward(self, x):
            return self.fc2(F.gelu(self.fc1(x)))

    class ConvRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = nn.Conv2d(8, 4, 3, stride=2)

        def forward(self, x):
            return self.conv2(torch.relu(self.conv1(x))).relu()

    class Attention(nn.Module):
        def __init__(self, dim=32, heads=4):
            super().__init__()
            self.heads = heads
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.norm = nn.LayerNorm(dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
            q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
            return x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d))

    class Embedding(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(100, 16)
            self.out = nn.Linear(16, 8)

        def forward(self, ids):
            return self.out(self.emb(ids).mean(dim=1))

    class ConvBN(nn.Module):
        """What torchvision's models need: BatchNorm, max pooling, adaptive pooling."""

        def __init__(self):
            super().__init__()
            self.conv, self.bn = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8)
            self.pool, self.fc = nn.MaxPool2d(2), nn.Linear(8, 4)

        def forward(self, x):
            y = self.pool(F.relu(self.bn(self.conv(x))))
            return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))


def export_or_skip(test, module, args, **kwargs):
    """guardjit.export, skipping the test where the library lacks an op."""
    try:
        return guardjit.export(module, args, **kwargs)
    except guardjit.UnimplementedError as e:
        match = re.search(r"unknown target '([^']+)'", e.message)
        if match:
            test.skipTest(f"the library has no {match.group(1)} yet (issue #16)")
        raise


def run(graph, *inputs, **options):
    fn = guardjit.Function(graph, **options)
    return fn, [torch.from_dlpack(o) for o in fn(*inputs)]


@needs_torch
class ExportModelsTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def check(self, module, *inputs):
        module = module.eval()
        graph = export_or_skip(self, module, inputs)
        _, (out,) = run(graph, *inputs)
        with torch.no_grad():
            expected = module(*inputs)
        err = max_rel_error(out.numpy(), expected.numpy())
        self.assertLessEqual(err, TOLERANCE, f"max relative error {err:.3g}")
        return graph

    def test_mlp(self):
        self.check(MLP(), torch.randn(8, 32))

    def test_conv_relu(self):
        self.check(ConvRelu(), torch.randn(2, 3, 16, 16))

    def test_attention_softmax(self):
        self.check(Attention(), torch.randn(2, 10, 32))

    def test_embedding(self):
        self.check(Embedding(), torch.randint(0, 100, (4, 7)))

    def test_conv_batchnorm_maxpool(self):
        self.check(ConvBN(), torch.randn(2, 3, 16, 16))

    def test_text_has_schema_mapped_arguments(self):
        graph = guardjit.export(MLP().eval(), (torch.randn(2, 32),))
        text = graph.to_text()
        self.assertIn('target: "aten.addmm.default"', text)
        self.assertIn('placeholders { name: "x"', text)
        self.assertIn('constants { name: "p_fc1_weight" dtype: FLOAT32 sizes: 64 sizes: 32', text)


@needs_torch
class DynamicBatchTest(unittest.TestCase):
    def test_one_dynamic_entry_serves_batch_2_4_8(self):
        torch.manual_seed(0)
        model = Attention().eval()
        batch = torch.export.Dim("batch", min=2, max=64)
        graph = guardjit.export(model, (torch.randn(4, 10, 32),),
                                dynamic_shapes={"x": {0: batch}})
        self.assertEqual(graph.dynamic_dims, (guardjit.DynamicDim("x", 0, 2, 64),))
        fn = guardjit.Function(graph)
        for b in (2, 4, 8):
            x = torch.randn(b, 10, 32)
            (out,) = fn(x)
            with torch.no_grad():
                err = max_rel_error(np.from_dlpack(out), model(x).numpy())
            self.assertLessEqual(err, TOLERANCE, f"batch {b}")
        stats = fn.stats
        self.assertEqual((stats.compiles, stats.cache_entries, stats.hits), (1, 1, 2))
        # A dynamic entry over one size symbol (compiled, or an eager plan
        # where the JIT refuses an op under symbols: issue #16).
        self.assertRegex(fn.explain(), r"entry 0: .*\b1 (size )?symbols")
        self.assertIn("x.size()[0] <= 64", fn.dump_guards())

    def test_dims_survive_save_and_load(self):
        model = MLP().eval()
        batch = torch.export.Dim("batch", min=2, max=1024)
        graph = guardjit.export(model, (torch.randn(4, 32),), dynamic_shapes={"x": {0: batch}})
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mlp.pbtxt")
            graph.save(path)
            loaded = guardjit.Graph.from_file(path)
        self.assertEqual(loaded.dynamic_dims, graph.dynamic_dims)


@needs_torch
class SaveAndCliTest(unittest.TestCase):
    def test_saved_graph_with_external_data_runs_in_the_cli(self):
        cli = shutil.which("guardjit")
        if cli is None:
            self.skipTest("the guardjit CLI is not on PATH")
        torch.manual_seed(0)
        model = MLP().eval()
        x = torch.randn(2, 32)
        graph = guardjit.export(model, (x,))
        _, (expected,) = run(graph, x)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mlp.pbtxt")
            graph.save(path, external_threshold=1024)
            self.assertTrue(os.path.exists(os.path.join(tmp, "mlp.bin")))
            with open(path) as f:
                self.assertIn('external { path: "mlp.bin"', f.read())
            # Loading in Python from the file gives the same values as well.
            _, (reloaded,) = run(guardjit.Graph.from_file(path), x)
            np.testing.assert_array_equal(reloaded.numpy(), expected.numpy())
            values = ",".join(repr(float(v)) for v in x.flatten())
            result = subprocess.run(
                [cli, "run", path, "--input", f"x=float32[2,32]:{values}", "--print"],
                capture_output=True, text=True, check=True, cwd=tmp)
        printed = re.search(r"values: \[([^\]]*)\]", result.stdout).group(1)
        cli_values = np.array([float(v) for v in printed.split(",")], np.float32)
        np.testing.assert_allclose(cli_values, expected.numpy().flatten(), rtol=1e-5, atol=1e-6)


@needs_torch
class TorchvisionModelsTest(unittest.TestCase):
    """resnet18 and mobilenet_v2 (random weights) through a dynamic batch.

    They skip, naming the op, until the library has every op they export
    to (batch norm, max pooling, hardtanh, ... are being added)."""

    def check(self, factory):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        torch.manual_seed(0)
        model = getattr(torchvision.models, factory)(weights=None).eval()
        batch = torch.export.Dim("batch", min=2, max=16)
        graph = export_or_skip(self, model, (torch.randn(2, 3, 64, 64),),
                               dynamic_shapes={"x": {0: batch}})
        fn = guardjit.Function(graph)
        for b in (2, 4, 8):
            x = torch.randn(b, 3, 64, 64)
            (out,) = fn(x)
            with torch.no_grad():
                err = max_rel_error(np.from_dlpack(out), model(x).numpy())
            self.assertLessEqual(err, TOLERANCE, f"{factory} batch {b}")
        self.assertEqual(fn.stats.compiles, 1)

    def test_resnet18(self):
        self.check("resnet18")

    def test_mobilenet_v2(self):
        self.check("mobilenet_v2")


if __name__ == "__main__":
    unittest.main()
