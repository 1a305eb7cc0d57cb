package guardjit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"strconv"
	"strings"
	"unsafe"
)

// Graph is an immutable, validated graph. Functions made from it keep their
// own reference, so a graph may be closed once its functions exist.
type Graph struct {
	handle
	ptr     *C.gj_graph
	ctx     *Context
	inputs  []string
	outputs []string
	// What the graph declares of each input and output (C API 0.12).
	inputInfo  []TensorInfo
	outputInfo []TensorInfo
}

// TensorInfo is what a graph declares of one input or output: the dtype and
// shape its exporter saw (guardjit.export, an ONNX model's value info).
type TensorInfo struct {
	Name string `json:"name"`
	// DType is 0 (UnknownDType) where the graph does not declare it.
	DType DType `json:"-"`
	// Rank is -1 where the graph does not declare it; Dims has Rank entries.
	Rank int       `json:"rank"`
	Dims []DimInfo `json:"dims"`
}

// DimInfo is one declared dim: Size >= 0 for a static size, -1 for a
// dynamic one, which Symbol names ("batch"; dims sharing a symbol have equal
// sizes) or is "" when unnamed.
type DimInfo struct {
	Size   int64  `json:"size"`
	Symbol string `json:"symbol,omitempty"`
}

// UnknownDType is TensorInfo.DType where the graph declares no dtype.
const UnknownDType DType = C.GJ_DTYPE_UNKNOWN

// String shows a declaration as "float32[batch, 3, ?]" ("?" for an unknown
// dtype or an unnamed dynamic dim, "[*]" for an unknown rank).
func (t TensorInfo) String() string {
	dtype := "?"
	if t.DType != UnknownDType {
		dtype = t.DType.String()
	}
	if t.Rank < 0 {
		return dtype + "[*]"
	}
	parts := make([]string, len(t.Dims))
	for k, d := range t.Dims {
		switch {
		case d.Size >= 0:
			parts[k] = strconv.FormatInt(d.Size, 10)
		case d.Symbol != "":
			parts[k] = d.Symbol
		default:
			parts[k] = "?"
		}
	}
	return dtype + "[" + strings.Join(parts, ", ") + "]"
}

func tensorInfo(ptr *C.gj_graph, i int, input bool) TensorInfo {
	idx := C.size_t(i)
	var t TensorInfo
	if input {
		t = TensorInfo{Name: C.GoString(C.gj_graph_input_name(ptr, idx)),
			DType: DType(C.gj_graph_input_dtype(ptr, idx)), Rank: int(C.gj_graph_input_rank(ptr, idx))}
	} else {
		t = TensorInfo{Name: C.GoString(C.gj_graph_output_name(ptr, idx)),
			DType: DType(C.gj_graph_output_dtype(ptr, idx)), Rank: int(C.gj_graph_output_rank(ptr, idx))}
	}
	for k := 0; k < t.Rank; k++ {
		var size C.int64_t
		var symbol *C.char
		if input {
			size, symbol = C.gj_graph_input_dim(ptr, idx, C.size_t(k)), C.gj_graph_input_dim_symbol(ptr, idx, C.size_t(k))
		} else {
			size, symbol = C.gj_graph_output_dim(ptr, idx, C.size_t(k)), C.gj_graph_output_dim_symbol(ptr, idx, C.size_t(k))
		}
		d := DimInfo{Size: int64(size)}
		if symbol != nil {
			d.Symbol = C.GoString(symbol)
		}
		t.Dims = append(t.Dims, d)
	}
	return t
}

// LoadOption configures the graph loaders.
type LoadOption func(*loadConfig)

type loadConfig struct{ externalDataDir string }

// WithExternalDataDir is the directory relative external-data paths resolve
// against (default: the current directory; GraphFromFile: the file's).
func WithExternalDataDir(dir string) LoadOption {
	return func(c *loadConfig) { c.externalDataDir = dir }
}

// withLoadOptions calls f with C load options built from opts.
func withLoadOptions(opts []LoadOption, f func(*C.gj_graph_load_options)) {
	var cfg loadConfig
	for _, o := range opts {
		o(&cfg)
	}
	var lo C.gj_graph_load_options
	C.gj_graph_load_options_init_v(&lo, C.sizeof_gj_graph_load_options)
	if cfg.externalDataDir != "" {
		dir := C.CString(cfg.externalDataDir)
		defer C.free(unsafe.Pointer(dir))
		lo.external_data_dir = dir
	}
	f(&lo)
}

// GraphFromFile reads a guardjit.proto.Graph: text format if path ends in
// .pbtxt or .txt, binary otherwise.
func (c *Context) GraphFromFile(path string, opts ...LoadOption) (*Graph, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	return c.loadGraph(opts, func(lo *C.gj_graph_load_options, out **C.gj_graph) *C.gj_error {
		return C.gj_graph_from_file(c.ptr, cpath, lo, out)
	})
}

// GraphFromText parses a graph in protobuf text format.
func (c *Context) GraphFromText(text string, opts ...LoadOption) (*Graph, error) {
	ctext := C.CString(text)
	defer C.free(unsafe.Pointer(ctext))
	return c.loadGraph(opts, func(lo *C.gj_graph_load_options, out **C.gj_graph) *C.gj_error {
		return C.gj_graph_from_text(c.ptr, ctext, C.size_t(len(text)), lo, out)
	})
}

