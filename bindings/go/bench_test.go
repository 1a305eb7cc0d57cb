package guardjit_test

import (
	"context"
	"testing"

	gj "guardjit.dev/guardjit"
)

// The per-call overhead of the binding: a cached call of seed_mul (two
// float32[n] inputs, one output) through Go and through a C loop.
func benchSetup(b *testing.B, n int64) (*gj.Function, []gj.Tensor, []gj.Tensor) {
	c := newContext(b, gj.WithThreads(1))
	f := loadFunction(b, c, "seed_mul.pbtxt")
	in := []gj.Tensor{gj.NewTensor(gj.Float32, n), gj.NewTensor(gj.Float32, n)}
	out := []gj.Tensor{gj.NewTensor(gj.Float32, n)}
	if err := f.CallInto(context.Background(), in, out); err != nil {
		b.Fatal(err)
	}
	return f, in, out
}

func BenchmarkCallInto(b *testing.B) {
	f, in, out := benchSetup(b, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.CallInto(context.Background(), in, out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallIntoFreshFrames(b *testing.B) {
	defer gj.SetReuseFrames(false)()
	BenchmarkCallInto(b)
}

func BenchmarkCallIntoCopied(b *testing.B) {
	defer gj.SetMaxDirect(0)()
	BenchmarkCallInto(b)
}

func BenchmarkCallIntoCancellable(b *testing.B) {
	f, in, out := benchSetup(b, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := f.CallInto(ctx, in, out); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCall(b *testing.B) {
	f, in, _ := benchSetup(b, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Call(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCallAlloc(b *testing.B) {
	f, in, _ := benchSetup(b, 16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		outs, err := f.CallAlloc(context.Background(), in)
		if err != nil {
			b.Fatal(err)
		}
		outs[0].Close()
	}
}

// BenchmarkNativeC is the same cached call from a loop in C (the baseline).
func BenchmarkNativeC(b *testing.B) {
	f, in, out := benchSetup(b, 16)
	b.ResetTimer()
	ns, err := gj.NativeCallNanos(f, in, out, b.N)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(ns, "C-ns/call")
}
