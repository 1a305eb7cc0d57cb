package guardjit

import "sync"

// handle guards one C handle against use after Close: every use holds the
// read lock for its duration, Close takes the write lock, so a handle is
// never destroyed while another goroutine is inside a call on it (the C API
// leaves that undefined).
type handle struct {
	mu     sync.RWMutex
	closed bool
}

// acquire read-locks h; it fails with FAILED_PRECONDITION once h is closed.
func (h *handle) acquire(what string) error {
	h.mu.RLock()
	if h.closed {
		h.mu.RUnlock()
		return newError(CodeFailedPrecondition, "%s is closed", what)
	}
	return nil
}

func (h *handle) release() { h.mu.RUnlock() }

// close marks h closed and reports whether it was open (the caller then
// destroys the C handle).
func (h *handle) close() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.closed = true
	return true
}
