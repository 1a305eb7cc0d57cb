"""torch.fx graphs of Core ATen ops -> guardjit.proto.Graph text format.

Shared by guardjit.export (torch.export programs) and the torch.compile
backend (AOT forward graphs). The text is written by hand (no protobuf
dependency): placeholders, constants (inline bytes, or ExternalData in a
file beside the graph past a size), nodes with their arguments mapped by the
op's schema, outputs.
"""
import functools
import math
import operator
import os
import re
import tempfile

import torch

from . import _core, _errors

_DTYPES = {
    torch.float32: "FLOAT32", torch.float64: "FLOAT64", torch.float16: "FLOAT16",
    torch.bfloat16: "BFLOAT16", torch.int8: "INT8", torch.uint8: "UINT8",
    torch.int16: "INT16", torch.int32: "INT32", torch.int64: "INT64", torch.bool: "BOOL",
}

# Python operators on SymInts, as guardjit names them.
_SYM_OPERATORS = {
    operator.add: "operator.add", operator.sub: "operator.sub", operator.mul: "operator.mul",
    operator.floordiv: "operator.floordiv", operator.mod: "operator.mod",
    operator.eq: "operator.eq", operator.ne: "operator.ne", operator.lt: "operator.lt",
    operator.le: "operator.le", operator.gt: "operator.gt", operator.ge: "operator.ge",
}

# Checks that export and AOT emit; kept where the library knows them (they
# become guards there), dropped otherwise: they compute nothing.
_ASSERTIONS = ("aten._assert_tensor_metadata", "aten._assert_scalar",
               "aten.sym_constrain_range_for_size", "aten.sym_constrain_range",
               "aten._assert_async")

# Arguments the schema has no kind for yet, dropped when they hold the value
# that changes nothing for guardjit's dense CPU/CUDA tensors.
_NEUTRAL = {
    "layout": (torch.strided,),
    "pin_memory": (False, None),
    "memory_format": (torch.contiguous_format, torch.preserve_format, None),
}

# Octal escapes for protobuf text format bytes.
_BYTE_ESCAPES = [
    chr(b) if 0x20 <= b < 0x7F and chr(b) not in "\"'\\" else f"\\{b:03o}"
    for b in range(256)
]


def _quote(text: str) -> str:
    return '"' + "".join(_BYTE_ESCAPES[b] for b in text.encode()) + '"'


class ConversionError(NotImplementedError):
    """The FX graph has something guardjit's graph format cannot express."""


@functools.lru_cache(maxsize=None)
def library_has_target(target: str) -> bool:
    """Whether the loaded library registers `target` ("aten.hardtanh.default")."""
    probe = ('name: "probe" placeholders { name: "x" } nodes { name: "n" target: %s '
             'args { ref: "x" } } outputs { ref: "n" }' % _quote(target))
    try:
        _core.Graph.from_text(probe)
    except _errors.UnimplementedError as e:
        return "unknown target" not in e.message
    except _errors.Error:
        return True  # known, but wants other arguments
    return True


def _target_name(target) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return str(target)  # "aten.add.Tensor"
    if target is operator.getitem:
        return "getitem"
    if target in _SYM_OPERATORS:
        return _SYM_OPERATORS[target]
    raise ConversionError(f"no guardjit target for {target!r}")


def _tensor_bytes(tensor: torch.Tensor):
    """The tensor's bytes, little-endian row-major, as a memoryview."""
    flat = tensor.detach().to("cpu").contiguous().reshape(-1)
    if flat.dtype == torch.bool:
        flat = flat.to(torch.uint8)
    return memoryview(flat.view(torch.uint8).numpy())


