package guardjit_test

import (
	"testing"

	gj "guardjit.dev/guardjit"
)

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

func TestInputsAndOutputsDeclared(t *testing.T) {
	c := newContext(t)
	g, err := c.GraphFromText(`name: "meta"
placeholders { name: "x" meta { dtype: FLOAT32 dims { symbol: "batch" } dims { size: 3 } dims {} } }
placeholders { name: "y" }
outputs { ref: "x" }
output_meta { dtype: INT64 unknown_rank: true }`)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	in, out := g.Inputs(), g.Outputs()
	if len(in) != 2 || len(out) != 1 {
		t.Fatalf("inputs %v outputs %v", in, out)
	}
	if in[0].String() != "float32[batch, 3, ?]" || in[0].Rank != 3 || in[0].Dims[0].Symbol != "batch" ||
		in[0].Dims[1].Size != 3 || in[0].Dims[2].Size != -1 {
		t.Fatalf("input x %+v (%s)", in[0], in[0])
	}
	if in[1].String() != "?[*]" || in[1].DType != gj.UnknownDType || in[1].Rank != -1 {
		t.Fatalf("input y %+v", in[1])
	}
	if out[0].Name != "x" || out[0].String() != "int64[*]" {
		t.Fatalf("output %+v", out[0])
	}
}
