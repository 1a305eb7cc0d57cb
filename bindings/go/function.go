package guardjit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"bufio"
	"runtime"
	"strings"
	"time"
	"unsafe"
)

// DynamicMode is gj_dynamic_mode: which sizes compile as symbols.
type DynamicMode int32

// The modes of gj_dynamic_mode.
const (
	// DynamicAuto specializes sizes first; sizes that change become symbolic.
	DynamicAuto DynamicMode = C.GJ_DYNAMIC_AUTO
	// DynamicStatic specializes every size.
	DynamicStatic DynamicMode = C.GJ_DYNAMIC_STATIC
	// DynamicDynamic makes every size symbolic from the first compile.
	DynamicDynamic DynamicMode = C.GJ_DYNAMIC_DYNAMIC
)

// Mode is gj_function_mode: how a function runs its CUDA calls (CPU calls
// ignore it).
type Mode int32

// The modes of gj_function_mode.
const (
	// ModeDefault runs plain kernel launches.
	ModeDefault Mode = C.GJ_MODE_DEFAULT
	// ModeReduceOverhead is torch.compile's mode="reduce-overhead": each CUDA
	// cache entry records a CUDA graph per size key on its second call and
	// replays it afterwards, patching new input and output addresses into the
	// captured kernels.
	ModeReduceOverhead Mode = C.GJ_MODE_REDUCE_OVERHEAD
)

// CompileMode is gj_compile_mode: when a cache miss compiles.
type CompileMode int32

// The modes of gj_compile_mode.
const (
	// CompileSync compiles the entry in the missing call, then runs it.
	CompileSync CompileMode = C.GJ_COMPILE_SYNC
	// CompileAsync runs the missing call on the eager interpreter at once
	// while the entry compiles on the context's background thread; later
	// calls use the entry once it is published (no compile stall on a new
	// shape).
	CompileAsync CompileMode = C.GJ_COMPILE_ASYNC
)

// AnySize is the Max of a DynamicDim without an upper bound.
const AnySize = int64(^uint64(0) >> 1)

// DynamicDim is torch._dynamo.mark_dynamic(input, dim, min, max): the dim is
// symbolic from the first compile and a size outside [Min, Max] fails the
// entry's guards. Min 2 and Max AnySize mean any size (0 and 1 are always
// specialized).
type DynamicDim struct {
	Input, Dim int
	Min, Max   int64
}

// FunctionOption configures NewFunction.
type FunctionOption func(*functionConfig)

type functionConfig struct {
	name           *string
	recompileLimit *int
	dynamic        DynamicMode
	marks          []DynamicDim
	fullgraph      bool
	mode           Mode
	maxGraphs      int
	compile        CompileMode
}

// WithName names the function in logs and Explain (default: the graph's
// name).
func WithName(name string) FunctionOption {
	return func(c *functionConfig) { c.name = &name }
}

// WithRecompileLimit sets how many cache entries the function compiles
// before it only runs what it has (default 8).
func WithRecompileLimit(n int) FunctionOption {
	return func(c *functionConfig) { c.recompileLimit = &n }
}

// WithDynamic chooses the dynamic-shape mode (default DynamicAuto).
func WithDynamic(m DynamicMode) FunctionOption {
	return func(c *functionConfig) { c.dynamic = m }
}

// WithMarkDynamic marks dims symbolic from the first compile (ignored with
// DynamicStatic). Repeatable.
func WithMarkDynamic(dims ...DynamicDim) FunctionOption {
	return func(c *functionConfig) { c.marks = append(c.marks, dims...) }
}

// WithFullgraph(true) is torch.compile's fullgraph=True: a graph break (a
// cond whose predicate reads tensor values, an op whose output size depends
// on values) fails the call with CodeUnimplemented naming the node, instead
// of splitting the graph into segments (the default).
func WithFullgraph(on bool) FunctionOption {
	return func(c *functionConfig) { c.fullgraph = on }
}

// WithMode chooses how CUDA calls run (default ModeDefault). A value outside
// the Mode constants fails NewFunction with CodeInvalidArgument.
func WithMode(m Mode) FunctionOption {
	return func(c *functionConfig) { c.mode = m }
}

// WithMaxGraphsPerEntry sets how many CUDA graphs (one per size key) each
// cache entry keeps in ModeReduceOverhead before evicting the least recently
// used (0 = the default, 8; negative is CodeInvalidArgument).
func WithMaxGraphsPerEntry(n int) FunctionOption {
	return func(c *functionConfig) { c.maxGraphs = n }
}

