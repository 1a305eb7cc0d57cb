package guardjit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// CallOption configures one call.
type CallOption func(*callConfig)

type callConfig struct {
	timeout       time.Duration
	noGrad        bool
	deterministic bool
	requiresGrad  []bool
	stream        unsafe.Pointer
	synchronize   bool
}

// WithTimeout stops the call (DEADLINE_EXCEEDED, nothing written) once d has
// passed since it started. A context deadline does the same.
func WithTimeout(d time.Duration) CallOption {
	return func(c *callConfig) { c.timeout = d }
}

// WithGradMode sets the grad-mode state the cache guards on
// (torch.is_grad_enabled(); default true).
func WithGradMode(enabled bool) CallOption {
	return func(c *callConfig) { c.noGrad = !enabled }
}

// WithDeterministic sets the deterministic-algorithms state the cache guards
// on (default false).
func WithDeterministic(on bool) CallOption {
	return func(c *callConfig) { c.deterministic = on }
}

// WithRequiresGrad says, per input, whether the host's tensor requires grad
// (DLPack does not carry it); its length must be the number of inputs.
func WithRequiresGrad(flags ...bool) CallOption {
	return func(c *callConfig) { c.requiresGrad = flags }
}

// WithStream sets the CUstream a call on CUDA tensors runs on
// (gj_call_options.stream; nil, the default, is the legacy default stream):
// the call enqueues on the stream and returns; outputs are ready when the
// stream reaches them, and inputs must stay valid until then. stream is a
// C pointer from the CUDA driver or runtime, never Go memory. Calls on CPU
// tensors, which are all that Tensor holds today, ignore it.
func WithStream(stream unsafe.Pointer) CallOption {
	return func(c *callConfig) { c.stream = stream }
}

// WithSynchronize makes a call on CUDA tensors wait for its stream before
// returning, and report a device-side check that failed during the call
// (gj_call_options.synchronize). Calls on CPU tensors ignore it.
func WithSynchronize(on bool) CallOption {
	return func(c *callConfig) { c.synchronize = on }
}

// Knobs for tests and benchmarks: how many data pointers go to C as direct
// arguments (the rest are copied through C memory), and whether functions
// keep frames for reuse (else one malloc and free per call).
var (
	maxDirect   = int(C.GJGO_DIRECT)
	reuseFrames = true
)

