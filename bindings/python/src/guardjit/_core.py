"""Context, Graph and Function: the C API's handles as Python objects."""
import dataclasses
import os
import sys
import threading
from typing import Iterable, Optional, Sequence, Tuple, Union

from . import _errors, _native

_native._set_error_factory(_errors.from_code)

Tensor = _native.Tensor

_BACKENDS = {"default": 0, "eager": 1, "cpu_jit": 2}
_DYNAMIC = {"auto": 0, "static": 1, "dynamic": 2}
_MODES = {"default": 0, "reduce-overhead": 1}
_COMPILE = {"sync": 0, "async": 1}
INT64_MAX = 2**63 - 1

# A graph's text may carry the dims its exporter made dynamic, one per line,
# so a Function made from the loaded graph picks them up:
#   # guardjit: mark_dynamic INPUT DIM MIN MAX
_MARK_DYNAMIC_PREFIX = "# guardjit: mark_dynamic "


@dataclasses.dataclass(frozen=True)
class MemoryStats:
    """gj_memory_stats: a context's memory."""

    bytes_in_use: int
    bytes_cached: int
    peak_bytes_in_use: int
    system_allocations: int
    cache_hits: int
    compiled_modules: int
    cached_kernels: int
    #: Graph weights the context's live cache entries hold again, packed
    #: into their kernels' layouts (C API 0.13; 0 for a CUDA device).
    packed_weight_bytes: int = 0


@dataclasses.dataclass(frozen=True)
class CompileCacheStats:
    """gj_compile_cache_stats: what a context's compile cache did (C API
    0.11). A record is one compiled kernel."""

    kernels_compiled: int
    kernels_loaded: int
    disk_hits: int
    disk_misses: int
    disk_stores: int
    remote_hits: int  # Redis (remote_cache)
    remote_misses: int
    remote_stores: int
    lock_waits: int  # kernels another replica was compiling
    lock_timeouts: int
    rejected: int  # refused records: corrupt, truncated, foreign, unsigned ...
    errors: int
    evictions: int


@dataclasses.dataclass(frozen=True)
class FunctionStats:
    """gj_function_stats: what a function's guard cache did."""

    calls: int
    hits: int
    misses: int
    compiles: int
    recompiles: int
    fallback_calls: int
    cache_entries: int
    compile_ms_total: float
    guard_ns_mean: float
    # Graphs (segments) reached so far, 1 without graph breaks, and the
    # breaks between them. With breaks, compiles, misses, cache_entries and
    # compile_ms_total sum over the graphs; a hit is a call no graph missed.
    graph_count: int
    graph_break_count: int
    # mode="reduce-overhead", over all entries: CUDA graphs captured
    # (re-captures included), replays, kernel nodes patched with a call's new
    # addresses, re-captures, graphs evicted past max_graphs_per_entry, and
    # the device bytes the entries' private pools hold now.
    cuda_graphs_recorded: int
    cuda_graph_replays: int
    cuda_graph_pointer_updates: int
    cuda_graph_recaptures: int
    cuda_graph_evictions: int
    cuda_graph_pool_bytes: int
    # compile="async": calls run eagerly while their entry was compiling.
    eager_while_compiling: int
    # Entries whose code all came from the context's compile cache (C API
    # 0.11): nothing was compiled for them.
    entries_loaded: int


@dataclasses.dataclass(frozen=True)
class DynamicDim:
    """torch._dynamo.mark_dynamic(input, dim, min, max) for a Function.

    `input` is the input's index or name; sizes outside [min, max] fail the
    entry's guards (sizes 0 and 1 are always specialized).
    """

    input: Union[int, str]
    dim: int
    min: int = 2
    max: int = INT64_MAX


# gj_dtype numbers (guardjit.proto.DType) as torch spells the dtypes.
_GJ_DTYPE_NAMES = {1: "float32", 2: "float64", 3: "float16", 4: "bfloat16", 5: "int8",
                   6: "uint8", 7: "int16", 8: "int32", 9: "int64", 10: "bool"}


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """What a graph declares of one input or output (C API 0.12): the dtype
    and shape its exporter saw. `dtype` is a torch dtype name ("float32") or
    None when not declared; `shape` is None when the rank is not declared,
    else one entry per dim: an int for a static size, the symbol's name
    (str) for a named dynamic size ("batch"; dims sharing a symbol have equal
    sizes), None for an unnamed dynamic one."""

    name: str
    dtype: Optional[str]
    shape: Optional[Tuple[Union[int, str, None], ...]]


# gj_graph_format: the loader reads the bytes as an ONNX ModelProto.
_GRAPH_FORMAT_ONNX = 2


