"""Real models through ONNX: torch modules exported with torch.onnx.export
(the TorchScript exporter, dynamo=False, as perf/models/models_benchmark.py
does), loaded with Graph.from_onnx, run by guardjit.Function and compared
with torch eager; each call must have run a compiled entry, not the eager
plan. Needs the onnx package (torch's exporter writes the model with it).
"""
import io
import unittest
import warnings

import guardjit

from .util import max_rel_error, needs_torch, np, torch

TOLERANCE = 1e-4

try:
    import onnx  # noqa: F401 - torch.onnx.export needs it
except ImportError:  # pragma: no cover
    onnx = None

needs_onnx = unittest.skipIf(onnx is None, "onnx is not installed")

if torch is not None:
    import torch.nn as nn

    from .test_export import GPT, MLP, ConvBN, token_inputs

    class Text(nn.Module):
        """perf/models' text model: the mean of token embeddings, a classifier
        (Gather, ReduceMean with its axes as an input from opset 18, Gemm)."""

        def __init__(self, vocab=1000, dim=32):
            super().__init__()
            self.emb, self.fc = nn.Embedding(vocab, dim), nn.Linear(dim, 4)

        def forward(self, ids):
            return self.fc(self.emb(ids).mean(dim=1))

    class MaskedAttentionGPT(nn.Module):
        """One causal attention block written out (matmul, a tril mask through
        masked_fill, softmax; Trilu, Not, Where in ONNX) and a GELU MLP."""

        def __init__(self, dim=32, heads=4, seq=8):
            super().__init__()
            self.heads = heads
            self.ln = nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc = nn.Linear(dim, dim)

        def forward(self, x):
            b, t, d = x.shape
            h = d // self.heads
            q, k, v = (z.view(b, t, self.heads, h).transpose(1, 2)
                       for z in self.qkv(self.ln(x)).split(d, dim=-1))
            mask = torch.ones(t, t, dtype=torch.bool).tril()
            att = (q @ k.transpose(-2, -1)) / h ** 0.5
            y = torch.softmax(att.masked_fill(~mask, float("-inf")), dim=-1) @ v
            x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
            return x + self.fc(torch.nn.functional.gelu(x))


    class CausalBlock(nn.Module):
        """A GPT-2 block as nanoGPT writes it: qkv split, heads by view and
        transpose, a causal mask buffer sliced to the sequence length, a
        GELU MLP. With dynamic batch and seq the exporter computes the head
        shapes and the mask's slice bounds from Shape at run time."""

        def __init__(self, dim=32, heads=4, max_seq=16):
            super().__init__()
            self.heads = heads
            self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.fc, self.out = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)
            mask = torch.tril(torch.ones(max_seq, max_seq))
            self.register_buffer("mask", mask.view(1, 1, max_seq, max_seq))

        def forward(self, x):
            b, t, d = x.shape
            h = d // self.heads
            q, k, v = (z.view(b, t, self.heads, h).transpose(1, 2)
                       for z in self.qkv(self.ln1(x)).split(d, dim=2))
            att = (q @ k.transpose(-2, -1)) * (1.0 / h ** 0.5)
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            y = (torch.softmax(att, dim=-1) @ v).transpose(1, 2).contiguous()
            x = x + self.proj(y.view(b, t, d))
            return x + self.out(torch.nn.functional.gelu(self.fc(self.ln2(x))))

    class FlattenLinear(nn.Module):
        """x.reshape(x.shape[0], -1) then a linear layer: with a dynamic
        batch the exporter computes the reshape's shape at run time (Shape,
        Gather, Unsqueeze, Concat)."""

        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(12, 4)

        def forward(self, x):
            return torch.relu(self.fc(x.reshape(x.shape[0], -1)))


def onnx_bytes(module, inputs, opset=None):
    """The module as torch.onnx.export writes it (its default opset, or
    `opset`)."""
    f = io.BytesIO()
    kwargs = {} if opset is None else {"opset_version": opset}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, inputs, f, dynamo=False, **kwargs)
    return f.getvalue()


def assert_compiled(test, fn):
    """fn's one entry was compiled by the CPU JIT: its explain line reads
    "(jit: N fused kernels, M eager nodes, ..." where an entry left to the
    interpreter reads "eager plan"."""
    test.assertEqual((fn.stats.compiles, fn.stats.cache_entries), (1, 1))
    explain = fn.explain()
    test.assertRegex(explain, r"entry 0: .*\(jit: \d+ fused kernels, \d+ eager nodes")
    test.assertNotIn("eager plan", explain)
    test.assertIn("eager fallback: 0", explain)


