package guardjit

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