def _tensor_infos(raw) -> Tuple[TensorInfo, ...]:
    infos = []
    for name, dtype, _rank, dims in raw:
        shape = None
        if dims is not None:
            shape = tuple(size if size >= 0 else (symbol or None) for size, symbol in dims)
        infos.append(TensorInfo(name, _GJ_DTYPE_NAMES.get(dtype), shape))
    return tuple(infos)


class Context(_native.Context):
    """gj_context: the thread pool, the compiler and the caches.

    Share one per process (`default_context()`); every Graph and Function
    keeps its context alive.

    num_threads: threads compiled programs run on (0 = GJ_NUM_THREADS or one
    per core). backend: "default", "eager" or "cpu_jit".

    Compile cache (C API 0.11, README "Compile cache"): cache_dir is a
    directory where compiled kernels are stored and looked up, so the next
    process loads what this one compiled (None: GJ_CACHE_DIR if set; "":
    none); max_cache_bytes bounds it (default 1 GiB, 0 = unbounded);
    cache_key signs the records and refuses unsigned ones (None:
    GJ_CACHE_KEY; "": none); remote_cache shares them through Redis,
    "redis://host:port/db" (None: GJ_REMOTE_CACHE; "": none).
    """

    def __new__(cls, num_threads: int = 0, backend: str = "default",
                max_cached_kernels: Optional[int] = None,
                max_cached_bytes: Optional[int] = None,
                cache_dir: Optional[Union[str, os.PathLike]] = None,
                cache_key: Optional[str] = None,
                max_cache_bytes: Optional[int] = None,
                remote_cache: Optional[str] = None):
        if backend not in _BACKENDS:
            raise ValueError(f"backend must be one of {sorted(_BACKENDS)}, not {backend!r}")
        return super().__new__(
            cls, num_threads=num_threads, backend=_BACKENDS[backend],
            max_cached_kernels=-1 if max_cached_kernels is None else max_cached_kernels,
            max_cached_bytes=-1 if max_cached_bytes is None else max_cached_bytes,
            cache_dir=None if cache_dir is None else os.fspath(cache_dir),
            cache_key=cache_key,
            max_cache_bytes=-2**63 if max_cache_bytes is None else max_cache_bytes,
            remote_cache=remote_cache)

    @property
    def compile_cache_stats(self) -> CompileCacheStats:
        return CompileCacheStats(**super().compile_cache_stats())

    def __init__(self, *args, **kwargs):
        pass

    @property
    def memory_stats(self) -> MemoryStats:
        return MemoryStats(**super().memory_stats())

    def device_memory_stats(self, device="cpu") -> MemoryStats:
        """One device's memory (C API 0.10): "cpu" is this context's host
        memory (as `memory_stats`); "cuda" / "cuda:N" (or a torch.device) is
        that CUDA device's stream-ordered caching allocator, shared by every
        context of the process (system_allocations counts cuMemAlloc calls).
        GuardjitError UNAVAILABLE naming the device without a usable CUDA
        driver or device."""
        return MemoryStats(**super().device_memory_stats(*_dl_device(device)))

    def release_cached_device_memory(self, device="cpu") -> None:
        """Returns one device's idle cached blocks to the system (C API
        0.10); blocks in use stay."""
        super().release_cached_device_memory(*_dl_device(device))


_KDL_CPU, _KDL_CUDA = 1, 2


def _dl_device(device) -> Tuple[int, int]:
    """(DLDeviceType, ordinal) of "cpu", "cuda", "cuda:N" or a torch.device."""
    text = str(device)
    kind, _, index = text.partition(":")
    types = {"cpu": _KDL_CPU, "cuda": _KDL_CUDA}
    if kind not in types or (index and not index.lstrip("-").isdigit()):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'cuda:N', not {device!r}")
    return types[kind], int(index) if index else 0


_default_context = None
_default_context_lock = threading.Lock()


def default_context() -> Context:
    """The process-wide context graphs use unless given one."""
    global _default_context
    with _default_context_lock:
        if _default_context is None:
            _default_context = Context()
        return _default_context


def _parse_mark_dynamic(text: str):
    dims = []
    for line in text.splitlines():
        if not line.startswith("#"):
            if line.strip():
                break
            continue
        if line.startswith(_MARK_DYNAMIC_PREFIX):
            name, dim, lo, hi = line[len(_MARK_DYNAMIC_PREFIX):].split()
            dims.append(DynamicDim(name, int(dim), int(lo), int(hi)))
    return tuple(dims)


