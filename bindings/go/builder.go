package guardjit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Arg is one argument of a builder node (gj_arg). Make one with Ref, Int,
// Float, Bool, Str, DTypeArg, Device, Ints, Floats, Refs, Subgraph or None;
// Kwarg makes it a keyword argument.
type Arg struct {
	kind   C.gj_arg_kind
	name   string
	i      int64
	f      float64
	str    string
	dtype  DType
	ints   []int64
	floats []float64
	refs   []string
}

// ArgRef refers to an earlier input, constant or node by name.
func ArgRef(name string) Arg { return Arg{kind: C.GJ_ARG_REF, str: name} }

// ArgInt is an integer constant.
func ArgInt(v int64) Arg { return Arg{kind: C.GJ_ARG_INT, i: v} }

// ArgFloat is a floating-point constant.
func ArgFloat(v float64) Arg { return Arg{kind: C.GJ_ARG_FLOAT, f: v} }

// ArgBool is a boolean constant.
func ArgBool(v bool) Arg {
	a := Arg{kind: C.GJ_ARG_BOOL}
	if v {
		a.i = 1
	}
	return a
}

// ArgString is a string constant.
func ArgString(s string) Arg { return Arg{kind: C.GJ_ARG_STRING, str: s} }

// ArgDType is a dtype constant (torch.float32).
func ArgDType(d DType) Arg { return Arg{kind: C.GJ_ARG_DTYPE, dtype: d} }

// ArgDevice is a device constant: "cpu", "cuda:0".
func ArgDevice(d string) Arg { return Arg{kind: C.GJ_ARG_DEVICE, str: d} }

// ArgInts is a list of integers.
func ArgInts(v ...int64) Arg { return Arg{kind: C.GJ_ARG_INT_LIST, ints: v} }

// ArgFloats is a list of floats.
func ArgFloats(v ...float64) Arg { return Arg{kind: C.GJ_ARG_FLOAT_LIST, floats: v} }

// ArgRefs is a list of references (torch.cat's tensors).
func ArgRefs(names ...string) Arg { return Arg{kind: C.GJ_ARG_REF_LIST, refs: names} }

// ArgSubgraph names a subgraph (the branches of higher_order.cond).
func ArgSubgraph(name string) Arg { return Arg{kind: C.GJ_ARG_SUBGRAPH, str: name} }

// ArgNone is Python's None.
func ArgNone() Arg { return Arg{kind: C.GJ_ARG_NONE} }

// Kwarg makes a a keyword argument: Kwarg("alpha", ArgInt(2)).
func Kwarg(name string, a Arg) Arg { a.name = name; return a }

// cArena holds C allocations made for one builder call.
type cArena []unsafe.Pointer

func (a *cArena) str(s string) *C.char {
	p := C.CString(s)
	*a = append(*a, unsafe.Pointer(p))
	return p
}

func (a *cArena) alloc(n int) unsafe.Pointer {
	if n == 0 {
		n = 1
	}
	p := C.calloc(1, C.size_t(n))
	*a = append(*a, p)
	return p
}

func (a *cArena) free() {
	for _, p := range *a {
		C.free(p)
	}
	*a = nil
}

// Builder builds a graph node by node (gj_graph_builder), without protobuf.
// Each add is checked at once; a failed add leaves the builder as it was.
// Not safe for concurrent use.
type Builder struct {
	handle
	ptr *C.gj_graph_builder
	ctx *Context
}

// NewBuilder starts a graph named name.
func (c *Context) NewBuilder(name string) (*Builder, error) {
	if err := c.use(); err != nil {
		return nil, err
	}
	defer c.release()
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	b := &Builder{ctx: c}
	if err := check(C.gj_graph_builder_create(c.ptr, cname, &b.ptr)); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(b, (*Builder).destroy)
	return b, nil
}

// Close destroys the builder (after Finish too). Closing twice is a no-op.
func (b *Builder) Close() error {
	if b.close() {
		runtime.SetFinalizer(b, nil)
		b.destroy()
	}
	return nil
}

func (b *Builder) destroy() {
	C.gj_graph_builder_destroy(b.ptr)
	b.ptr = nil
}

// AddInput adds a placeholder.
func (b *Builder) AddInput(name string) error {
	if err := b.acquire("builder"); err != nil {
		return err
	}
	defer b.release()
	var a cArena
	defer a.free()
	return check(C.gj_graph_builder_add_input(b.ptr, a.str(name)))
}

