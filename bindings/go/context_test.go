package guardjit_test

import (
	"context"
	"errors"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"

	gj "guardjit.dev/guardjit"
)

// Handles are freed: library outputs return to the allocator when closed
// (or finalized), and closed functions release their compiled code.
func TestMemoryReleased(t *testing.T) {
	c := newContext(t, gj.WithMaxCachedKernels(0))
	base, err := c.MemoryStats()
	if err != nil {
		t.Fatal(err)
	}
	x := gj.TensorOf(randFloats(rand.New(rand.NewSource(5)), 64*8), 64, 8)
	for round := 0; round < 3; round++ {
		f := loadFunction(t, c, "mlp.pbtxt")
		for i := 0; i < 300; i++ {
			lib, err := f.CallAlloc(context.Background(), []gj.Tensor{x})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				ms, _ := c.MemoryStats()
				if ms.BytesInUse < 64*4*4 {
					t.Fatalf("a live output is not counted: %+v", ms)
				}
			}
			lib[0].Close()
			if _, err := f.Call(context.Background(), []gj.Tensor{x}); err != nil {
				t.Fatal(err)
			}
		}
		ms, _ := c.MemoryStats()
		if ms.BytesInUse != base.BytesInUse {
			t.Fatalf("round %d: %d bytes in use after closing every output (base %d)", round, ms.BytesInUse, base.BytesInUse)
		}
		// Its code or its packed weights (a linear layer with a relu
		// compiles nothing: the library runs its epilogue).
		if ms.CompiledModules == 0 && ms.PackedWeightBytes == 0 {
			t.Fatalf("nothing compiled or packed while a function is live: %+v", ms)
		}
		f.Close()
		ms, _ = c.MemoryStats()
		if ms.CompiledModules != 0 {
			t.Fatalf("round %d: %d compiled modules after closing the function", round, ms.CompiledModules)
		}
	}

	// Outputs never closed are released by their finalizers.
	f := loadFunction(t, c, "mlp.pbtxt")
	for i := 0; i < 50; i++ {
		if _, err := f.CallAlloc(context.Background(), []gj.Tensor{x}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		ms, _ := c.MemoryStats()
		if ms.BytesInUse == base.BytesInUse {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still in use after finalizers", ms.BytesInUse)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.ReleaseCachedMemory(); err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.MemoryStats(); ms.BytesCached != 0 {
		t.Fatalf("cached bytes after release: %+v", ms)
	}
}

// DeviceMemoryStats: the host's are MemoryStats; a CUDA device's are its
// allocator's where a driver and device exist, else CodeUnavailable naming
// the device; a negative ordinal is CodeInvalidArgument.
func TestDeviceMemoryStats(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "mlp.pbtxt")
	x := gj.TensorOf(randFloats(rand.New(rand.NewSource(9)), 16*8), 16, 8)
	lib, err := f.CallAlloc(context.Background(), []gj.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	host, err := c.DeviceMemoryStats(gj.CPU())
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.MemoryStats(); ms != host || host.BytesInUse < 16*4*4 {
		t.Fatalf("host device stats %+v, context stats %+v", host, ms)
	}
	lib[0].Close()
	if err := c.ReleaseCachedDeviceMemory(gj.CPU()); err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.DeviceMemoryStats(gj.CPU()); ms.BytesCached != 0 {
		t.Fatalf("cached host bytes after release: %+v", ms)
	}
	if ms, err := c.DeviceMemoryStats(gj.CUDA(0)); err != nil {
		var e *gj.Error
		if !errors.As(err, &e) || e.Code() != gj.CodeUnavailable || !strings.Contains(e.Message(), "CUDA device 0") {
			t.Fatalf("CUDA device 0: %v", err)
		}
	} else if ms.CompiledModules != 0 {
		t.Fatalf("CUDA device 0: %+v", ms)
	}
	_, err = c.DeviceMemoryStats(gj.CUDA(-1))
	var e *gj.Error
	if !errors.As(err, &e) || e.Code() != gj.CodeInvalidArgument || !strings.Contains(e.Message(), "device id -1 is negative") {
		t.Fatalf("CUDA device -1: %v", err)
	}
}

// CUDA tensors cross as DeviceTensor (memory Go does not own) and reach the
// library: without a usable driver or device a call is CodeUnavailable
// naming the input and writes nothing; Call (which copies outputs into Go
// memory) refuses them; the binding's own checks come first.
func TestDeviceTensorsReachTheLibrary(t *testing.T) {
	c := newContext(t)
	if _, err := c.DeviceMemoryStats(gj.CUDA(0)); err == nil {
		t.Skip("a CUDA device is present: the no-driver path is not what runs here")
	}
	f := loadFunction(t, c, "seed_mul.pbtxt")
	x := gj.NewTensor(gj.Float32, 4, 8)
	out := gj.NewTensor(gj.Float32, 4, 8)
	for i := range out.Data {
		out.Data[i] = 7
	}
	// Host addresses standing in for device memory: the library refuses the
	// call before touching them.
	xp := uintptr(unsafe.Pointer(&x.Data[0]))
	op := uintptr(unsafe.Pointer(&out.Data[0]))
	dx := gj.DeviceTensor(xp, gj.CUDA(0), gj.Float32, 4, 8)
	dout := gj.DeviceTensor(op, gj.CUDA(0), gj.Float32, 4, 8)
	code := func(err error) gj.Code {
		var e *gj.Error
		if !errors.As(err, &e) {
			t.Fatalf("not a guardjit error: %v", err)
		}
		return e.Code()
	}
	err := f.CallInto(context.Background(), []gj.Tensor{dx, dx}, []gj.Tensor{dout})
	if code(err) != gj.CodeUnavailable || !strings.Contains(err.Error(), "'x'") && !strings.Contains(err.Error(), "input 0") {
		t.Fatalf("CallInto on CUDA tensors: %v", err)
	}
	runtime.KeepAlive(x)
	for _, b := range out.Data {
		if b != 7 {
			t.Fatal("an output was written")
		}
	}
	if _, err := f.CallAlloc(context.Background(), []gj.Tensor{dx, dx}); code(err) != gj.CodeUnavailable {
		t.Fatalf("CallAlloc on CUDA tensors: %v", err)
	}
	if _, err := f.Call(context.Background(), []gj.Tensor{dx, dx}); code(err) != gj.CodeInvalidArgument || !strings.Contains(err.Error(), "use CallAlloc or CallInto") {
		t.Fatalf("Call on CUDA tensors: %v", err)
	}
	bad := []struct {
		t    gj.Tensor
		want string
	}{
		{gj.DeviceTensor(xp+1, gj.CUDA(0), gj.Float32, 4, 8), "not aligned"},
		{gj.DeviceTensor(0, gj.CUDA(0), gj.Float32, 4, 8), "has no DevicePtr"},
		{gj.DeviceTensor(xp, gj.CUDA(-1), gj.Float32, 4, 8), "ordinal -1"},
		{gj.DeviceTensor(xp, gj.Device{Type: 9}, gj.Float32, 4, 8), "unknown device type 9"},
		{gj.Tensor{DType: gj.Float32, Shape: []int64{4, 8}, Data: x.Data, Device: gj.CUDA(0), DevicePtr: xp}, "both Data and DevicePtr"},
	}
	for _, b := range bad {
		err := f.CallInto(context.Background(), []gj.Tensor{b.t, dx}, []gj.Tensor{dout})
		if code(err) != gj.CodeInvalidArgument || !strings.Contains(err.Error(), b.want) {
			t.Fatalf("want %q, got %v", b.want, err)
		}
	}
	// C host memory through DevicePtr on CPU() is an ordinary input.
	lib, err := f.CallAlloc(context.Background(), []gj.Tensor{gj.TensorOf([]float32{1, 2}, 2), gj.TensorOf([]float32{3, 4}, 2)})
	if err != nil {
		t.Fatal(err)
	}
	defer lib[0].Close()
	host := gj.DeviceTensor(lib[0].DevicePtr(), gj.CPU(), gj.Float32, 2)
	res, err := f.Call(context.Background(), []gj.Tensor{host, host})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := gj.Values[float32](res[0]); v[0] != 9 || v[1] != 64 {
		t.Fatalf("(x*y)^2 through DevicePtr: %v", v)
	}
	// Beside Go memory: a Go slice after a DevicePtr tensor is bound without
	// clearing the DevicePtr (in both orders, and into a Go output).
	half := gj.TensorOf([]float32{2, 0.5}, 2)
	for _, in := range [][]gj.Tensor{{host, half}, {half, host}} {
		out := gj.TensorOf([]float32{0, 0}, 2)
		if err := f.CallInto(context.Background(), in, []gj.Tensor{out}); err != nil {
			t.Fatalf("DevicePtr beside Go memory: %v", err)
		}
		if v, _ := gj.Values[float32](out); v[0] != 6 || v[1] != 4 {
			t.Fatalf("x*y of a DevicePtr tensor and a Go slice: %v", v)
		}
	}
	if lib[0].Device() != gj.CPU() {
		t.Fatalf("a CPU call's output is on %v", lib[0].Device())
	}
}