class Graph:
    """gj_graph: a loaded, validated graph (immutable).

    Load with from_file / from_text / from_bytes / from_onnx, or make one from a torch
    module with guardjit.export. `dynamic_dims` are the dims its exporter
    made dynamic (torch.export.Dim ranges); Function(graph) uses them unless
    given mark_dynamic.
    """

    def __init__(self, handle, context, *, text=None, writer=None, dynamic_dims=()):
        self._handle = handle
        self.context = context
        self._text = text
        self._writer = writer
        self.dynamic_dims: Tuple[DynamicDim, ...] = tuple(dynamic_dims)

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike], *, context: Optional[Context] = None,
                  external_data_dir: Optional[str] = None) -> "Graph":
        """Text format for .pbtxt/.txt, binary protobuf otherwise; relative
        external data paths resolve against the file's directory."""
        path = os.fspath(path)
        context = context or default_context()
        handle = _native.Graph._load(2, context, path, external_data_dir)
        text = None
        if path.endswith((".pbtxt", ".txt")):
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        return cls(handle, context, text=text,
                   dynamic_dims=_parse_mark_dynamic(text) if text else ())

    @classmethod
    def from_text(cls, text: Union[str, bytes], *, context: Optional[Context] = None,
                  external_data_dir: Optional[str] = None) -> "Graph":
        """A graph from protobuf text format (guardjit.proto.Graph)."""
        data = text.encode() if isinstance(text, str) else bytes(text)
        context = context or default_context()
        handle = _native.Graph._load(0, context, data, external_data_dir)
        decoded = data.decode("utf-8", errors="replace")
        return cls(handle, context, text=decoded, dynamic_dims=_parse_mark_dynamic(decoded))

    @classmethod
    def from_bytes(cls, data: bytes, *, context: Optional[Context] = None,
                   external_data_dir: Optional[str] = None) -> "Graph":
        """A graph from a serialized guardjit.proto.Graph (binary protobuf)."""
        context = context or default_context()
        return cls(_native.Graph._load(1, context, data, external_data_dir), context)

    @classmethod
    def from_onnx(cls, model: Union[str, os.PathLike, bytes, bytearray, memoryview], *,
                  context: Optional[Context] = None,
                  external_data_dir: Optional[str] = None) -> "Graph":
        """A graph from an ONNX model: a path to it (whatever the file is
        called) or its ModelProto bytes. The library's importer maps each ONNX
        node onto ATen ops; what it cannot map exactly is refused here
        (UnimplementedError naming the node, op, domain and opset). External
        data resolves against the model's directory, or external_data_dir."""
        if isinstance(model, (bytes, bytearray, memoryview)):
            data = bytes(model)
        else:
            path = os.fspath(model)
            with open(path, "rb") as f:
                data = f.read()
            if external_data_dir is None:
                external_data_dir = os.path.dirname(os.path.abspath(path))
        context = context or default_context()
        return cls(_native.Graph._load(1, context, data, external_data_dir,
                                       _GRAPH_FORMAT_ONNX), context)

    @property
    def input_names(self) -> Tuple[str, ...]:
        return self._handle.input_names

    @property
    def output_names(self) -> Tuple[str, ...]:
        return self._handle.output_names

    @property
    def inputs(self) -> Tuple[TensorInfo, ...]:
        """What the graph declares of each input (dtype, shape with symbols)."""
        return _tensor_infos(self._handle._io_info(True))

    @property
    def outputs(self) -> Tuple[TensorInfo, ...]:
        """What the graph declares of each output."""
        return _tensor_infos(self._handle._io_info(False))

    def tabular(self) -> str:
        """The graph as torch.fx's print_tabular shows it."""
        return self._handle.tabular()

    def __repr__(self):
        return (f"guardjit.Graph(inputs={list(self.input_names)}, "
                f"outputs={list(self.output_names)})")

    def to_text(self) -> str:
        """The graph in protobuf text format, constants inline."""
        if self._writer is not None:
            return self._writer.to_text(external=None)
        if self._text is not None:
            return self._text
        raise ValueError("this graph was loaded from binary protobuf; its text is not kept")

    def save(self, path: Union[str, os.PathLike], *, external_threshold: int = 1024) -> None:
        """Writes the graph as protobuf text (path should end in .pbtxt).

        Constants of more than `external_threshold` bytes go to PATH's stem
        + ".bin" beside it (ExternalData, relative path), so `guardjit run
        PATH` and Graph.from_file(PATH) load them.
        """
        path = os.fspath(path)
        if not path.endswith((".pbtxt", ".txt")):
            raise ValueError(f"Graph.save writes protobuf text format; use a .pbtxt path, not {path!r}")
        if self._writer is not None:
            self._writer.save(path, external_threshold=external_threshold)
            return
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_text())


