package guardjit_test

import (
	"context"
	"strings"
	"testing"

	gj "guardjit.dev/guardjit"
)

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
