// Command hello is the Go version of examples/hello_world.c: it builds
// relu(a + b) with the graph builder, calls it, then loads an example graph
// from a file and calls it at two batch sizes, printing the cache's stats.
//
//	go run ./examples/hello -graph ../../examples/mlp.pbtxt
package main

import (
	"context"
	"flag"
	"fmt"
	"log"

	gj "guardjit.dev/guardjit"
)

func main() {
	graphPath := flag.String("graph", "../../examples/mlp.pbtxt", "a graph taking one float32[batch, 8] input")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("hello: ")
	fmt.Printf("guardjit %s\n", gj.Version())

	c, err := gj.NewContext()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()

	// relu(a + b), b broadcast over the rows of a.
	b, err := c.NewBuilder("hello")
	if err != nil {
		log.Fatal(err)
	}
	for _, step := range []error{
		b.AddInput("a"),
		b.AddInput("b"),
		b.AddNode("add", "aten.add.Tensor", gj.ArgRef("a"), gj.ArgRef("b")),
		b.AddNode("relu", "aten.relu.default", gj.ArgRef("add")),
		b.SetOutputs("relu"),
	} {
		if step != nil {
			log.Fatal(step)
		}
	}
	g, err := b.Finish()
	b.Close()
	if err != nil {
		log.Fatal(err)
	}
	f, err := c.NewFunction(g)
	g.Close()
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	a := gj.TensorOf([]float32{1, -2, 3, -4, 5, -6}, 2, 3)
	bb := gj.TensorOf([]float32{0.5, 0.5, 10}, 3)
	outs, err := f.Call(ctx, []gj.Tensor{a, bb})
	if err != nil {
		log.Fatal(err)
	}
	v, _ := gj.Values[float32](outs[0])
	fmt.Printf("relu(a + b) = %s%v: %v\n", outs[0].DType, outs[0].Shape, v)

	// A graph from a file, called at two batch sizes into Go outputs.
	mg, err := c.GraphFromFile(*graphPath)
	if err != nil {
		log.Fatal(err)
	}
	mlp, err := c.NewFunction(mg, gj.WithName("mlp"))
	mg.Close()
	if err != nil {
		log.Fatal(err)
	}
	defer mlp.Close()
	for _, batch := range []int64{4, 16, 16} {
		x := gj.NewTensor(gj.Float32, batch, 8)
		xs, _ := gj.Values[float32](x)
		for i := range xs {
			xs[i] = float32(i%7) / 7
		}
		outs, err := mlp.Call(ctx, []gj.Tensor{x})
		if err != nil {
			log.Fatal(err)
		}
		v, _ := gj.Values[float32](outs[0])
		fmt.Printf("%s(x[%d, 8]) -> %s%v, first row %v\n", mlp.OutputNames()[0], batch, outs[0].DType, outs[0].Shape, v[:4])
	}
	st, err := mlp.Stats()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("calls %d, hits %d, misses %d, compiles %d (%v)\n", st.Calls, st.Hits, st.Misses, st.Compiles, st.CompileTime)
}