// GraphFromBytes parses a serialized (binary) guardjit.proto.Graph. The
// bytes are copied.
func (c *Context) GraphFromBytes(data []byte, opts ...LoadOption) (*Graph, error) {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = unsafe.Pointer(&data[0]) // Go memory without Go pointers, read during the call only
	}
	return c.loadGraph(opts, func(lo *C.gj_graph_load_options, out **C.gj_graph) *C.gj_error {
		return C.gj_graph_from_proto(c.ptr, p, C.size_t(len(data)), lo, out)
	})
}

func (c *Context) loadGraph(opts []LoadOption, load func(*C.gj_graph_load_options, **C.gj_graph) *C.gj_error) (*Graph, error) {
	if err := c.use(); err != nil {
		return nil, err
	}
	defer c.release()
	var ptr *C.gj_graph
	var err error
	withLoadOptions(opts, func(lo *C.gj_graph_load_options) { err = check(load(lo, &ptr)) })
	if err != nil {
		return nil, err
	}
	return newGraph(c, ptr), nil
}

// newGraph wraps ptr; the context's lock must be held.
func newGraph(c *Context, ptr *C.gj_graph) *Graph {
	g := &Graph{ptr: ptr, ctx: c}
	for i := 0; i < int(C.gj_graph_num_inputs(ptr)); i++ {
		g.inputInfo = append(g.inputInfo, tensorInfo(ptr, i, true))
		g.inputs = append(g.inputs, g.inputInfo[i].Name)
	}
	for i := 0; i < int(C.gj_graph_num_outputs(ptr)); i++ {
		g.outputInfo = append(g.outputInfo, tensorInfo(ptr, i, false))
		g.outputs = append(g.outputs, g.outputInfo[i].Name)
	}
	runtime.SetFinalizer(g, (*Graph).destroy)
	return g
}

// Inputs are what the graph declares of its inputs, in call order.
func (g *Graph) Inputs() []TensorInfo { return copyInfos(g.inputInfo) }

// Outputs are what the graph declares of its outputs, in order.
func (g *Graph) Outputs() []TensorInfo { return copyInfos(g.outputInfo) }

func copyInfos(in []TensorInfo) []TensorInfo {
	out := make([]TensorInfo, len(in))
	for i, t := range in {
		t.Dims = append([]DimInfo(nil), t.Dims...)
		out[i] = t
	}
	return out
}

// Close destroys the graph; functions made from it are not affected.
// Closing twice is a no-op.
func (g *Graph) Close() error {
	if g.close() {
		runtime.SetFinalizer(g, nil)
		g.destroy()
	}
	return nil
}

func (g *Graph) destroy() {
	C.gj_graph_destroy(g.ptr)
	g.ptr = nil
}

// InputNames are the graph's placeholders, in call order.
func (g *Graph) InputNames() []string { return append([]string(nil), g.inputs...) }

// OutputNames are the names of the values the graph returns, in order (a
// node's name, or "node[k]" for element k of a multi-output node).
func (g *Graph) OutputNames() []string { return append([]string(nil), g.outputs...) }

// Tabular is the graph as torch.fx's print_tabular shows it.
func (g *Graph) Tabular() (string, error) {
	if err := g.acquire("graph"); err != nil {
		return "", err
	}
	defer g.release()
	var text *C.char
	if err := check(C.gj_graph_to_tabular(g.ptr, &text)); err != nil {
		return "", err
	}
	return takeString(text), nil
}

// takeString copies and frees a library string.
func takeString(s *C.char) string {
	defer C.gj_string_destroy(s)
	return C.GoString(s)
}

// CompileReportOptions configures Graph.CompileReport; the zero value is
// the library's defaults.
type CompileReportOptions struct {
	// Target is "cpu" (the default when empty) or a CUDA target such as
	// "cuda:sm_90".
	Target string
	// Emulate also runs the target's kernels on random inputs and compares
	// them with the eager interpreter (CompileCheck).
	Emulate bool
	// Seed of the random inputs.
	Seed uint64
}

// CompileCheck is gj_compile_check: the comparison an emulated report made.
type CompileCheck struct {
	Checked         bool
	RunCode         Code // CodeOK, or why the target's run failed
	MaxAbsError     float64
	WithinTolerance bool
}

// CompileReport is what guardjit compiles the graph into for a target and
// the given input metadata (the `guardjit compile` text).
func (g *Graph) CompileReport(inputs []Spec, opts CompileReportOptions) (string, CompileCheck, error) {
	if err := g.acquire("graph"); err != nil {
		return "", CompileCheck{}, err
	}
	defer g.release()
	f, err := newFrame(inputs, nil, 0)
	if err != nil {
		return "", CompileCheck{}, err
	}
	defer f.free()
	var o C.gj_compile_report_options
	C.gj_compile_report_options_init_v(&o, C.sizeof_gj_compile_report_options)
	if opts.Target != "" {
		t := C.CString(opts.Target)
		defer C.free(unsafe.Pointer(t))
		o.target = t
	}
	if opts.Emulate {
		o.emulate = 1
	}
	o.seed = C.uint64_t(opts.Seed)
	var chk C.gj_compile_check
	C.gj_compile_check_init_v(&chk, C.sizeof_gj_compile_check)
	var text *C.char
	if err := check(C.gj_graph_compile_report(g.ptr, f.ptrs, C.size_t(len(inputs)), &o, &text, &chk)); err != nil {
		return "", CompileCheck{}, err
	}
	return takeString(text), CompileCheck{
		Checked:         chk.checked != 0,
		RunCode:         Code(chk.run_code),
		MaxAbsError:     float64(chk.max_abs_error),
		WithinTolerance: chk.within_tolerance != 0,
	}, nil
}
