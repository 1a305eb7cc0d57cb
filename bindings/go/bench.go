package guardjit

/*
#include "shim.h"
*/
import "C"

// nativeCallNanos is the mean time of iters calls of f made by a loop in C
// (gj_function_call with no options, data in C buffers): the baseline the
// binding's per-call overhead is measured against. Used by benchmarks.
func nativeCallNanos(f *Function, inputs, outputs []Tensor, iters int) (float64, error) {
	if err := f.acquire("function"); err != nil {
		return 0, err
	}
	defer f.release()
	specs := make([]Spec, 0, len(inputs)+len(outputs))
	for _, t := range append(append([]Tensor(nil), inputs...), outputs...) {
		specs = append(specs, t.Spec())
	}
	fr, err := newFrame(specs, nil, 0)
	if err != nil {
		return 0, err
	}
	defer fr.free()
	for i, t := range inputs {
		fr.copyIn(i, t.Data)
	}
	for i, t := range outputs {
		fr.copyIn(len(inputs)+i, t.Data)
	}
	var cerr *C.gj_error
	ns := C.gjgo_bench_native(f.ptr, fr.ptrs, C.size_t(len(inputs)), C.size_t(len(outputs)), C.long(iters), &cerr)
	if err := check(cerr); err != nil {
		return 0, err
	}
	return float64(ns), nil
}
