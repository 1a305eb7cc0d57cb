"""guardjit.export of small torch modules, run against torch eager."""
import gc
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

    class CausalBlock(nn.Module):
        """A GPT-2 block: pre-norm causal self-attention (SDPA) and a GELU MLP."""

        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                       for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.out(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        """A GPT-2-style decoder stack: token + position embeddings, causal
        blocks, final norm, an untied LM head."""

        def __init__(self, vocab=100, seq=16, dim=64, heads=4, layers=2):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
            self.blocks = nn.ModuleList(CausalBlock(dim, heads) for _ in range(layers))
            self.ln, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)

        def forward(self, ids):
            x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln(x))

    class EncoderLayer(nn.Module):
        """A BERT layer: self-attention over unmasked keys, post-norm."""

        def __init__(self, dim, heads):
            super().__init__()
            self.heads = heads
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

        def forward(self, x, bias):
            b, t, d = x.shape
            h = d // self.heads
            q, k, v = (z.view(b, t, self.heads, h).transpose(1, 2)
                       for z in self.qkv(x).chunk(3, dim=-1))
            att = torch.softmax(q @ k.transpose(-2, -1) / h ** 0.5 + bias, dim=-1)
            x = self.ln1(x + self.proj((att @ v).transpose(1, 2).reshape(b, t, d)))
            return self.ln2(x + self.out(F.gelu(self.fc(x))))

    class BERT(nn.Module):
        """A BERT-style encoder: embeddings, padding mask as an additive bias
        (BERT's -10000 on padded keys), encoder layers, pooled [CLS]."""

        def __init__(self, vocab=100, seq=16, dim=64, heads=4, layers=2):
            super().__init__()
            self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(seq, dim)
            self.ln = nn.LayerNorm(dim)
            self.layers = nn.ModuleList(EncoderLayer(dim, heads) for _ in range(layers))
            self.pool = nn.Linear(dim, dim)

        def forward(self, ids, mask):
            x = self.ln(self.tok(ids) + self.pos(torch.arange(ids.shape[1])))
            bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
            for layer in self.layers:
                x = layer(x, bias)
            return x, torch.tanh(self.pool(x[:, 0]))

    def token_inputs(batch, seq=16, vocab=100):
        return (torch.randint(0, vocab, (batch, seq)),)

    def masked_token_inputs(batch, seq=16, vocab=100):
        """Token ids and a padding mask: row i keeps its first seq - 3i tokens."""
        mask = torch.ones(batch, seq, dtype=torch.int64)
        for i in range(batch):
            mask[i, max(1, seq - 3 * i):] = 0
        return torch.randint(0, vocab, (batch, seq)), mask


def export_or_skip(test, module, args, **kwargs):
    """guardjit.export, skipping the test where the library lacks an op."""
    try:
        return guardjit.export(module, args, **kwargs)
    except guardjit.UnimplementedError as e:
        match = re.search(r"unknown target '([^']+)'", e.message)
        if match:
            test.skipTest(f"the library has no {match.group(1)} yet (issue #16)")
        raise


def assert_one_compiled_dynamic_entry(test, fn, symbols=1):
    """fn has exactly one entry, dynamic and compiled by the CPU JIT: its
    explain line reads "(jit: N fused kernels, M eager nodes, K size
    symbols" (then, where they apply, its arena and the outputs it copies);
    an entry left to the interpreter reads "(dynamic eager plan over K
    symbols, N kernels)"."""
    test.assertEqual((fn.stats.compiles, fn.stats.cache_entries), (1, 1))
    explain = fn.explain()
    test.assertRegex(explain, r"entry 0: .*\(jit: \d+ fused kernels, \d+ eager nodes, "
                     rf"{symbols} size symbols[,;)]")
    test.assertNotIn("eager plan", explain)