// Call runs the function and returns its outputs in Go memory (the library
// allocates them and they are copied out: one copy per output). ctx may
// cancel the call; see CallInto.
func (f *Function) Call(ctx context.Context, inputs []Tensor, opts ...CallOption) ([]Tensor, error) {
	for i := range inputs {
		if !inputs[i].onHost() {
			// Outputs would be device memory, which Call cannot copy.
			return nil, newError(CodeInvalidArgument, "%s is on %s: Call copies outputs into Go memory; use CallAlloc or CallInto for CUDA tensors", tensorLabel("input", i, f.inputs), inputs[i].Device)
		}
	}
	var outs []Tensor
	err := f.run(ctx, inputs, nil, len(f.outputs), opts, func(fr *frame) {
		outs = make([]Tensor, len(fr.managed))
		for i, m := range fr.managed {
			lt := LibTensor{m: m}
			outs[i] = lt.Copy()
		}
		if len(fr.managed) > 0 {
			C.gjgo_release_all(&fr.managed[0], C.size_t(len(fr.managed)))
		}
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// CallInto runs the function into caller-provided outputs: each must have
// the output's dtype and shape (the library checks, before running) and must
// not overlap another output; it may overlap an input. Results are written in
// place; on error no output has been written.
//
// If ctx can be cancelled, a goroutine watches it for the duration of the
// call and raises the call's cancel flag: the call stops between steps with
// CANCELLED and errors.Is(err, context.Canceled) holds. A deadline on ctx is
// passed on as the call's timeout (DEADLINE_EXCEEDED).
func (f *Function) CallInto(ctx context.Context, inputs, outputs []Tensor, opts ...CallOption) error {
	return f.run(ctx, inputs, outputs, 0, opts, nil)
}

// CallAlloc runs the function and returns the outputs the library allocated,
// without copying them. Close each (a finalizer is only a backstop: the
// memory counts as in use until then).
func (f *Function) CallAlloc(ctx context.Context, inputs []Tensor, opts ...CallOption) ([]*LibTensor, error) {
	var outs []*LibTensor
	err := f.run(ctx, inputs, nil, len(f.outputs), opts, func(fr *frame) {
		outs = make([]*LibTensor, len(fr.managed))
		for i, m := range fr.managed {
			outs[i] = newLibTensor(m)
		}
	})
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// Precompile compiles the cache entry a call with inputs of these dtypes and
// shapes would use, without running it, so the first real call is a hit.
// FAILED_PRECONDITION past the recompile limit.
func (f *Function) Precompile(ctx context.Context, inputs []Spec, opts ...CallOption) error {
	ctx, cfg, err := f.begin(ctx, opts, len(inputs))
	if err != nil {
		return err
	}
	defer f.release()
	fr := f.getFrame()
	defer f.putFrame(fr)
	if err := fr.setSpecs(inputs, f.inputs, 0, len(cfg.requiresGrad)); err != nil {
		return err
	}
	fr.apply(cfg)
	w := arm(ctx, fr, cfg)
	cerr := C.gj_function_precompile(f.ptr, fr.ptrs, C.size_t(len(inputs)), fr.opts)
	w.disarm()
	return w.wrap(ctx, takeError(cerr))
}

// begin is what every call does first: a nil ctx is Background, a ctx
// already done fails before anything runs, then the function is acquired
// (the caller releases it on success) and opts are applied.
func (f *Function) begin(ctx context.Context, opts []CallOption, nIn int) (context.Context, *callConfig, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, contextError(err)
	}
	if err := f.acquire("function"); err != nil {
		return nil, nil, err
	}
	cfg, err := f.config(opts, nIn)
	if err != nil {
		f.release()
		return nil, nil, err
	}
	return ctx, cfg, nil
}

var noConfig callConfig

func (f *Function) config(opts []CallOption, nIn int) (*callConfig, error) {
	if len(opts) == 0 {
		return &noConfig, nil
	}
	cfg := &callConfig{}
	for _, o := range opts {
		o(cfg)
	}
	if cfg.requiresGrad != nil && len(cfg.requiresGrad) != nIn {
		return nil, newError(CodeInvalidArgument, "WithRequiresGrad has %d flags for %d inputs", len(cfg.requiresGrad), nIn)
	}
	return cfg, nil
}

// run is every data-carrying call: gj_function_call into outputs when
// nAlloc is 0, gj_function_call_alloc of nAlloc outputs otherwise. done runs
// on success while the frame (with its managed outputs) is still valid.
func (f *Function) run(ctx context.Context, inputs, outputs []Tensor, nAlloc int, opts []CallOption, done func(*frame)) error {
	ctx, cfg, err := f.begin(ctx, opts, len(inputs))
	if err != nil {
		return err
	}
	defer f.release()
	nDims := 0
	for i := range inputs {
		if err := checkTensor("input", i, f.inputs, &inputs[i]); err != nil {
			return err
		}
		nDims += len(inputs[i].Shape)
	}
	for i := range outputs {
		if err := checkTensor("output", i, f.outputs, &outputs[i]); err != nil {
			return err
		}
		nDims += len(outputs[i].Shape)
	}

	fr := f.getFrame()
	defer f.putFrame(fr)
	n := len(inputs) + len(outputs)
	fr.layout(n, nDims, nAlloc, len(cfg.requiresGrad))
	var p [C.GJGO_DIRECT]unsafe.Pointer
	nDirect, at := 0, 0
	type pending struct {
		dst []byte
		src unsafe.Pointer
	}
	var copyOut []pending
	for i := 0; i < n; i++ {
		t, isInput := &Tensor{}, i < len(inputs)
		if isInput {
			t = &inputs[i]
		} else {
			t = &outputs[i-len(inputs)]
		}
		fr.setTensor(i, t.DType, t.Shape, &at)
		switch {
		case t.DevicePtr != 0:
			// Memory that is not Go's: no pinning, no copies. The field is
			// written as the integer it holds (checkTensor vetted it).
			fr.tensors[i].device = t.Device.raw()
			*(*uintptr)(unsafe.Pointer(&fr.tensors[i].data)) = t.DevicePtr
		case t.Device != (Device{}) && t.Device.Type != C.kDLCPU:
			// A device tensor with no elements (checkTensor allows a zero
			// DevicePtr only then): NULL data on its device.
			fr.tensors[i].device = t.Device.raw()
		case len(t.Data) == 0 || !validShape(t.Shape):
			// NULL data: an empty tensor, or a shape the library refuses
			// before reading anything (its message names the tensor).
		case i < maxDirect:
			p[i] = unsafe.Pointer(&t.Data[0])
			nDirect = i + 1
		case isInput:
			fr.copyIn(i, t.Data)
		default:
			fr.copyIn(i, t.Data) // a C buffer the size of the output
			copyOut = append(copyOut, pending{t.Data, fr.tensors[i].data})
		}
	}
	fr.apply(cfg)
	w := arm(ctx, fr, cfg)
	var cerr *C.gj_error
	var t0 *C.DLTensor
	if n > 0 {
		t0 = &fr.tensors[0]
	}
	if nAlloc == 0 {
		cerr = C.gjgo_call(f.ptr, t0, fr.ptrs, C.size_t(len(inputs)), C.size_t(len(outputs)), fr.opts,
			C.size_t(nDirect), p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
	} else {
		cerr = C.gjgo_call_alloc(f.ptr, t0, fr.ptrs, C.size_t(len(inputs)), fr.opts, &fr.managed[0], C.size_t(nAlloc),
			C.size_t(nDirect), p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
	}
	w.disarm()
	if err := w.wrap(ctx, takeError(cerr)); err != nil {
		return err
	}
	for _, c := range copyOut {
		copy(c.dst, unsafe.Slice((*byte)(c.src), len(c.dst)))
	}
	if done != nil {
		done(fr)
	}
	return nil
}

// checkTensor validates what the library cannot: a dtype it can map, and
// data that covers the shape (so C never reads or writes past a Go slice).
// A shape the library will refuse (a negative size, an element count past
// int64) passes, to get the library's message, but run withholds its data,
// so there is nothing the library could read past.
func checkTensor(kind string, i int, names []string, t *Tensor) error {
	if !t.DType.Valid() {
		return newError(CodeInvalidArgument, "%s: unknown dtype %d", tensorLabel(kind, i, names), int32(t.DType))
	}
	n, ok := NumElements(t.Shape)
	switch t.Device.Type {
	case 0, C.kDLCPU, C.kDLCUDA, C.kDLCUDAHost:
	default:
		return newError(CodeInvalidArgument, "%s: unknown device type %d", tensorLabel(kind, i, names), t.Device.Type)
	}
	if t.Device.ID < 0 || (t.Device.Type != C.kDLCUDA && t.Device.ID != 0) {
		return newError(CodeInvalidArgument, "%s: device %s has ordinal %d", tensorLabel(kind, i, names), t.Device, t.Device.ID)
	}
	if t.DevicePtr != 0 || (t.Device != Device{} && t.Device.Type != C.kDLCPU) {
		// Memory Go does not own: the caller vouches for its extent.
		if t.Data != nil {
			return newError(CodeInvalidArgument, "%s: both Data and DevicePtr are set", tensorLabel(kind, i, names))
		}
		if t.DevicePtr%uintptr(t.DType.Size()) != 0 {
			return newError(CodeInvalidArgument, "%s: DevicePtr %#x is not aligned to %s's %d bytes", tensorLabel(kind, i, names), t.DevicePtr, t.DType, t.DType.Size())
		}
		if ok && n > 0 && t.DevicePtr == 0 {
			return newError(CodeInvalidArgument, "%s: %s%v on %s has no DevicePtr", tensorLabel(kind, i, names), t.DType, t.Shape, t.Device)
		}
		return nil
	}
	if !ok {
		return nil
	}
	need := n * int64(t.DType.Size())
	if need/int64(t.DType.Size()) != n || int64(len(t.Data)) != need {
		return newError(CodeInvalidArgument, "%s: %s%v needs %d bytes of data, got %d", tensorLabel(kind, i, names), t.DType, t.Shape, need, len(t.Data))
	}
	return nil
}

func validShape(shape []int64) bool { _, ok := NumElements(shape); return ok }

func tensorLabel(kind string, i int, names []string) string {
	if i < len(names) {
		return fmt.Sprintf("%s %d ('%s')", kind, i, names[i])
	}
	return fmt.Sprintf("%s %d", kind, i)
}

func (fr *frame) apply(cfg *callConfig) {
	if cfg.noGrad {
		fr.opts.grad_mode = 0
	}
	if cfg.deterministic {
		fr.opts.deterministic = 1
	}
	if cfg.requiresGrad != nil {
		for i, r := range cfg.requiresGrad {
			fr.rg[i] = 0
			if r {
				fr.rg[i] = 1
			}
		}
		if len(fr.rg) > 0 {
			fr.opts.requires_grad = &fr.rg[0]
		}
	}
	if cfg.timeout > 0 {
		fr.opts.timeout_us = C.int64_t(micros(cfg.timeout))
	}
	fr.opts.stream = cfg.stream
	if cfg.synchronize {
		fr.opts.synchronize = 1
	}
}

func micros(d time.Duration) int64 {
	if us := d.Microseconds(); us > 0 {
		return us
	}
	return 1
}

// watch ties a context to a call's cancel flag.
type watch struct {
	stop, finished chan struct{}
	deadline       bool // the call's timeout came from ctx's deadline
}

// arm makes the call stop when ctx ends: its deadline becomes the timeout,
// and a goroutine raises the cancel flag (C memory, read by the library with
// relaxed atomic loads) when ctx is done.
func arm(ctx context.Context, fr *frame, cfg *callConfig) watch {
	done := ctx.Done()
	if done == nil {
		return watch{}
	}
	var w watch
	if dl, ok := ctx.Deadline(); ok {
		if left := time.Until(dl); cfg.timeout <= 0 || left < cfg.timeout {
			fr.opts.timeout_us = C.int64_t(micros(left))
			w.deadline = true
		}
	}
	fr.opts.cancel = (*C.int32_t)(unsafe.Pointer(fr.cancel))
	w.stop, w.finished = make(chan struct{}), make(chan struct{})
	flag := fr.cancel
	go func() {
		defer close(w.finished)
		select {
		case <-done:
			atomic.StoreInt32(flag, 1)
		case <-w.stop:
		}
	}()
	return w
}

// disarm stops the watcher and waits for it, so it never writes the flag
// after the frame is reused.
func (w watch) disarm() {
	if w.stop != nil {
		close(w.stop)
		<-w.finished
	}
}

// wrap links a CANCELLED or DEADLINE_EXCEEDED error to ctx's error.
func (w watch) wrap(ctx context.Context, err *Error) error {
	if err == nil {
		return nil
	}
	switch {
	case err.code == CodeCancelled && ctx.Err() != nil:
		err.cause = ctx.Err()
	case err.code == CodeDeadlineExceeded && w.deadline:
		err.cause = context.DeadlineExceeded
	}
	return err
}

func contextError(err error) error {
	code := CodeCancelled
	if err == context.DeadlineExceeded {
		code = CodeDeadlineExceeded
	}
	return &Error{code: code, msg: "call not started: " + err.Error(), cause: err}
}

func (f *Function) getFrame() *frame {
	if reuseFrames {
		select {
		case fr := <-f.frames:
			return fr
		default:
		}
	}
	return &frame{}
}

// putFrame keeps fr for reuse; called with the function acquired, so Close
// (which drains f.frames) cannot run concurrently.
func (f *Function) putFrame(fr *frame) {
	fr.freeCopies()
	if reuseFrames {
		select {
		case f.frames <- fr:
			return
		default:
		}
	}
	fr.free()
}

// LibTensor is an output the library allocated (a DLManagedTensor from
// gj_function_call_alloc): C memory, contiguous, row-major. Close releases
// it; a finalizer releases it if Close was not called. A LibTensor is not
// safe for concurrent Close and use.
type LibTensor struct {
	m *C.DLManagedTensor
}

func newLibTensor(m *C.DLManagedTensor) *LibTensor {
	t := &LibTensor{m: m}
	runtime.SetFinalizer(t, (*LibTensor).Close)
	return t
}

// DType is the tensor's element type.
func (t *LibTensor) DType() DType {
	d, _ := dtypeFromDL(t.m.dl_tensor.dtype)
	return d
}

// Shape is a copy of the tensor's sizes.
func (t *LibTensor) Shape() []int64 {
	dl := &t.m.dl_tensor
	shape := make([]int64, int(dl.ndim))
	if dl.ndim > 0 {
		for i, s := range unsafe.Slice(dl.shape, int(dl.ndim)) {
			shape[i] = int64(s)
		}
	}
	return shape
}

// Device is where the tensor's memory is: a call on CUDA tensors returns
// CUDA tensors (the device's caching allocator's memory, ready when the
// call's stream reaches them).
func (t *LibTensor) Device() Device {
	d := t.m.dl_tensor.device
	return Device{Type: int32(d.device_type), ID: int32(d.device_id)}
}

// DevicePtr is the first element's address (a CUdeviceptr for a CUDA
// tensor), valid until Close.
func (t *LibTensor) DevicePtr() uintptr {
	dl := &t.m.dl_tensor
	return uintptr(dl.data) + uintptr(dl.byte_offset)
}

// View is the tensor over the library's memory, without copying: valid only
// until Close. It may be passed as an input to another call. A CUDA tensor's
// view has nil Data and its DevicePtr.
func (t *LibTensor) View() Tensor {
	if t.m == nil {
		panic("guardjit: LibTensor used after Close")
	}
	d := t.DType()
	shape := t.Shape()
	if dev := t.Device(); dev.Type == C.kDLCUDA {
		return DeviceTensor(t.DevicePtr(), dev, d, shape...)
	}
	n, _ := NumElements(shape)
	dl := &t.m.dl_tensor
	var data []byte
	if nb := int(n) * d.Size(); nb > 0 {
		data = unsafe.Slice((*byte)(unsafe.Add(dl.data, uintptr(dl.byte_offset))), nb)
	} else {
		data = []byte{}
	}
	return Tensor{DType: d, Shape: shape, Data: data}
}

// Copy is the tensor copied into Go memory. It panics on a CUDA tensor
// (copy that with a CUDA library from DevicePtr).
func (t *LibTensor) Copy() Tensor {
	v := t.View()
	if !v.onHost() {
		panic("guardjit: LibTensor.Copy of a " + v.Device.String() + " tensor")
	}
	c := NewTensor(v.DType, v.Shape...)
	copy(c.Data, v.Data)
	return c
}

// Close releases the tensor. Closing twice is a no-op.
func (t *LibTensor) Close() error {
	if t.m != nil {
		runtime.SetFinalizer(t, nil)
		C.gj_tensor_release(t.m)
		t.m = nil
	}
	return nil
}
