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
