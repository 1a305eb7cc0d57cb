package guardjit_test

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"strings"
	"sync"
	"testing"

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
	// The binding uses the API up to 0.12 (graph input/output metadata;
	// 0.11: the compile cache's options, counters and directory
	// functions); the header it is built against may
	// be newer than the library it loads (options structs are read up to
	// their struct_size).
	major, minor := gj.APIVersion()
	hmaj, hmin := gj.HeaderAPIVersion()
	if major != hmaj || minor < 12 {
		t.Fatalf("library API %d.%d, header %d.%d: need 0.12 or later", major, minor, hmaj, hmin)
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
