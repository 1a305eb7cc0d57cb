package guardjit_test

import (
	"context"
	"testing"
	"unsafe"

	gj "guardjit.dev/guardjit"
)

// The stream and synchronize options land in the gj_call_options a call
// passes, inside its struct_size (so the library reads them), and, as
// guardjit.h says of both, CPU calls ignore them: a pointer that is no
// CUstream (C memory the library allocated; a stream must not be Go memory)
// leaves a CPU call's results as they were. Were the library to use it as a
// stream, the call would fail or crash.
func TestStreamOptions(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "seed_mul.pbtxt")
	ctx := context.Background()
	x := gj.TensorOf([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 10)
	b := gj.TensorOf([]float32{2, 2, 2, 2, 2, -1, -1, -1, -1, -1}, 10)
	lib, err := f.CallAlloc(ctx, []gj.Tensor{x, b})
	if err != nil {
		t.Fatal(err)
	}
	defer lib[0].Close()
	notAStream := unsafe.Pointer(&lib[0].View().Data[0])

	if s, sync, covered := gj.CallOptionsOf(); s != nil || sync != 0 || !covered {
		t.Fatalf("defaults: stream %p, synchronize %d, covered %v", s, sync, covered)
	}
	s, sync, covered := gj.CallOptionsOf(gj.WithStream(notAStream), gj.WithSynchronize(true))
	if s != notAStream || sync != 1 || !covered {
		t.Fatalf("set: stream %p (want %p), synchronize %d, covered %v", s, notAStream, sync, covered)
	}

	want := []float64{2, 4, 6, 8, 10, -6, -7, -8, -9, -10}
	outs, err := f.Call(ctx, []gj.Tensor{x, b}, gj.WithStream(notAStream), gj.WithSynchronize(true))
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "Call", values[float32](t, outs[0]), want, 0)
	out := gj.NewTensor(gj.Float32, 10)
	if err := f.CallInto(ctx, []gj.Tensor{x, b}, []gj.Tensor{out}, gj.WithStream(notAStream)); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "CallInto", values[float32](t, out), want, 0)
}