// AddConstant adds a constant (weights); value is copied.
func (b *Builder) AddConstant(name string, value Tensor) error {
	if err := b.acquire("builder"); err != nil {
		return err
	}
	defer b.release()
	if err := checkTensor("constant", 0, []string{name}, &value); err != nil {
		return err
	}
	var a cArena
	defer a.free()
	fr, err := newFrame([]Spec{value.Spec()}, []string{name}, 0)
	if err != nil {
		return err
	}
	defer fr.free()
	fr.tensors[0].device = value.Device.raw()
	switch {
	case value.DevicePtr != 0:
		// Not Go memory (the library copies host memory and refuses a
		// CUDA tensor, naming the constant).
		*(*uintptr)(unsafe.Pointer(&fr.tensors[0].data)) = value.DevicePtr
	case validShape(value.Shape):
		fr.copyIn(0, value.Data)
	}
	return check(C.gj_graph_builder_add_constant(b.ptr, a.str(name), &fr.tensors[0]))
}

// AddNode adds a call of target (an ATen overload, "aten.add.Tensor") named
// name.
func (b *Builder) AddNode(name, target string, args ...Arg) error {
	if err := b.acquire("builder"); err != nil {
		return err
	}
	defer b.release()
	var a cArena
	defer a.free()
	cargs := (*C.gj_arg)(a.alloc(len(args) * C.sizeof_gj_arg))
	for i, arg := range args {
		c := &unsafe.Slice(cargs, len(args))[i]
		c.kind = arg.kind
		if arg.name != "" {
			c.name = a.str(arg.name)
		}
		c.i = C.int64_t(arg.i)
		c.f = C.double(arg.f)
		c.dtype = C.gj_dtype(C.GJ_DTYPE_FLOAT32)
		switch arg.kind {
		case C.GJ_ARG_REF, C.GJ_ARG_STRING, C.GJ_ARG_DEVICE, C.GJ_ARG_SUBGRAPH:
			c.str = a.str(arg.str)
		case C.GJ_ARG_DTYPE:
			c.dtype = C.gj_dtype(arg.dtype)
		case C.GJ_ARG_INT_LIST:
			p := (*C.int64_t)(a.alloc(len(arg.ints) * 8))
			for k, v := range arg.ints {
				unsafe.Slice(p, len(arg.ints))[k] = C.int64_t(v)
			}
			c.ints, c.len = p, C.size_t(len(arg.ints))
		case C.GJ_ARG_FLOAT_LIST:
			p := (*C.double)(a.alloc(len(arg.floats) * 8))
			for k, v := range arg.floats {
				unsafe.Slice(p, len(arg.floats))[k] = C.double(v)
			}
			c.floats, c.len = p, C.size_t(len(arg.floats))
		case C.GJ_ARG_REF_LIST:
			c.refs, c.len = a.strs(arg.refs), C.size_t(len(arg.refs))
		}
	}
	// The _v form (0.9) reads elements this binding's gj_arg size apart.
	return check(C.gj_graph_builder_add_node_v(b.ptr, a.str(name), a.str(target), cargs, C.size_t(len(args)), C.sizeof_gj_arg))
}

func (a *cArena) strs(ss []string) **C.char {
	p := (**C.char)(a.alloc(len(ss) * int(unsafe.Sizeof((*C.char)(nil)))))
	for i, s := range ss {
		unsafe.Slice(p, len(ss))[i] = a.str(s)
	}
	return p
}

// SetOutputs names the values the graph returns.
func (b *Builder) SetOutputs(names ...string) error {
	if err := b.acquire("builder"); err != nil {
		return err
	}
	defer b.release()
	var a cArena
	defer a.free()
	return check(C.gj_graph_builder_set_outputs(b.ptr, a.strs(names), C.size_t(len(names))))
}

// Finish returns the graph. The builder is spent afterwards: only Close it.
func (b *Builder) Finish() (*Graph, error) {
	if err := b.acquire("builder"); err != nil {
		return nil, err
	}
	defer b.release()
	if err := b.ctx.use(); err != nil {
		return nil, err
	}
	defer b.ctx.release()
	var g *C.gj_graph
	if err := check(C.gj_graph_builder_finish(b.ptr, &g)); err != nil {
		return nil, err
	}
	return newGraph(b.ctx, g), nil
}
