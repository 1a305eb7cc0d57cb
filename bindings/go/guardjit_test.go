package guardjit_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gj "guardjit.dev/guardjit"
)

func newContext(t testing.TB, opts ...gj.ContextOption) *gj.Context {
	t.Helper()
	c, err := gj.NewContext(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Close(); err != nil {
			t.Errorf("context close: %v", err)
		}
	})
	return c
}

func loadFunction(t testing.TB, c *gj.Context, file string, opts ...gj.FunctionOption) *gj.Function {
	t.Helper()
	g, err := c.GraphFromFile(examplePath(file))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	f, err := c.NewFunction(g, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func randFloats(rng *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.Float64()*4 - 2)
	}
	return v
}

func values[T gj.Element](t testing.TB, x gj.Tensor) []T {
	t.Helper()
	v, err := gj.Values[T](x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func assertClose(t testing.TB, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > tol*(1+math.Abs(want[i])) {
			t.Fatalf("%s[%d] = %g, want %g", what, i, got[i], want[i])
		}
	}
}

// expectCode fails unless err is a *gj.Error with the code and a message
// containing every part.
func expectCode(t testing.TB, err error, code gj.Code, parts ...string) *gj.Error {
	t.Helper()
	var e *gj.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a %s *guardjit.Error, got %v", code, err)
	}
	if e.Code() != code || gj.CodeOf(err) != code {
		t.Fatalf("want %s, got %s: %s", code, e.Code(), e.Message())
	}
	if e.Message() == "" || !strings.Contains(e.Error(), code.String()) {
		t.Fatalf("error %q lacks a message or its code", e.Error())
	}
	for _, p := range parts {
		if !strings.Contains(e.Message(), p) {
			t.Fatalf("message %q lacks %q", e.Message(), p)
		}
	}
	return e
}

func TestVersion(t *testing.T) {
	// The binding uses the API up to 0.8 (fullgraph, mode, graph and CUDA
	// graph counters); the header it is built against may be newer than the
	// library it loads (options structs are read up to their struct_size).
	major, minor := gj.APIVersion()
	hmaj, hmin := gj.HeaderAPIVersion()
	if major != hmaj || minor < 8 {
		t.Fatalf("library API %d.%d, header %d.%d: need 0.8 or later", major, minor, hmaj, hmin)
	}
	t.Logf("library API %d.%d, header %d.%d", major, minor, hmaj, hmin)
	if v := gj.Version(); strings.Count(v, ".") != 2 {
		t.Fatalf("version %q", v)
	}
}

func TestDTypes(t *testing.T) {
	for _, d := range []gj.DType{gj.Float32, gj.Float64, gj.Float16, gj.BFloat16, gj.Int8, gj.Uint8, gj.Int16, gj.Int32, gj.Int64, gj.Bool} {
		p, err := gj.ParseDType(d.String())
		if err != nil || p != d || d.Size() == 0 {
			t.Fatalf("%v: parse %v %v size %d", d, p, err, d.Size())
		}
	}
	_, err := gj.ParseDType("complex64")
	expectCode(t, err, gj.CodeInvalidArgument, "complex64")
	x := gj.TensorOf([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	if x.DType != gj.Int32 || x.NumElements() != 6 || len(x.Data) != 24 {
		t.Fatalf("TensorOf: %v", x)
	}
	_, err = gj.Values[float32](x)
	expectCode(t, err, gj.CodeInvalidArgument, "int32")
	if v := values[int32](t, x); v[5] != 6 {
		t.Fatal(v)
	}
	if _, ok := gj.NumElements([]int64{1 << 62, 4}); ok {
		t.Fatal("overflow not detected")
	}
}

// The MLP example against a float64 reference, at several batch sizes, into
// Go outputs (CallInto), returned Go tensors (Call) and library tensors
// (CallAlloc).
func TestMLPExample(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "mlp.pbtxt", gj.WithName("mlp"))
	w := constantsOf(t, "mlp.pbtxt")
	if got := fmt.Sprint(f.InputNames(), f.OutputNames()); got != "[x] [addmm_1]" {
		t.Fatalf("names %s", got)
	}
	rng := rand.New(rand.NewSource(1))
	ctx := context.Background()
	for _, batch := range []int{4, 1, 3, 7, 3, 4} {
		xs := randFloats(rng, batch*8)
		x := gj.TensorOf(xs, int64(batch), 8)
		want := mlpReference(w, xs, batch)

		out := make([]float32, batch*4)
		if err := f.CallInto(ctx, []gj.Tensor{x}, []gj.Tensor{gj.TensorOf(out, int64(batch), 4)}); err != nil {
			t.Fatal(err)
		}
		assertClose(t, fmt.Sprintf("CallInto batch %d", batch), out, want, 1e-5)

		outs, err := f.Call(ctx, []gj.Tensor{x})
		if err != nil {
			t.Fatal(err)
		}
		if len(outs) != 1 || outs[0].DType != gj.Float32 || fmt.Sprint(outs[0].Shape) != fmt.Sprintf("[%d 4]", batch) {
			t.Fatalf("Call outputs %v", outs)
		}
		assertClose(t, "Call", values[float32](t, outs[0]), want, 1e-5)

		lib, err := f.CallAlloc(ctx, []gj.Tensor{x})
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "CallAlloc", values[float32](t, lib[0].View()), want, 1e-5)
		lib[0].Close()
		lib[0].Close() // idempotent
	}
	st, err := f.Stats()
	if err != nil {
		t.Fatal(err)
	}
	// Batches 4, 1, 3, 7: a static entry for 4, 1 stays specialized, then a
	// dynamic one covers 3 and 7 (automatic dynamic). Never a compile per call.
	if st.Calls != 18 || st.Compiles < 2 || st.Compiles > 4 || st.Hits+st.Misses != st.Calls || st.CacheEntries != st.Compiles {
		t.Fatalf("stats %+v", st)
	}
	if st.CompileTime <= 0 {
		t.Fatalf("compile time %v", st.CompileTime)
	}
}