def check_dynamic_batch(test, model, make_inputs, names, batches=(2, 4, 8), symbols=1):
    """Exports `model` with a dynamic batch (dim 0 of every input named in
    `names`), runs every batch through one Function and compares each output
    with torch eager. Returns the Function."""
    model = model.eval()
    batch = torch.export.Dim("batch", min=2, max=16)
    graph = export_or_skip(test, model, make_inputs(batches[0]),
                           dynamic_shapes={n: {0: batch} for n in names})
    fn = guardjit.Function(graph)
    for b in batches:
        inputs = make_inputs(b)
        outs = fn(*inputs)
        with torch.no_grad():
            expected = model(*inputs)
        expected = expected if isinstance(expected, tuple) else (expected,)
        test.assertEqual(len(outs), len(expected))
        for k, (out, exp) in enumerate(zip(outs, expected)):
            err = max_rel_error(np.from_dlpack(out), exp.numpy())
            test.assertLessEqual(err, TOLERANCE, f"batch {b} output {k}: {err:.3g}")
    assert_one_compiled_dynamic_entry(test, fn, symbols)
    return fn


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

    def test_packed_weights_count_in_memory_stats(self):
        # The linear layers' weights, packed once when the entry compiles,
        # count while the function's entry holds them.
        context = guardjit.Context(num_threads=1)
        model = MLP().eval()
        x = torch.randn(8, 32)
        graph = guardjit.export(model, (x,), context=context)
        self.assertEqual(context.memory_stats.packed_weight_bytes, 0)
        fn, (out,) = run(graph, x)
        with torch.no_grad():
            self.assertLess(max_rel_error(out.numpy(), model(x).numpy()), TOLERANCE)
        weights = (32 * 64 + 64 * 10) * 4
        self.assertGreaterEqual(context.memory_stats.packed_weight_bytes, weights)
        del fn, out
        gc.collect()
        self.assertEqual(context.memory_stats.packed_weight_bytes, 0)

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
        # Compiled (the x.reshape(b, t, ...) sizes are nodes over the symbol).
        assert_one_compiled_dynamic_entry(self, fn)
        self.assertIn("x.size()[0] <= 64", fn.dump_guards())

    def test_unbounded_dim_has_no_max(self):
        # torch.export's unbounded Dim has upper bound int_oo (whose int()
        # raises AttributeError in sympy): the dim has guardjit's default max.
        graph = guardjit.export(MLP().eval(), (torch.randn(4, 32),),
                                dynamic_shapes={"x": {0: torch.export.Dim("batch")}})
        self.assertEqual(graph.dynamic_dims,
                         (guardjit.DynamicDim("x", 0, 2, 2**63 - 1),))

    def test_inputs_and_outputs_declare_dims_by_their_dim_names(self):
        model = Attention().eval()
        batch, seq = torch.export.Dim("batch", min=2, max=64), torch.export.Dim("seq", max=128)
        graph = guardjit.export(model, (torch.randn(4, 10, 32),),
                                dynamic_shapes={"x": {0: batch, 1: seq}})
        self.assertEqual(graph.inputs, (guardjit.TensorInfo("x", "float32", ("batch", "seq", 32)),))
        self.assertEqual(len(graph.outputs), 1)
        self.assertEqual((graph.outputs[0].dtype, graph.outputs[0].shape),
                         ("float32", ("batch", "seq", 32)))
        # Kept by save and load; `guardjit check` prints them.
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "attention.pbtxt")
            graph.save(path)
            loaded = guardjit.Graph.from_file(path)
            self.assertEqual((loaded.inputs, loaded.outputs), (graph.inputs, graph.outputs))
            cli = shutil.which("guardjit")
            if cli is not None:
                out = subprocess.run([cli, "check", path], capture_output=True, text=True,
                                     check=True).stdout
                self.assertIn("input x: float32[batch, seq, 32]", out)

    def test_static_export_declares_static_shapes(self):
        graph = guardjit.export(MLP().eval(), (torch.randn(8, 32),))
        self.assertEqual(graph.inputs, (guardjit.TensorInfo("x", "float32", (8, 32)),))
        self.assertEqual((graph.outputs[0].dtype, graph.outputs[0].shape), ("float32", (8, 10)))

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
    """resnet18 and mobilenet_v2 (random weights) exported with a dynamic
    batch: batches 2, 4 and 8 through one entry compiled by the CPU JIT
    (convolutions as conv steps over the symbolic batch)."""

    def check(self, factory):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        torch.manual_seed(0)
        model = getattr(torchvision.models, factory)(weights=None)
        check_dynamic_batch(self, model, lambda b: (torch.randn(b, 3, 64, 64),), ("x",))

    def test_resnet18(self):
        self.check("resnet18")

    def test_mobilenet_v2(self):
        self.check("mobilenet_v2")



@needs_torch
class TransformerModelsTest(unittest.TestCase):
    """GPT-2- and BERT-style stacks (2 layers, d_model 64, 4 heads, seq 16,
    vocab 100) exported with a dynamic batch: one entry compiled by the CPU
    JIT (GEMM steps over the symbolic batch) serves batches 2, 4 and 8."""

    def setUp(self):
        torch.manual_seed(0)

    def test_gpt_causal_sdpa(self):
        check_dynamic_batch(self, GPT(), token_inputs, ("ids",))

    def test_bert_padding_mask(self):
        # ids and mask each carry the batch: two symbols, guarded equal.
        fn = check_dynamic_batch(self, BERT(), masked_token_inputs, ("ids", "mask"),
                                 symbols=2)
        self.assertIn("ids.size()[0] == mask.size()[0]", fn.dump_guards())

if __name__ == "__main__":
    unittest.main()
