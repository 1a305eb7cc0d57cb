package guardjit_test

import (
	"context"
	"math"
	"math/rand"
	"strings"
	"testing"
	"time"

	gj "guardjit.dev/guardjit"
)

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
