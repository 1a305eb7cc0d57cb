package guardjit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sync"
	"testing"
	"time"

	gj "guardjit.dev/guardjit"
)

// More tensors than the direct pointer slots: the rest go through C buffers.
func TestManyInputs(t *testing.T) {
	c := newContext(t)
	b, err := c.NewBuilder("sum11")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	prev := "x0"
	for i := 0; i < 11; i++ {
		if err := b.AddInput(fmt.Sprintf("x%d", i)); err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			name := fmt.Sprintf("s%d", i)
			if err := b.AddNode(name, "aten.add.Tensor", gj.ArgRef(prev), gj.ArgRef(fmt.Sprintf("x%d", i))); err != nil {
				t.Fatal(err)
			}
			prev = name
		}
	}
	if err := b.SetOutputs(prev, "s5"); err != nil {
		t.Fatal(err)
	}
	g, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	f, err := c.NewFunction(g)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inputs := make([]gj.Tensor, 11)
	for i := range inputs {
		inputs[i] = gj.TensorOf([]float32{float32(i), float32(10 * i)}, 2)
	}
	outs := []gj.Tensor{gj.NewTensor(gj.Float32, 2), gj.NewTensor(gj.Float32, 2)}
	if err := f.CallInto(context.Background(), inputs, outs); err != nil {
		t.Fatal(err)
	}
	assertClose(t, "sum", values[float32](t, outs[0]), []float64{55, 550}, 0)
	assertClose(t, "s5", values[float32](t, outs[1]), []float64{15, 150}, 0)
}

// A call stopped from another goroutine through its context, and one past
// its timeout; neither writes its output.
func TestCancelAndTimeout(t *testing.T) {
	c := newContext(t, gj.WithThreads(1))
	f := loadFunction(t, c, "mlp.pbtxt")
	const batch = 400000
	x := gj.TensorOf(randFloats(rand.New(rand.NewSource(4)), batch*8), batch, 8)
	out := gj.NewTensor(gj.Float32, batch, 4)
	for i := range out.Data {
		out.Data[i] = 0xAB
	}
	untouched := func() {
		for _, b := range out.Data {
			if b != 0xAB {
				t.Fatal("a stopped call wrote its output")
			}
		}
	}
	if err := f.Precompile(context.Background(), []gj.Spec{x.Spec()}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := f.CallInto(context.Background(), []gj.Tensor{x}, []gj.Tensor{out}); err != nil {
		t.Fatal(err)
	}
	full := time.Since(start)
	for i := range out.Data {
		out.Data[i] = 0xAB
	}

	err := f.CallInto(context.Background(), []gj.Tensor{x}, []gj.Tensor{out}, gj.WithTimeout(time.Microsecond))
	expectCode(t, err, gj.CodeDeadlineExceeded)
	untouched()

	cctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(full/10, cancel)
	err = f.CallInto(cctx, []gj.Tensor{x}, []gj.Tensor{out})
	if err == nil {
		t.Skipf("call (%v uncancelled) finished before the cancel", full)
	}
	expectCode(t, err, gj.CodeCancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatal("not context.Canceled")
	}
	untouched()
}

// Eight goroutines call one function on mixed shapes; every result checks.
func TestConcurrentCalls(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "mlp.pbtxt")
	w := constantsOf(t, "mlp.pbtxt")
	const goroutines, calls = 8, 150
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < calls; i++ {
				batch := 1 + rng.Intn(6)
				xs := randFloats(rng, batch*8)
				out := make([]float32, batch*4)
				var err error
				if i%2 == 0 {
					err = f.CallInto(context.Background(), []gj.Tensor{gj.TensorOf(xs, int64(batch), 8)}, []gj.Tensor{gj.TensorOf(out, int64(batch), 4)})
				} else {
					var outs []gj.Tensor
					outs, err = f.Call(context.Background(), []gj.Tensor{gj.TensorOf(xs, int64(batch), 8)})
					if err == nil {
						copy(out, values[float32](t, outs[0]))
					}
				}
				if err != nil {
					errs <- err
					return
				}
				want := mlpReference(w, xs, batch)
				for k := range out {
					if math.Abs(float64(out[k])-want[k]) > 1e-4 {
						errs <- fmt.Errorf("batch %d: out[%d] = %g, want %g", batch, k, out[k], want[k])
						return
					}
				}
			}
		}(int64(g))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	st, err := f.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Calls != goroutines*calls || st.Compiles > 6 {
		t.Fatalf("stats %+v", st)
	}
}

// A library output passed as the next call's input, without copying.
func TestChainLibTensor(t *testing.T) {
	c := newContext(t)
	g := buildAddRelu(t, c)
	defer g.Close()
	f, err := c.NewFunction(g)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lib, err := f.CallAlloc(context.Background(), []gj.Tensor{gj.TensorOf([]float32{0, 0, 0}, 3)})
	if err != nil {
		t.Fatal(err)
	}
	defer lib[0].Close()
	if lib[0].DType() != gj.Float32 || fmt.Sprint(lib[0].Shape()) != "[3]" {
		t.Fatalf("%v %v", lib[0].DType(), lib[0].Shape())
	}
	outs, err := f.Call(context.Background(), []gj.Tensor{lib[0].View()})
	if err != nil {
		t.Fatal(err)
	}
	// relu(0 + 2*bias) = [2, 0, 1]; relu([2,0,1] + 2*bias) = [4, 0, 2].
	assertClose(t, "chained", values[float32](t, outs[0]), []float64{4, 0, 2}, 0)
}

func TestPrecompileMakesFirstCallAHit(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "seed_cat_add.pbtxt")
	specs := []gj.Spec{{gj.Float32, []int64{2, 3}}, {gj.Float32, []int64{4, 3}}}
	if err := f.Precompile(context.Background(), specs); err != nil {
		t.Fatal(err)
	}
	if err := f.Precompile(context.Background(), specs); err != nil { // a no-op
		t.Fatal(err)
	}
	_, err := f.Call(context.Background(), []gj.Tensor{gj.NewTensor(gj.Float32, 2, 3), gj.NewTensor(gj.Float32, 4, 3)})
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stats()
	if st.Compiles != 1 || st.Calls != 1 || st.Hits != 1 {
		t.Fatalf("stats %+v", st)
	}
}
