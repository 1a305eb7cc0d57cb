package guardjit

import "unsafe"

// Test hooks (compiled into the test binary only).

// SetMaxDirect changes how many tensors pass their Go data to C directly
// (the rest go through C buffers); the result restores it.
func SetMaxDirect(n int) (restore func()) {
	old := maxDirect
	maxDirect = n
	return func() { maxDirect = old }
}

// SetReuseFrames turns frame reuse off (a malloc and free per call).
func SetReuseFrames(on bool) (restore func()) {
	old := reuseFrames
	reuseFrames = on
	return func() { reuseFrames = old }
}

// NativeCallNanos is nativeCallNanos.
var NativeCallNanos = nativeCallNanos

// DirectSlots is how many tensors currently pass their data directly.
func DirectSlots() int { return maxDirect }

// CallOptionsOf is what a call with opts passes in gj_call_options: its
// stream and synchronize fields, and whether struct_size covers both (the
// library reads only the fields inside it).
func CallOptionsOf(opts ...CallOption) (stream unsafe.Pointer, synchronize int32, covered bool) {
	cfg, err := (&Function{}).config(opts, 0)
	if err != nil {
		panic(err)
	}
	fr := &frame{}
	defer fr.free()
	fr.layout(0, 0, 0, 0)
	fr.apply(cfg)
	o := fr.opts
	end := unsafe.Offsetof(o.synchronize) + unsafe.Sizeof(o.synchronize)
	return o.stream, int32(o.synchronize), end <= uintptr(o.struct_size)
}
