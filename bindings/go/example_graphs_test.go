package guardjit_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	gj "guardjit.dev/guardjit"
)

// examplesDir is the repository's example graphs.
var examplesDir = filepath.Join("..", "..", "examples")

func examplePath(name string) string { return filepath.Join(examplesDir, name) }

// constantsOf reads the float32 constants of a .pbtxt example (the
// `constants { name: ... data: "..." }` blocks), to compute expected values
// in the test independently of the library.
func constantsOf(t *testing.T, file string) map[string][]float32 {
	t.Helper()
	text, err := os.ReadFile(examplePath(file))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?s)constants \{\s*name: "([^"]+)".*?data: "((?:[^"\\]|\\.)*)"`)
	out := map[string][]float32{}
	for _, m := range re.FindAllSubmatch(text, -1) {
		raw := unescapeProtoText(t, string(m[2]))
		vals := make([]float32, len(raw)/4)
		for i := range vals {
			vals[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		out[string(m[1])] = vals
	}
	return out
}

// unescapeProtoText undoes protobuf text format's bytes escaping.
func unescapeProtoText(t *testing.T, s string) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b = append(b, s[i])
			continue
		}
		i++
		switch c := s[i]; {
		case c >= '0' && c <= '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 8)
			b = append(b, byte(v))
			i = j - 1
		case c == 'x':
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
		case c == 'n':
			b = append(b, '\n')
		case c == 'r':
			b = append(b, '\r')
		case c == 't':
			b = append(b, '\t')
		case c == '\\', c == '"', c == '\'':
			b = append(b, c)
		default:
			t.Fatalf("unknown escape \\%c", c)
		}
	}
	return b
}

// mlpReference computes examples/mlp.pbtxt in float64:
// relu(x W1^T + b1) W2^T + b2 for x of shape [batch, 8].
func mlpReference(w map[string][]float32, x []float32, batch int) []float64 {
	w1, b1, w2, b2 := w["fc1_weight"], w["fc1_bias"], w["fc2_weight"], w["fc2_bias"]
	out := make([]float64, batch*4)
	for r := 0; r < batch; r++ {
		var h [16]float64
		for j := 0; j < 16; j++ {
			s := float64(b1[j])
			for k := 0; k < 8; k++ {
				s += float64(x[r*8+k]) * float64(w1[j*8+k])
			}
			h[j] = math.Max(s, 0)
		}
		for j := 0; j < 4; j++ {
			s := float64(b2[j])
			for k := 0; k < 16; k++ {
				s += h[k] * float64(w2[j*16+k])
			}
			out[r*4+j] = s
		}
	}
	return out
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
