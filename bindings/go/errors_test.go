package guardjit_test

import (
	"context"
	"errors"
	"testing"
	"time"

	gj "guardjit.dev/guardjit"
)

// Every error path surfaces the library's code and message.
func TestErrors(t *testing.T) {
	c := newContext(t)
	ctx := context.Background()

	_, err := c.GraphFromFile(examplePath("no_such_graph.pbtxt"))
	expectCode(t, err, gj.CodeNotFound, "no_such_graph.pbtxt")
	_, err = c.GraphFromText(`name: "g" nodes { name: "n" target: "aten.relu.default" args { ref: "nope" } }`)
	expectCode(t, err, gj.CodeInvalidArgument, "nope")
	_, err = c.GraphFromText("this is not a graph {")
	expectCode(t, err, gj.CodeInvalidArgument)
	_, err = c.GraphFromBytes([]byte{0xff, 0xff, 0xff})
	expectCode(t, err, gj.CodeInvalidArgument)
	_, err = c.GraphFromText(`name: "g" placeholders { name: "x" } nodes { name: "n" target: "aten.frobnicate.default" args { ref: "x" } } outputs { ref: "n" }`)
	expectCode(t, err, gj.CodeUnimplemented, "aten.frobnicate.default")

	f := loadFunction(t, c, "seed_mul.pbtxt")
	x := gj.TensorOf([]float32{1, 2, 3}, 3)
	// Wrong input count, wrong shapes, bad dtype, short data, negative size,
	// misaligned data, wrong output shape.
	_, err = f.Call(ctx, []gj.Tensor{x})
	expectCode(t, err, gj.CodeInvalidArgument)
	_, err = f.Call(ctx, []gj.Tensor{x, gj.TensorOf([]float32{1, 2}, 2)})
	expectCode(t, err, gj.CodeInvalidArgument, "mul")
	_, err = f.Call(ctx, []gj.Tensor{x, {DType: gj.DType(99), Shape: []int64{3}, Data: make([]byte, 12)}})
	expectCode(t, err, gj.CodeInvalidArgument, "input 1 ('b')", "unknown dtype 99")
	_, err = f.Call(ctx, []gj.Tensor{x, {DType: gj.Float32, Shape: []int64{3}, Data: make([]byte, 8)}})
	expectCode(t, err, gj.CodeInvalidArgument, "input 1 ('b')", "needs 12 bytes")
	_, err = f.Call(ctx, []gj.Tensor{x, {DType: gj.Float32, Shape: []int64{-3}}})
	expectCode(t, err, gj.CodeInvalidArgument, "negative")
	_, err = f.Call(ctx, []gj.Tensor{x, {DType: gj.Float32, Shape: []int64{1 << 40, 1 << 40}}})
	expectCode(t, err, gj.CodeOutOfRange)
	if gj.DirectSlots() > 1 { // copied through C memory, data is aligned anyway
		buf := gj.NewTensor(gj.Float32, 4).Data // 8-byte aligned, so buf[1:] is not
		_, err = f.Call(ctx, []gj.Tensor{x, {DType: gj.Float32, Shape: []int64{3}, Data: buf[1:13]}})
		expectCode(t, err, gj.CodeInvalidArgument, "input 1", "aligned")
	}
	err = f.CallInto(ctx, []gj.Tensor{x, x}, []gj.Tensor{gj.NewTensor(gj.Float32, 4)})
	expectCode(t, err, gj.CodeInvalidArgument)
	_, err = f.Call(ctx, []gj.Tensor{x, x}, gj.WithRequiresGrad(true))
	expectCode(t, err, gj.CodeInvalidArgument, "WithRequiresGrad")

	// Past the recompile limit (1, static): precompiling a new shape fails.
	f1 := loadFunction(t, c, "seed_mul.pbtxt", gj.WithRecompileLimit(1), gj.WithDynamic(gj.DynamicStatic))
	if err := f1.Precompile(ctx, []gj.Spec{x.Spec(), x.Spec()}); err != nil {
		t.Fatal(err)
	}
	err = f1.Precompile(ctx, []gj.Spec{{gj.Float32, []int64{5}}, {gj.Float32, []int64{5}}})
	expectCode(t, err, gj.CodeFailedPrecondition, "recompile limit")
	f1.Close()

	// A cancelled or expired context stops the call before it starts.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = f.Call(cctx, []gj.Tensor{x, x})
	expectCode(t, err, gj.CodeCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatal("not context.Canceled")
	}
	dctx, cancel2 := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel2()
	_, err = f.Call(dctx, []gj.Tensor{x, x})
	expectCode(t, err, gj.CodeDeadlineExceeded)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("not context.DeadlineExceeded")
	}

	// Closed handles. The function keeps what it needs of its context
	// (guardjit.h), so closing the context first leaves it working, while
	// the context itself refuses.
	if err := c.Close(); err != nil {
		t.Fatalf("closing a context with a live function: %v", err)
	}
	if _, err := f.Call(ctx, []gj.Tensor{x, x}); err != nil {
		t.Fatalf("a function after its context closed: %v", err)
	}
	_, err = c.MemoryStats()
	expectCode(t, err, gj.CodeFailedPrecondition, "closed")
	f.Close()
	_, err = f.Call(ctx, []gj.Tensor{x, x})
	expectCode(t, err, gj.CodeFailedPrecondition, "closed")
	_, err = f.Stats()
	expectCode(t, err, gj.CodeFailedPrecondition, "closed")
}