class GraphWriter:
    """A graph under construction, written as protobuf text on demand."""

    def __init__(self, name: str):
        self.name = name
        # (name, dtype name or None, dims or None): a dim is an int (static),
        # a symbol's name (dynamic, named) or None (dynamic, unnamed).
        self.placeholders = []
        self.constants = []  # (name, torch.Tensor)
        self.nodes = []  # (name, target, [arg text], {kw: arg text})
        self.outputs = []  # arg texts
        self.output_meta = []  # per output: (dtype name, dims) or None; or empty
        self.dynamic_dims = []  # _core.DynamicDim

    def header(self):
        lines = [f"# {self.name}: written by guardjit (Python) from a torch.fx graph."]
        for d in self.dynamic_dims:
            lines.append(f"{_core._MARK_DYNAMIC_PREFIX}{d.input} {d.dim} {d.min} {d.max}")
        return "\n".join(lines) + "\n"

    def _write(self, out, external):
        """external: None (all inline) or (threshold, file object, relative path)."""
        out.write(self.header())
        out.write(f"name: {_quote(self.name)}\n")
        for name, dtype, dims in self.placeholders:
            # TensorMeta is optional; a dims-less meta would read as 0-dim
            meta = f" meta {{ {_meta_text(dtype, dims)} }}" \
                if dtype is not None and dims is not None else ""
            out.write(f"placeholders {{ name: {_quote(name)}{meta} }}\n")
        for name, tensor in self.constants:
            data = _tensor_bytes(tensor)
            sizes = "".join(f" sizes: {s}" for s in tensor.shape)
            out.write(f"constants {{ name: {_quote(name)} dtype: {_DTYPES[tensor.dtype]}{sizes}")
            if external is not None and data.nbytes > external[0]:
                _, blob, rel = external
                offset = blob.tell()
                pad = (-offset) % 64
                if pad:
                    blob.write(b"\0" * pad)
                    offset += pad
                blob.write(data)
                out.write(f" external {{ path: {_quote(rel)} offset: {offset} length: {data.nbytes} }} }}\n")
            else:
                out.write(' data: "' + "".join(_BYTE_ESCAPES[b] for b in data.tobytes()) + '" }\n')
        for name, target, args, kwargs in self.nodes:
            parts = [f"nodes {{ name: {_quote(name)} target: {_quote(target)}"]
            parts += [f" args {{ {a} }}" for a in args]
            parts += [f" kwargs {{ key: {_quote(k)} value {{ {v} }} }}" for k, v in kwargs.items()]
            out.write("".join(parts) + " }\n")
        for o in self.outputs:
            out.write(f"outputs {{ {o} }}\n")
        if any(m is not None for m in self.output_meta):
            for m in self.output_meta:
                text = _meta_text(*m) if m is not None and m[0] is not None else ""
                out.write(f"output_meta {{ {text} }}\n")

    def to_text(self, external=None) -> str:
        import io
        buf = io.StringIO()
        self._write(buf, external)
        return buf.getvalue()

    def save(self, path: str, external_threshold: int = 1024):
        stem = os.path.splitext(path)[0]
        blob_path = stem + ".bin"
        with open(blob_path, "wb") as blob, open(path, "w", encoding="utf-8") as out:
            self._write(out, (external_threshold, blob, os.path.basename(blob_path)))
            used = blob.tell() > 0
        if not used:
            os.remove(blob_path)

    def load(self, context=None) -> "_core.Graph":
        """The graph loaded into guardjit (big constants through a temp file)."""
        with tempfile.TemporaryDirectory(prefix="guardjit-") as tmp:
            path = os.path.join(tmp, "graph.pbtxt")
            self.save(path, external_threshold=4096)
            graph = _core.Graph.from_file(path, context=context)
        graph._text = None
        graph._writer = self
        graph.dynamic_dims = tuple(self.dynamic_dims)
        return graph