// WithCompile chooses when a miss compiles (default CompileSync). A value
// outside the CompileMode constants fails NewFunction with
// CodeInvalidArgument.
func WithCompile(m CompileMode) FunctionOption {
	return func(c *functionConfig) { c.compile = m }
}

// Function is a graph plus its compiled cache entries. Calls are safe from
// any number of goroutines at once.
type Function struct {
	handle
	ptr     *C.gj_function
	ctx     *Context
	inputs  []string
	outputs []string
	frames  chan *frame
}

// NewFunction makes a function of g. It keeps its own reference to the
// graph, which may be closed afterwards.
func (c *Context) NewFunction(g *Graph, opts ...FunctionOption) (*Function, error) {
	var cfg functionConfig
	for _, o := range opts {
		o(&cfg)
	}
	if err := c.use(); err != nil {
		return nil, err
	}
	defer c.release()
	if err := g.acquire("graph"); err != nil {
		return nil, err
	}
	defer g.release()
	if g.ctx != c {
		return nil, newError(CodeInvalidArgument, "the graph belongs to another context")
	}
	var o C.gj_function_options
	C.gj_function_options_init_v(&o, C.sizeof_gj_function_options)
	if cfg.name != nil {
		name := C.CString(*cfg.name)
		defer C.free(unsafe.Pointer(name))
		o.name = name
	}
	if cfg.recompileLimit != nil {
		o.recompile_limit = C.int32_t(*cfg.recompileLimit)
	}
	o.dynamic = C.gj_dynamic_mode(cfg.dynamic)
	if cfg.fullgraph {
		o.fullgraph = 1
	}
	o.mode = C.gj_function_mode(cfg.mode)
	o.max_graphs_per_entry = C.int32_t(cfg.maxGraphs)
	o.compile = C.gj_compile_mode(cfg.compile)
	if len(cfg.marks) > 0 {
		// C memory: the options struct pointing at it sits on the Go stack.
		marks := (*C.gj_dynamic_dim)(C.malloc(C.size_t(len(cfg.marks)) * C.sizeof_gj_dynamic_dim))
		defer C.free(unsafe.Pointer(marks))
		for i, m := range cfg.marks {
			d := &unsafe.Slice(marks, len(cfg.marks))[i]
			d.input = C.int32_t(m.Input)
			d.dim = C.int32_t(m.Dim)
			d.min = C.int64_t(m.Min)
			d.max = C.int64_t(m.Max)
		}
		o.mark_dynamic = marks
		o.num_mark_dynamic = C.size_t(len(cfg.marks))
		o.mark_dynamic_stride = C.sizeof_gj_dynamic_dim
	}
	f := &Function{ctx: c, inputs: g.inputs, outputs: g.outputs, frames: make(chan *frame, 2*runtime.GOMAXPROCS(0))}
	if err := check(C.gj_function_create(c.ptr, g.ptr, &o, &f.ptr)); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(f, (*Function).destroy)
	return f, nil
}

// Close destroys the function and its compiled code, waiting for calls in
// progress. Closing twice is a no-op.
func (f *Function) Close() error {
	if f.close() {
		runtime.SetFinalizer(f, nil)
		f.destroy()
	}
	return nil
}

func (f *Function) destroy() {
	C.gj_function_destroy(f.ptr)
	f.ptr = nil
	for {
		select {
		case fr := <-f.frames:
			fr.free()
		default:
			return
		}
	}
}

// InputNames are the graph's inputs, in call order.
func (f *Function) InputNames() []string { return append([]string(nil), f.inputs...) }

// OutputNames are the names of the graph's outputs, in order.
func (f *Function) OutputNames() []string { return append([]string(nil), f.outputs...) }

// NumInputs is the number of inputs a call takes.
func (f *Function) NumInputs() int { return len(f.inputs) }

// NumOutputs is the number of outputs a call returns.
func (f *Function) NumOutputs() int { return len(f.outputs) }