// seed_abs_div: two inputs, two outputs (float and bool).
func TestAbsDivExample(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "seed_abs_div.pbtxt")
	rng := rand.New(rand.NewSource(2))
	for _, n := range []int{10, 5, 10, 1} {
		a, b := randFloats(rng, n), randFloats(rng, n)
		outs, err := f.Call(context.Background(), []gj.Tensor{gj.TensorOf(a, int64(n)), gj.TensorOf(b, int64(n))})
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n)
		sum := 0.0
		for i := range a {
			want[i] = float64(a[i]) / (math.Abs(float64(a[i])) + 1)
			sum += float64(b[i])
		}
		assertClose(t, "div", values[float32](t, outs[0]), want, 1e-6)
		if outs[1].DType != gj.Bool || len(outs[1].Shape) != 0 {
			t.Fatalf("lt: %v", outs[1])
		}
		if got := values[bool](t, outs[1])[0]; got != (sum < 0) {
			t.Fatalf("lt = %v, sum %g", got, sum)
		}
	}
}

// seed_cat_branch: the branch taken depends on the sizes (a guard).
func TestShapeBranchExample(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "seed_cat_branch.pbtxt")
	for _, n := range []int{3, 1, 2, 1} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i), float32(10+i)
		}
		outs, err := f.Call(context.Background(), []gj.Tensor{gj.TensorOf(x, int64(n)), gj.TensorOf(y, int64(n))})
		if err != nil {
			t.Fatal(err)
		}
		cat := append(append([]float32(nil), x...), y...)
		want := make([]float64, len(cat))
		for i, v := range cat {
			if len(cat) > 2 {
				want[i] = float64(v) * 2
			} else {
				want[i] = float64(v) + 2
			}
		}
		assertClose(t, fmt.Sprintf("cond n=%d", n), values[float32](t, outs[0]), want, 0)
	}
	reasons, err := f.RecompileReasons()
	if err != nil {
		t.Fatal(err)
	}
	if len(reasons) == 0 {
		t.Fatal("no recompile reasons after a size change")
	}
	guards, err := f.DumpGuards()
	if err != nil || !strings.Contains(guards, "TREE_GUARD_MANAGER") {
		t.Fatalf("guards %q, %v", guards, err)
	}
	explain, err := f.Explain()
	if err != nil || !strings.Contains(explain, "Recompile Reasons:") {
		t.Fatalf("explain %q, %v", explain, err)
	}
}

// The attention example: loads, runs at two batch sizes, output shaped like x.
func TestAttentionExampleRuns(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "attention.pbtxt")
	x := gj.TensorOf(randFloats(rand.New(rand.NewSource(3)), 2*4*8), 2, 4, 8)
	outs, err := f.Call(context.Background(), []gj.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(outs[0].Shape) != "[2 4 8]" {
		t.Fatalf("shape %v", outs[0].Shape)
	}
	for _, v := range values[float32](t, outs[0]) {
		if math.IsNaN(float64(v)) {
			t.Fatal("NaN")
		}
	}
}

// relu(a + alpha*b) built with the builder, including a constant and a
// keyword argument.
func buildAddRelu(t testing.TB, c *gj.Context) *gj.Graph {
	t.Helper()
	b, err := c.NewBuilder("add_relu")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(b.AddInput("a"))
	must(b.AddConstant("bias", gj.TensorOf([]float32{1, -1, 0.5}, 3)))
	must(b.AddNode("add", "aten.add.Tensor", gj.ArgRef("a"), gj.ArgRef("bias"), gj.Kwarg("alpha", gj.ArgInt(2))))
	must(b.AddNode("relu", "aten.relu.default", gj.ArgRef("add")))
	must(b.SetOutputs("relu"))
	g, err := b.Finish()
	must(err)
	return g
}