def _resolve_mark_dynamic(graph: Graph, marks: Iterable) -> list:
    names = graph.input_names
    resolved = []
    for mark in marks:
        if not isinstance(mark, DynamicDim):
            mark = DynamicDim(*mark)
        index = mark.input
        if isinstance(index, str):
            if index not in names:
                raise ValueError(f"mark_dynamic: graph has no input {index!r} (inputs: {list(names)})")
            index = names.index(index)
        hi = INT64_MAX if mark.max is None else mark.max
        resolved.append((int(index), int(mark.dim), int(mark.min), int(hi)))
    return resolved


def _use_torch_fast_path():
    """CPU torch tensors go through torch._C._to_dlpack once torch is loaded."""
    torch = sys.modules.get("torch")
    to_dlpack = getattr(getattr(torch, "_C", None), "_to_dlpack", None)
    if to_dlpack is not None:
        _native._set_torch(torch.Tensor, to_dlpack)


class Function(_native.Function):
    """gj_function: a graph plus its guard-cached compiled entries.

    Call it with tensors (anything with __dlpack__: numpy arrays, torch
    tensors, guardjit Tensors), one per graph input; it returns a tuple of
    guardjit.Tensor, which numpy.from_dlpack / torch.from_dlpack take
    without a copy. Inputs are read in place (zero-copy). Keywords of a call:
    `out=` (a sequence of destination tensors, written in place; returned),
    `stream=` (the CUstream, as an int, for CUDA tensors, e.g.
    torch.cuda.current_stream().cuda_stream: the call enqueues on the stream
    and returns; outputs are ready when the stream reaches them),
    `synchronize=True` (a CUDA call waits for its stream and reports a
    failed device-side check itself; CPU calls ignore it and the stream) and
    `timeout_us=`.

    dynamic: "auto" (static first; sizes that change become symbolic),
    "static" or "dynamic". mark_dynamic: DynamicDim or (input, dim, min,
    max) tuples; None takes the graph's own (from guardjit.export).

    fullgraph: as torch.compile's, a graph break (a cond whose predicate
    reads tensor values, an op whose output size depends on values) raises
    UnimplementedError naming the node instead of splitting the graph into
    segments. mode: "default" or "reduce-overhead" (CUDA calls record a CUDA
    graph per cache entry and size key and replay it; CPU calls ignore it);
    an int is passed to the library as a raw gj_function_mode.
    max_graphs_per_entry: CUDA graphs kept per entry in reduce-overhead mode
    (None = the library's default, 8). compile: "sync" (a miss compiles,
    then runs) or "async" (a miss runs on the eager interpreter at once while
    the entry compiles on the context's background thread).
    Thread-safe: many threads may call one function at once.
    """

    def __new__(cls, graph: Graph, *, dynamic: str = "auto",
                recompile_limit: Optional[int] = None,
                mark_dynamic: Optional[Sequence] = None,
                name: Optional[str] = None,
                fullgraph: bool = False,
                mode: Union[str, int] = "default",
                max_graphs_per_entry: Optional[int] = None,
                compile: str = "sync"):
        if not isinstance(graph, Graph):
            raise TypeError(f"Function takes a guardjit.Graph, not {type(graph).__name__}")
        if dynamic not in _DYNAMIC:
            raise ValueError(f"dynamic must be one of {sorted(_DYNAMIC)}, not {dynamic!r}")
        if isinstance(mode, str):
            if mode not in _MODES:
                raise ValueError(f"mode must be one of {sorted(_MODES)}, not {mode!r}")
            mode = _MODES[mode]
        if compile not in _COMPILE:
            raise ValueError(f"compile must be one of {sorted(_COMPILE)}, not {compile!r}")
        marks = graph.dynamic_dims if mark_dynamic is None else mark_dynamic
        self = super().__new__(
            cls, context=graph.context, graph=graph._handle, name=name,
            recompile_limit=-1 if recompile_limit is None else recompile_limit,
            dynamic=_DYNAMIC[dynamic], mark_dynamic=_resolve_mark_dynamic(graph, marks),
            fullgraph=bool(fullgraph), mode=mode,
            max_graphs_per_entry=0 if max_graphs_per_entry is None else max_graphs_per_entry,
            compile=_COMPILE[compile])
        self.graph = graph
        _use_torch_fast_path()
        return self

    def __init__(self, *args, **kwargs):
        pass

    @property
    def stats(self) -> FunctionStats:
        """Calls, hits, misses, compiles, ... (gj_function_stats)."""
        return FunctionStats(**self._stats())

    @property
    def memory_stats(self) -> MemoryStats:
        """The memory of the function's context."""
        return self.graph.context.memory_stats

    def __repr__(self):
        return f"guardjit.Function({self.graph!r})"
