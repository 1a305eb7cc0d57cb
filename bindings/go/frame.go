package guardjit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"
)

// frame is the C memory one call needs: the call options, the cancel flag,
// the DLTensor structs with their shape arrays, the array of pointers to
// them, the DLManagedTensor* outputs of gj_function_call_alloc and the
// requires_grad flags. It is one malloc'd block, so nothing the library
// reads lives in Go memory except the tensors' data, which the shim binds for
// the duration of the call (see doc.go). Functions keep a few frames for
// reuse.
type frame struct {
	base    unsafe.Pointer
	size    uintptr
	opts    *C.gj_call_options
	cancel  *int32
	tensors []C.DLTensor
	ptrs    **C.DLTensor
	managed []*C.DLManagedTensor
	dims    []C.int64_t
	rg      []C.uint8_t
	// C buffers holding the data of tensors past the direct slots.
	copies []unsafe.Pointer
}

const minFrameBytes = 1024

func align8(n uintptr) uintptr { return (n + 7) &^ 7 }

// layout points f's slices into a block big enough for n tensors with nDims
// dims in all, nManaged library outputs and nIn requires_grad flags,
// reallocating the block if it is too small.
func (f *frame) layout(n, nDims, nManaged, nIn int) {
	var (
		offOpts    uintptr
		offCancel  = align8(offOpts + C.sizeof_gj_call_options)
		offTensors = offCancel + 8
		offPtrs    = align8(offTensors + uintptr(n)*C.sizeof_DLTensor)
		offManaged = offPtrs + uintptr(n)*8
		offDims    = offManaged + uintptr(nManaged)*8
		offRG      = offDims + uintptr(nDims)*8
		size       = align8(offRG + uintptr(nIn))
	)
	if size > f.size {
		if f.base != nil {
			C.free(f.base)
		}
		if size < minFrameBytes {
			size = minFrameBytes
		}
		f.base = C.malloc(C.size_t(size))
		if f.base == nil {
			panic("guardjit: out of C memory")
		}
		f.size = size
	}
	at := func(off uintptr) unsafe.Pointer { return unsafe.Add(f.base, off) }
	f.opts = (*C.gj_call_options)(at(offOpts))
	*f.opts = callOptionsDefaults
	f.cancel = (*int32)(at(offCancel))
	*f.cancel = 0
	f.tensors = unsafe.Slice((*C.DLTensor)(at(offTensors)), n)
	f.ptrs = (**C.DLTensor)(at(offPtrs))
	ptrs := unsafe.Slice(f.ptrs, n)
	for i := range ptrs {
		ptrs[i] = &f.tensors[i]
	}
	f.managed = unsafe.Slice((**C.DLManagedTensor)(at(offManaged)), nManaged)
	for i := range f.managed {
		f.managed[i] = nil
	}
	f.dims = unsafe.Slice((*C.int64_t)(at(offDims)), nDims)
	f.rg = unsafe.Slice((*C.uint8_t)(at(offRG)), nIn)
}

// setTensor fills tensor i's metadata, its shape taken from f.dims at
// *dimAt (advanced past it). The data pointer stays NULL.
func (f *frame) setTensor(i int, dtype DType, shape []int64, dimAt *int) {
	info := dtypes[dtype]
	t := &f.tensors[i]
	t.data = nil
	t.device.device_type = C.kDLCPU
	t.device.device_id = 0
	t.ndim = C.int32_t(len(shape))
	t.dtype.code = C.uint8_t(info.code)
	t.dtype.bits = C.uint8_t(info.bits)
	t.dtype.lanes = 1
	d := f.dims[*dimAt : *dimAt+len(shape)]
	for k, s := range shape {
		d[k] = C.int64_t(s)
	}
	if len(d) > 0 {
		t.shape = &d[0]
	} else {
		t.shape = nil
	}
	*dimAt += len(shape)
	t.strides = nil
	t.byte_offset = 0
}

// copyIn gives tensor i a C buffer holding data (a tensor past the direct
// slots); an empty one keeps NULL data.
func (f *frame) copyIn(i int, data []byte) {
	if len(data) == 0 {
		return
	}
	p := C.malloc(C.size_t(len(data)))
	if p == nil {
		panic("guardjit: out of C memory")
	}
	copy(unsafe.Slice((*byte)(p), len(data)), data)
	f.copies = append(f.copies, p)
	f.tensors[i].data = p
}

// freeCopies frees the C buffers copyIn made.
func (f *frame) freeCopies() {
	for i, p := range f.copies {
		C.free(p)
		f.copies[i] = nil
	}
	f.copies = f.copies[:0]
}

// free releases the block.
func (f *frame) free() {
	f.freeCopies()
	if f.base != nil {
		C.free(f.base)
		f.base = nil
		f.size = 0
	}
}

// setSpecs lays f out for metadata-only inputs (data NULL), nManaged
// library outputs and nIn requires_grad flags; names label the inputs in
// errors.
func (f *frame) setSpecs(inputs []Spec, names []string, nManaged, nIn int) error {
	nDims := 0
	for i, s := range inputs {
		if !s.DType.Valid() {
			return newError(CodeInvalidArgument, "%s: unknown dtype %d", tensorLabel("input", i, names), int32(s.DType))
		}
		nDims += len(s.Shape)
	}
	f.layout(len(inputs), nDims, nManaged, nIn)
	at := 0
	for i, s := range inputs {
		f.setTensor(i, s.DType, s.Shape, &at)
	}
	return nil
}

// newFrame is a standalone frame for metadata-only calls (data NULL).
func newFrame(inputs []Spec, names []string, nManaged int) (*frame, error) {
	f := &frame{}
	if err := f.setSpecs(inputs, names, nManaged, 0); err != nil {
		return nil, err
	}
	return f, nil
}

// callOptionsDefaults is gj_call_options_init_v's result, read once.
var callOptionsDefaults = func() C.gj_call_options {
	var o C.gj_call_options
	C.gj_call_options_init_v(&o, C.sizeof_gj_call_options)
	return o
}()