def _literal(value, what: str) -> str:
    """One Argument's text for a Python value from an FX node's args."""
    if isinstance(value, torch.fx.Node):
        return f"ref: {_quote(value.name)}"
    if value is None:
        return "none {}"
    if isinstance(value, bool):
        return f"b: {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"i: {value}"
    if isinstance(value, float):
        if math.isnan(value):
            return "f: nan"
        if math.isinf(value):
            return "f: inf" if value > 0 else "f: -inf"
        return f"f: {value!r}"
    if isinstance(value, str):
        return f"s: {_quote(value)}"
    if isinstance(value, torch.dtype):
        if value not in _DTYPES:
            raise ConversionError(f"{what}: dtype {value} has no guardjit equivalent")
        return f"dtype: {_DTYPES[value]}"
    if isinstance(value, torch.device):
        return f"device: {_quote(str(value))}"
    if isinstance(value, (list, tuple)):
        items = " ".join(f"items {{ {_literal(v, what)} }}" for v in value)
        return f"list {{ {items} }}"
    if isinstance(value, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        raise ConversionError(f"{what}: a symbolic value outside the graph ({value})")
    raise ConversionError(f"{what}: {type(value).__name__} {value!r} has no guardjit argument kind")


def _map_arguments(node: torch.fx.Node):
    """Positional and keyword Argument texts of a call_function node, by schema."""
    target = node.target
    what = f"node '{node.name}' ({_target_name(target)})"
    if not isinstance(target, torch._ops.OpOverload):
        return [_literal(a, what) for a in node.args], {
            k: _literal(v, what) for k, v in node.kwargs.items()}
    schema = target._schema
    args, kwargs = [], {}
    positional = True  # positional until an argument is left to its default
    for i, arg in enumerate(schema.arguments):
        if i < len(node.args):
            value, given = node.args[i], True
        elif arg.name in node.kwargs:
            value, given = node.kwargs[arg.name], True
        else:
            value, given = None, False
        if given and arg.name in _NEUTRAL and value in _NEUTRAL[arg.name]:
            given = False
        elif given and arg.name in _NEUTRAL:
            raise ConversionError(f"{what}: argument '{arg.name}' = {value} is not supported "
                                  f"yet (guardjit's schema has no {arg.name} kind)")
        if not given:
            positional = False
            continue
        text = _literal(value, f"{what}, argument '{arg.name}'")
        if positional and not arg.kwarg_only:
            args.append(text)
        else:
            kwargs[arg.name] = text
    return args, kwargs


def _meta_val(node):
    return node.meta.get("val", node.meta.get("example_value"))


def _meta_text(dtype, dims):
    """A TensorMeta's fields: `sizes` when every dim is static (what files
    before `dims` carry), `dims` otherwise."""
    if all(isinstance(d, int) for d in dims):
        return f"dtype: {dtype}" + "".join(f" sizes: {d}" for d in dims)
    parts = []
    for d in dims:
        if isinstance(d, int):
            parts.append(f" dims {{ size: {d} }}")
        elif d is not None:
            parts.append(f" dims {{ symbol: {_quote(d)} }}")
        else:
            parts.append(" dims {}")
    return f"dtype: {dtype}" + "".join(parts)


_SYMBOL_NAME = re.compile(r"^[A-Za-z_.][A-Za-z0-9_.]{0,63}$")


def _dims(val, symbol_names=None):
    """Per dim of a fake tensor: its size, the name of the symbol that is its
    size (symbol_names maps sympy symbols to the user's Dim names), or None
    for a size that is an expression."""
    dims = []
    for s in val.shape:
        if not isinstance(s, torch.SymInt):
            dims.append(int(s))
            continue
        expr = s.node.expr
        if getattr(expr, "is_Integer", False):
            dims.append(int(expr))
        elif getattr(expr, "is_Symbol", False):
            name = (symbol_names or {}).get(expr, str(expr))
            dims.append(name if _SYMBOL_NAME.match(name) else None)
        else:
            dims.append(None)
    return dims


def tensor_meta(val, symbol_names=None):
    """(dtype name, dims) of a fake tensor, or None for other values."""
    if not isinstance(val, torch.Tensor) or val.dtype not in _DTYPES:
        return None
    return _DTYPES[val.dtype], _dims(val, symbol_names)


def convert(graph_module: torch.fx.GraphModule, name: str, constants=None,
            symint_sources=None, symbol_names=None) -> GraphWriter:
    """Writes `graph_module`'s graph.

    constants: placeholder or get_attr name -> tensor, for weights the graph
    takes as placeholders (torch.export's parameters and buffers).
    symint_sources: placeholder name -> (tensor placeholder name, dim) for
    SymInt placeholders, which become aten.sym_size.int nodes.
    symbol_names: sympy symbol -> the name its dims are declared with.
    """
    constants = constants or {}
    symint_sources = symint_sources or {}
    writer = GraphWriter(name)
    sym_nodes = []
    for node in graph_module.graph.nodes:
        if node.op == "placeholder":
            if node.name in constants:
                writer.constants.append((node.name, constants[node.name]))
            elif node.name in symint_sources:
                source, dim = symint_sources[node.name]
                sym_nodes.append((node.name, "aten.sym_size.int",
                                  [f"ref: {_quote(source)}", f"i: {dim}"], {}))
            else:
                meta = tensor_meta(_meta_val(node), symbol_names)
                writer.placeholders.append((node.name, *(meta or (None, None))))
        elif node.op == "get_attr":
            value = getattr(graph_module, node.target) if node.name not in constants \
                else constants[node.name]
            if not isinstance(value, torch.Tensor):
                raise ConversionError(f"get_attr '{node.target}' is a {type(value).__name__}, "
                                      "not a tensor (control flow is not converted yet)")
            writer.constants.append((node.name, value))
        elif node.op == "call_function":
            if sym_nodes:
                writer.nodes.extend(sym_nodes)
                sym_nodes = []
            target = _target_name(node.target)
            if target.startswith(_ASSERTIONS) and not library_has_target(target):
                continue
            args, kwargs = _map_arguments(node)
            writer.nodes.append((node.name, target, args, kwargs))
        elif node.op == "output":
            writer.nodes.extend(sym_nodes)
            sym_nodes = []
            results = node.args[0]
            if not isinstance(results, (list, tuple)):
                results = (results,)
            for r in results:
                if not isinstance(r, torch.fx.Node):
                    raise ConversionError(f"graph output {r!r} is not a value of the graph")
                writer.outputs.append(f"ref: {_quote(r.name)}")
        else:
            raise ConversionError(f"FX node '{node.name}': op {node.op} is not supported")
    return writer
