"""torch.compile(model, backend="guardjit"): a Dynamo backend over guardjit.

Each graph Dynamo captures is lowered by AOTAutograd (forward only, traced
under no_grad, Core ATen decompositions) and converted to a guardjit Graph;
the compiled callable calls a guardjit Function with the real tensors,
zero-copy. Dynamo keeps its Python guards, guardjit its own cache inside.
Inference only: outputs do not require grad.

The backend is registered under the entry point group torch_dynamo_backends
(pyproject.toml), so backend="guardjit" works without importing guardjit;
importing guardjit.dynamo also registers it.
"""
import itertools

import torch

from . import _core, _fx

_graph_ids = itertools.count()


def _symint_sources(fx_graph, example_inputs):
    """SymInt placeholder name -> (tensor placeholder, dim) holding that size."""
    placeholders = [n for n in fx_graph.graph.nodes if n.op == "placeholder"]
    sizes = {}
    for node, value in zip(placeholders, example_inputs):
        if isinstance(value, torch.Tensor):
            for d, s in enumerate(value.shape):
                if isinstance(s, torch.SymInt):
                    sizes.setdefault(s.node.expr, (node.name, d))
    sources = {}
    for node, value in zip(placeholders, example_inputs):
        if isinstance(value, torch.SymInt):
            source = sizes.get(value.node.expr)
            if source is None:
                raise _fx.ConversionError(
                    f"SymInt input '{node.name}' ({value}) is not the size of a tensor input")
            sources[node.name] = source
        elif isinstance(value, int):
            raise _fx.ConversionError(f"int input '{node.name}' is not supported")
    return sources


def _dynamic_dims(fx_graph, example_inputs):
    """The tensor inputs' dims Dynamo made symbolic (a size that is one
    symbol, with the shape env's range), as DynamicDims: guardjit compiles
    one dynamic entry on the first call, as Dynamo decided, instead of a
    static entry first and a dynamic one on the next size."""
    from .exporter import _bound

    placeholders = [n for n in fx_graph.graph.nodes if n.op == "placeholder"]
    dims = []
    for node, value in zip(placeholders, example_inputs):
        if not isinstance(value, torch.Tensor):
            continue
        for d, size in enumerate(value.shape):
            if not isinstance(size, torch.SymInt) or not size.node.expr.is_Symbol:
                continue  # static, or an expression guardjit's auto-dynamic finds
            bounds = size.node.shape_env.var_to_range.get(size.node.expr)
            lo = _bound(getattr(bounds, "lower", 2), 2)
            hi = _bound(getattr(bounds, "upper", None), _core.INT64_MAX)
            # guardjit specializes sizes 0 and 1 whatever the range (as torch).
            dims.append(_core.DynamicDim(node.name, d, max(lo, 2), max(hi, 2)))
    return dims


def _compile_forward(fx_graph: torch.fx.GraphModule, example_inputs):
    sources = _symint_sources(fx_graph, example_inputs)
    writer = _fx.convert(fx_graph, f"dynamo_{next(_graph_ids)}", symint_sources=sources)
    writer.dynamic_dims = _dynamic_dims(fx_graph, example_inputs)
    function = _core.Function(writer.load())
    keep = [i for i, v in enumerate(example_inputs) if isinstance(v, torch.Tensor)]
    from_dlpack = torch.from_dlpack

    def run(*args):
        tensors = [args[i] for i in keep]
        tensors = [t.detach() if t.requires_grad else t for t in tensors]
        return [from_dlpack(o) for o in function(*tensors)]

    run.guardjit_function = function
    return run


def guardjit_backend(gm: torch.fx.GraphModule, example_inputs, **kwargs):
    """The Dynamo backend: AOT forward graph in Core ATen -> guardjit."""
    from torch._decomp import core_aten_decompositions
    from torch._functorch.aot_autograd import aot_module_simplified

    with torch.no_grad():
        return aot_module_simplified(gm, example_inputs, fw_compiler=_compile_forward,
                                     decompositions=core_aten_decompositions())


def register():
    """Registers backend="guardjit" with Dynamo (idempotent)."""
    from torch._dynamo.backends.registry import _BACKENDS, register_backend
    if "guardjit" not in _BACKENDS or _BACKENDS["guardjit"] is None:
        register_backend(name="guardjit")(guardjit_backend)


register()