@needs_torch
@needs_onnx
class OnnxModelsTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)

    def check(self, module, *inputs, opset=None):
        module = module.eval()
        graph = guardjit.Graph.from_onnx(onnx_bytes(module, inputs, opset))
        fn = guardjit.Function(graph)
        outs = fn(*inputs)
        with torch.no_grad():
            expected = module(*inputs)
        self.assertEqual(len(outs), 1)
        err = max_rel_error(np.from_dlpack(outs[0]), expected.numpy())
        self.assertLessEqual(err, TOLERANCE, f"max relative error {err:.3g}")
        # A second call hits the compiled entry.
        err = max_rel_error(np.from_dlpack(fn(*inputs)[0]), expected.numpy())
        self.assertLessEqual(err, TOLERANCE)
        assert_compiled(self, fn)
        return graph, fn

    def test_mlp(self):
        graph, _ = self.check(MLP(), torch.randn(8, 32))
        self.assertIn("aten.addmm.default", graph.tabular())

    def test_convnet_batchnorm(self):
        # torch's exporter folds the batch norms into the convolutions.
        self.check(ConvBN(), torch.randn(2, 3, 16, 16))

    def test_text(self):
        self.check(Text(), torch.randint(0, 1000, (8, 16)))

    def test_text_opset17(self):
        self.check(Text(), torch.randint(0, 1000, (8, 16)), opset=17)

    def test_gpt_two_layers_sdpa(self):
        # Opset 20: LayerNormalization, Gelu(tanh), SDPA's Shape/Slice
        # arithmetic folded at load.
        graph, _ = self.check(GPT(), *token_inputs(2))
        self.assertIn("aten.gelu.default", graph.tabular())

    def test_gpt_two_layers_sdpa_opset17(self):
        # Opset 17: Gelu spelled out with Tanh and Mul.
        graph, _ = self.check(GPT(), *token_inputs(2), opset=17)
        self.assertNotIn("aten.gelu.default", graph.tabular())

    def test_masked_attention(self):
        self.check(MaskedAttentionGPT(), torch.randn(2, 8, 32))

    def test_value_infos_declare_inputs_and_outputs(self):
        # A dynamic batch (dynamic_axes) is a named dim of the declared
        # shapes; the other sizes are static.
        f = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(MLP().eval(), (torch.randn(8, 32),), f, dynamo=False,
                              input_names=["x"], output_names=["logits"],
                              dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
        graph = guardjit.Graph.from_onnx(f.getvalue())
        (x,) = graph.inputs
        self.assertEqual((x.name, x.dtype, x.shape), ("x", "float32", ("batch", 32)))
        (logits,) = graph.outputs
        self.assertEqual((logits.name, logits.dtype, logits.shape),
                         ("logits", "float32", ("batch", 10)))
        static = guardjit.Graph.from_onnx(onnx_bytes(MLP().eval(), (torch.randn(8, 32),)))
        self.assertEqual(static.inputs[0].shape, (8, 32))
        self.assertEqual(static.outputs[0].shape, (8, 10))

    def test_dynamic_batch_compiles_one_entry(self):
        # dynamic_axes: the batch is a dim_param, the reshape's shape is size
        # arithmetic (aten.sym_size.int) and one dynamic entry serves
        # batches 2, 3 and 5.
        module = FlattenLinear().eval()
        f = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, (torch.randn(2, 3, 4),), f, dynamo=False,
                              input_names=["x"], dynamic_axes={"x": {0: "batch"}})
        graph = guardjit.Graph.from_onnx(f.getvalue())
        self.assertIn("aten.sym_size.int", graph.tabular())
        fn = guardjit.Function(graph, mark_dynamic=[("x", 0)])
        for batch in (2, 3, 5):
            x = torch.randn(batch, 3, 4)
            out = np.from_dlpack(fn(x)[0])
            with torch.no_grad():
                expected = module(x).numpy()
            self.assertEqual(out.shape, (batch, 4))
            err = max_rel_error(out, expected)
            self.assertLessEqual(err, TOLERANCE, f"batch {batch}: max relative error {err:.3g}")
        assert_compiled(self, fn)
        self.assertEqual(fn.stats.hits, 2)

    def test_dynamic_batch_and_seq_block_compiles_one_entry(self):
        # dynamic_axes {0: batch, 1: seq} of a GPT-2 block: Split, batched
        # MatMul of heads, the mask's Slice by seq and LayerNormalization on
        # symbolic sizes; one entry serves every (batch, seq) and matches
        # torch.
        module = CausalBlock().eval()
        f = io.BytesIO()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(module, (torch.randn(2, 8, 32),), f, dynamo=False,
                              input_names=["x"],
                              dynamic_axes={"x": {0: "batch", 1: "seq"}})
        graph = guardjit.Graph.from_onnx(f.getvalue())
        self.assertIn("aten.bmm.default", graph.tabular())
        fn = guardjit.Function(graph, mark_dynamic=[("x", 0), ("x", 1)])
        shapes = ((2, 8), (3, 5), (2, 16), (4, 3))
        for batch, seq in shapes:
            x = torch.randn(batch, seq, 32)
            out = np.from_dlpack(fn(x)[0])
            with torch.no_grad():
                expected = module(x).numpy()
            self.assertEqual(out.shape, (batch, seq, 32))
            err = max_rel_error(out, expected)
            self.assertLessEqual(err, TOLERANCE,
                                 f"batch {batch}, seq {seq}: max relative error {err:.3g}")
        assert_compiled(self, fn)
        self.assertEqual(fn.stats.hits, len(shapes) - 1)

    def test_resnet18(self):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        self.check(torchvision.models.resnet18(weights=None), torch.randn(1, 3, 64, 64))

    def test_mobilenet_v2(self):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        self.check(torchvision.models.mobilenet_v2(weights=None), torch.randn(1, 3, 64, 64))


if __name__ == "__main__":
    unittest.main()