// Stats is gj_function_stats: what the guard cache did.
type Stats struct {
	Calls         int64
	Hits          int64
	Misses        int64
	Compiles      int64
	Recompiles    int64 // compiles after the first
	FallbackCalls int64 // eager runs past the recompile limit
	CacheEntries  int64
	CompileTime   time.Duration // all compiles together
	GuardLookup   time.Duration // mean guard lookup on hits, sampled
	// Graphs (segments) reached so far, 1 without graph breaks, and the
	// breaks between them. With breaks, Compiles, Misses, CacheEntries and
	// CompileTime sum over the graphs and a hit is a call no graph missed.
	GraphCount      int64
	GraphBreakCount int64
	// ModeReduceOverhead, over all entries: CUDA graphs captured (re-captures
	// included), replays, kernel nodes patched with a call's new addresses,
	// re-captures, graphs evicted past WithMaxGraphsPerEntry, and the device
	// bytes the entries' private pools hold now.
	CUDAGraphsRecorded      int64
	CUDAGraphReplays        int64
	CUDAGraphPointerUpdates int64
	CUDAGraphRecaptures     int64
	CUDAGraphEvictions      int64
	CUDAGraphPoolBytes      int64
	// CompileAsync: calls run eagerly while their entry was compiling.
	EagerWhileCompiling int64
	// Entries (of Compiles) whose code all came from the context's compile
	// cache (WithCacheDir; C API 0.11): nothing was compiled for them, and
	// Explain says "loaded from the disk cache".
	EntriesLoaded int64
}

// Stats reads the function's counters.
func (f *Function) Stats() (Stats, error) {
	if err := f.acquire("function"); err != nil {
		return Stats{}, err
	}
	defer f.release()
	var s C.gj_function_stats
	C.gj_function_stats_init_v(&s, C.sizeof_gj_function_stats)
	if err := check(C.gj_function_get_stats(f.ptr, &s)); err != nil {
		return Stats{}, err
	}
	return Stats{
		Calls:         int64(s.calls),
		Hits:          int64(s.hits),
		Misses:        int64(s.misses),
		Compiles:      int64(s.compiles),
		Recompiles:    int64(s.recompiles),
		FallbackCalls: int64(s.fallback_calls),
		CacheEntries:  int64(s.cache_entries),
		CompileTime:   time.Duration(float64(s.compile_ms_total) * float64(time.Millisecond)),
		GuardLookup:   time.Duration(float64(s.guard_ns_mean)),

		GraphCount:      int64(s.graph_count),
		GraphBreakCount: int64(s.graph_break_count),

		CUDAGraphsRecorded:      int64(s.cuda_graphs_recorded),
		CUDAGraphReplays:        int64(s.cuda_graph_replays),
		CUDAGraphPointerUpdates: int64(s.cuda_graph_pointer_updates),
		CUDAGraphRecaptures:     int64(s.cuda_graph_recaptures),
		CUDAGraphEvictions:      int64(s.cuda_graph_evictions),
		CUDAGraphPoolBytes:      int64(s.cuda_graph_pool_bytes),

		EagerWhileCompiling: int64(s.eager_while_compiling),
		EntriesLoaded:       int64(s.entries_loaded),
	}, nil
}

// Explain is torch._dynamo.explain()-style text: graph and op counts, the
// guards of every entry, compile times, cache state, counters, recompile
// reasons and guard latency; with graph breaks, "Graph Count", "Graph Break
// Count", each break's reason and the ops and guards per graph.
func (f *Function) Explain() (string, error) {
	return f.text(func(out **C.char) *C.gj_error { return C.gj_function_explain(f.ptr, out) })
}

// DumpGuards is the guards of every cache entry in TREE_GUARD_MANAGER form,
// most recently used first.
func (f *Function) DumpGuards() (string, error) {
	return f.text(func(out **C.char) *C.gj_error { return C.gj_function_dump_guards(f.ptr, out) })
}

func (f *Function) text(get func(**C.char) *C.gj_error) (string, error) {
	if err := f.acquire("function"); err != nil {
		return "", err
	}
	defer f.release()
	var text *C.char
	if err := check(get(&text)); err != nil {
		return "", err
	}
	return takeString(text), nil
}

// RecompileReasons are the "Recompile Reasons" lines of Explain: why each
// compile after the first happened.
func (f *Function) RecompileReasons() ([]string, error) {
	text, err := f.Explain()
	if err != nil {
		return nil, err
	}
	return ParseRecompileReasons(text), nil
}

// ParseRecompileReasons extracts the indented lines under "Recompile
// Reasons:" from Explain's text.
func ParseRecompileReasons(explain string) []string {
	var reasons []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(explain))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "Recompile Reasons:":
			in = true
		case in && strings.HasPrefix(line, "  "):
			reasons = append(reasons, strings.TrimSpace(line))
		case in:
			return reasons
		}
	}
	return reasons
}
