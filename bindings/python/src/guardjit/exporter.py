"""guardjit.export: torch.export + Core ATen decompositions -> a guardjit Graph."""
from typing import Any, Optional, Tuple

import torch

from . import _core, _fx


def _bound(value, default):
    try:
        v = int(value)
    # int_oo (its int() is an AttributeError in sympy), sympy infinities
    except (TypeError, ValueError, OverflowError, AttributeError):
        return default
    return min(max(v, 0), _core.INT64_MAX)


def _dynamic_dims(ep, user_inputs):
    """torch.export.Dim ranges of the user inputs' sizes, as DynamicDims."""
    dims = []
    for node in user_inputs:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        for d, size in enumerate(val.shape):
            if not isinstance(size, torch.SymInt):
                continue
            expr = size.node.expr
            bounds = ep.range_constraints.get(expr)
            lo = _bound(getattr(bounds, "lower", 2), 2) if bounds is not None else 2
            hi = _bound(getattr(bounds, "upper", None), _core.INT64_MAX) \
                if bounds is not None else _core.INT64_MAX
            # guardjit specializes sizes 0 and 1 whatever the range (as torch).
            dims.append(_core.DynamicDim(node.name, d, max(lo, 2), hi))
    return dims


def _dim_names(module, args, kwargs, dynamic_shapes, user_inputs):
    """sympy symbol -> the torch.export.Dim name the user gave that size, for
    the dims `dynamic_shapes` names (a tuple in argument order, or a dict by
    parameter name); symbols without one keep torch's name ("s0")."""
    if dynamic_shapes is None:
        return {}
    specs = None
    if isinstance(dynamic_shapes, (tuple, list)):
        specs = list(dynamic_shapes)
    elif isinstance(dynamic_shapes, dict):
        try:
            import inspect
            target = module.forward if isinstance(module, torch.nn.Module) else module
            bound = inspect.signature(target).bind(*args, **(kwargs or {}))
        except (TypeError, ValueError):
            return {}
        specs = [dynamic_shapes.get(p) for p in bound.arguments]
    if specs is None:
        return {}
    names = {}
    for node, spec in zip(user_inputs, specs):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor) or spec is None:
            continue
        items = spec.items() if isinstance(spec, dict) else enumerate(spec)
        for d, dim in items:
            name = getattr(dim, "__name__", None)
            if not isinstance(name, str) or not isinstance(d, int) or d >= val.dim():
                continue
            size = val.shape[d]
            if isinstance(size, torch.SymInt) and getattr(size.node.expr, "is_Symbol", False):
                names.setdefault(size.node.expr, name)
    return names


def _output_meta(ep, symbol_names):
    """(dtype, dims) of each user output, as _fx.tensor_meta gives them."""
    out = [n for n in ep.graph.nodes if n.op == "output"][0]
    results = out.args[0]
    if not isinstance(results, (list, tuple)):
        results = (results,)
    return [_fx.tensor_meta(r.meta.get("val"), symbol_names)
            if isinstance(r, torch.fx.Node) else None for r in results]


def from_exported_program(ep: "torch.export.ExportedProgram", *, name: Optional[str] = None,
                          context=None, decompose: bool = True,
                          dim_names=None) -> "_core.Graph":
    """An ExportedProgram as a guardjit Graph (run_decompositions() first
    unless decompose=False): parameters, buffers and lifted constants become
    the graph's constants, user inputs its placeholders, Dim ranges its
    dynamic_dims. Each input and output declares its dtype and shape
    (Graph.inputs/outputs): static sizes, and dynamic ones by the name of
    their symbol, which `dim_names` (sympy symbol -> name; export() passes
    the torch.export.Dim names) overrides."""
    if decompose:
        ep = ep.run_decompositions()
    sig = ep.graph_signature
    constants = {}
    state = dict(ep.state_dict)
    state.update(getattr(ep, "constants", {}) or {})
    from torch.export.graph_signature import InputKind
    user_inputs = []
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    for spec in sig.input_specs:
        node = placeholders.get(spec.arg.name) if hasattr(spec.arg, "name") else None
        if spec.kind == InputKind.USER_INPUT:
            if node is not None:
                user_inputs.append(node)
            continue
        if spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            value = state[spec.target]
            if not isinstance(value, torch.Tensor):
                raise _fx.ConversionError(f"input '{spec.target}' is a {type(value).__name__}")
            constants[spec.arg.name] = value
        else:
            raise _fx.ConversionError(f"input kind {spec.kind} ('{spec.arg.name}') is not supported")
    if any(n.meta.get("val") is not None and not isinstance(n.meta["val"], torch.Tensor)
           for n in user_inputs):
        raise _fx.ConversionError("non-tensor user inputs are not supported by guardjit.export")
    symbol_names = dim_names(user_inputs) if callable(dim_names) else (dim_names or {})
    writer = _fx.convert(ep.graph_module, name or "exported", constants=constants,
                         symbol_names=symbol_names)
    writer.dynamic_dims = _dynamic_dims(ep, user_inputs)
    writer.output_meta = _output_meta(ep, symbol_names)
    return writer.load(context)


def export(module: torch.nn.Module, args: Tuple[Any, ...], kwargs=None, *,
           dynamic_shapes=None, strict: bool = False, context=None,
           name: Optional[str] = None) -> "_core.Graph":
    """Exports `module` with torch.export.export(module, args, kwargs,
    dynamic_shapes=..., strict=...), decomposes it to Core ATen and returns
    the guardjit Graph: one placeholder per user input (in order), weights
    and buffers as constants, torch.export.Dim ranges as the graph's
    dynamic_dims (which Function(graph) uses as mark_dynamic and
    Graph.save records). Save with graph.save("model.pbtxt")."""
    if not isinstance(args, tuple):
        args = (args,)
    was_training = getattr(module, "training", False)
    if isinstance(module, torch.nn.Module):
        module.eval()
    try:
        ep = torch.export.export(module, args, kwargs, dynamic_shapes=dynamic_shapes,
                                 strict=strict)
    finally:
        if was_training:
            module.train()
    return from_exported_program(
        ep, name=name or type(module).__name__.lower(), context=context,
        dim_names=lambda user_inputs: _dim_names(module, args, kwargs, dynamic_shapes,
                                                 user_inputs))