func TestBuilder(t *testing.T) {
	c := newContext(t)
	b, err := c.NewBuilder("bad")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.AddInput("a"); err != nil {
		t.Fatal(err)
	}
	expectCode(t, b.AddNode("x", "aten.no_such_op.default", gj.ArgRef("a")), gj.CodeUnimplemented, "aten.no_such_op.default")
	expectCode(t, b.AddNode("y", "aten.relu.default", gj.ArgRef("missing")), gj.CodeInvalidArgument, "missing")
	expectCode(t, b.AddConstant("c", gj.Tensor{DType: gj.Float32, Shape: []int64{4}, Data: make([]byte, 3)}), gj.CodeInvalidArgument, "needs 16 bytes")
	// A failed add leaves the builder usable.
	if err := b.AddNode("y", "aten.relu.default", gj.ArgRef("a")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	expectCode(t, b.AddInput("z"), gj.CodeFailedPrecondition, "closed")

	g := buildAddRelu(t, c)
	defer g.Close()
	tab, err := g.Tabular()
	if err != nil || !strings.Contains(tab, "aten.relu.default") {
		t.Fatalf("tabular %q %v", tab, err)
	}
	f, err := c.NewFunction(g)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	outs, err := f.Call(context.Background(), []gj.Tensor{gj.TensorOf([]float32{1, 2, 3, -4, 5, -6}, 2, 3)})
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, "relu", values[float32](t, outs[0]), []float64{3, 0, 4, 0, 3, 0}, 0)
}

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

	// Closed handles.
	if err := c.Close(); gj.CodeOf(err) != gj.CodeFailedPrecondition {
		t.Fatalf("closing a context with a live function: %v", err)
	}
	f.Close()
	_, err = f.Call(ctx, []gj.Tensor{x, x})
	expectCode(t, err, gj.CodeFailedPrecondition, "closed")
	_, err = f.Stats()
	expectCode(t, err, gj.CodeFailedPrecondition, "closed")
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
		if ms.CompiledModules == 0 {
			t.Fatalf("no compiled modules while a function is live: %+v", ms)
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

func TestFunctionOptions(t *testing.T) {
	c := newContext(t, gj.WithBackend(gj.BackendEager), gj.WithThreads(1), gj.WithMaxCachedBytes(0))
	f := loadFunction(t, c, "seed_mul.pbtxt", gj.WithName("muller"),
		gj.WithMarkDynamic(gj.DynamicDim{Input: 0, Dim: 0, Min: 2, Max: 64}, gj.DynamicDim{Input: 1, Dim: 0, Min: 2, Max: 64}))
	for _, n := range []int{3, 9, 64, 65} {
		a := gj.NewTensor(gj.Float32, int64(n))
		if _, err := f.Call(context.Background(), []gj.Tensor{a, a}, gj.WithGradMode(false), gj.WithDeterministic(true), gj.WithRequiresGrad(false, false)); err != nil {
			t.Fatal(err)
		}
	}
	st, _ := f.Stats()
	// 3, 9 and 64 share the marked-dynamic entry; 65 is outside [2, 64].
	if st.Compiles != 2 {
		t.Fatalf("stats %+v", st)
	}
	explain, _ := f.Explain()
	if !strings.Contains(explain, "muller") && !strings.Contains(explain, "eager") {
		t.Fatalf("explain: %s", explain)
	}
}

// callGraphBreak calls seed_graph_break (Dynamo's toy example) and checks
// a / (|a| + 1) * (b.sum() < 0 ? -b : b).
func callGraphBreak(t *testing.T, f *gj.Function, a, b []float32) {
	t.Helper()
	n := int64(len(a))
	outs, err := f.Call(context.Background(), []gj.Tensor{gj.TensorOf(a, n), gj.TensorOf(b, n)})
	if err != nil {
		t.Fatal(err)
	}
	sum, sign := 0.0, 1.0
	for _, v := range b {
		sum += float64(v)
	}
	if sum < 0 {
		sign = -1
	}
	want := make([]float64, n)
	for i := range a {
		want[i] = float64(a[i]) / (math.Abs(float64(a[i])) + 1) * sign * float64(b[i])
	}
	assertClose(t, "mul", values[float32](t, outs[0]), want, 1e-6)
}

func TestGraphBreaks(t *testing.T) {
	c := newContext(t)
	rng := rand.New(rand.NewSource(5))
	a := randFloats(rng, 10)
	positive, negative := make([]float32, 10), make([]float32, 10)
	for i := range positive {
		positive[i], negative[i] = 0.5, -0.5
	}
	f := loadFunction(t, c, "seed_graph_break.pbtxt")
	callGraphBreak(t, f, a, positive)
	if st, _ := f.Stats(); st.GraphCount != 2 || st.GraphBreakCount != 1 {
		t.Fatalf("stats %+v", st)
	}
	if explain, _ := f.Explain(); !strings.Contains(explain, "Graph Count: 2") {
		t.Fatalf("explain: %s", explain)
	}
	// The other branch is a third graph, compiled when first reached.
	callGraphBreak(t, f, a, negative)
	if st, _ := f.Stats(); st.GraphCount != 3 {
		t.Fatalf("stats %+v", st)
	}

	full := loadFunction(t, c, "seed_graph_break.pbtxt", gj.WithFullgraph(true))
	_, err := full.Call(context.Background(), []gj.Tensor{gj.TensorOf(a, 10), gj.TensorOf(positive, 10)})
	expectCode(t, err, gj.CodeUnimplemented, "graph break at node 'cond'")
}

func TestModes(t *testing.T) {
	c := newContext(t)
	// CPU calls ignore reduce-overhead.
	f := loadFunction(t, c, "seed_mul.pbtxt", gj.WithMode(gj.ModeReduceOverhead), gj.WithMaxGraphsPerEntry(2))
	x := gj.TensorOf([]float32{1, 2, 3}, 3)
	y := gj.TensorOf([]float32{4, 5, 6}, 3)
	for i := 0; i < 3; i++ {
		if _, err := f.Call(context.Background(), []gj.Tensor{x, y}); err != nil {
			t.Fatal(err)
		}
	}
	if st, _ := f.Stats(); st.Calls != 3 || st.Hits != 2 || st.GraphCount != 1 || st.CUDAGraphsRecorded != 0 || st.CUDAGraphReplays != 0 {
		t.Fatalf("stats %+v", st)
	}
	g, err := c.GraphFromFile(examplePath("seed_mul.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	_, err = c.NewFunction(g, gj.WithMode(gj.Mode(7)))
	expectCode(t, err, gj.CodeInvalidArgument)
	_, err = c.NewFunction(g, gj.WithMaxGraphsPerEntry(-1))
	expectCode(t, err, gj.CodeInvalidArgument)
	_, err = c.NewFunction(g, gj.WithCompile(gj.CompileMode(7)))
	expectCode(t, err, gj.CodeInvalidArgument)
}

// An async compile answers every call (eagerly at first) and then serves
// the compiled entry.
func TestAsyncCompile(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "seed_mul.pbtxt", gj.WithCompile(gj.CompileAsync))
	x := gj.TensorOf([]float32{1, 2, 3}, 3)
	y := gj.TensorOf([]float32{4, 5, 6}, 3)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		outs, err := f.Call(context.Background(), []gj.Tensor{x, y})
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, "mul", values[float32](t, outs[0]), []float64{4, 10, 18}, 0)
		st, _ := f.Stats()
		if st.Hits > 0 {
			if st.Compiles != 1 {
				t.Fatalf("stats %+v", st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("never hit: %+v", st)
		}
	}
}

func TestLogHandler(t *testing.T) {
	var mu sync.Mutex
	var got []string
	gj.SetLogTopics("recompiles")
	gj.SetLogHandler(func(topic, msg string) {
		mu.Lock()
		got = append(got, topic+": "+msg)
		mu.Unlock()
	})
	defer func() {
		gj.SetLogHandler(nil)
		gj.SetLogTopics("")
	}()
	c := newContext(t)
	f := loadFunction(t, c, "seed_mul.pbtxt")
	for _, n := range []int64{3, 4} {
		a := gj.NewTensor(gj.Float32, n)
		if _, err := f.Call(context.Background(), []gj.Tensor{a, a}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || !strings.HasPrefix(got[0], "recompiles: ") {
		t.Fatalf("log lines %q", got)
	}
}

func TestCompileReport(t *testing.T) {
	c := newContext(t)
	g, err := c.GraphFromFile(examplePath("seed_mul_neg.pbtxt"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	specs := []gj.Spec{{gj.Float32, []int64{10}}, {gj.Float32, []int64{10}}}
	text, chk, err := g.CompileReport(specs, gj.CompileReportOptions{Emulate: true, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if text == "" || !chk.Checked || !chk.WithinTolerance || chk.RunCode != gj.CodeOK {
		t.Fatalf("report %+v\n%s", chk, text)
	}
	_, _, err = g.CompileReport(specs, gj.CompileReportOptions{Target: "tpu:v9"})
	expectCode(t, err, gj.CodeInvalidArgument, "tpu:v9")
}
