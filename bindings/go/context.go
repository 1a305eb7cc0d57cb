package guardjit

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
)

// Backend is what compiles a cache entry on a miss (gj_backend).
type Backend int32

// The backends of gj_backend.
const (
	// BackendDefault is the best available: BackendCPUJIT for CPU tensors.
	BackendDefault Backend = C.GJ_BACKEND_DEFAULT
	// BackendEager gives specialized eager plans (torch.compile's
	// backend="eager").
	BackendEager Backend = C.GJ_BACKEND_EAGER
	// BackendCPUJIT compiles fused kernels with LLVM's ORC JIT.
	BackendCPUJIT Backend = C.GJ_BACKEND_CPU_JIT
)

// ContextOption configures NewContext.
type ContextOption func(*C.gj_context_options)

// WithThreads sets the threads compiled CPU programs run on, the calling
// thread included (the context then owns a pool of that many); 0, the
// default, is the process-wide pool (GJ_NUM_THREADS, else one per core).
func WithThreads(n int) ContextOption {
	return func(o *C.gj_context_options) { o.num_threads = C.int32_t(n) }
}

// WithBackend chooses what compiles cache entries.
func WithBackend(b Backend) ContextOption {
	return func(o *C.gj_context_options) { o.backend = C.gj_backend(b) }
}

// WithMaxCachedKernels caps the compiled kernels kept for reuse once no
// function uses them (default 1024; 0 = none).
func WithMaxCachedKernels(n int) ContextOption {
	return func(o *C.gj_context_options) { o.max_cached_kernels = C.int32_t(n) }
}

// WithMaxCachedBytes caps the freed host memory kept for reuse (default
// 1 GiB; 0 = none).
func WithMaxCachedBytes(n int64) ContextOption {
	return func(o *C.gj_context_options) { o.max_cached_bytes = C.int64_t(n) }
}

// Context owns the thread pool, the compiler and the caching allocator;
// share one per process. Graphs and functions made from it keep what they
// need of it (guardjit.h), so they keep working after Close.
type Context struct {
	handle
	ptr *C.gj_context
}

// NewContext creates a context.
func NewContext(opts ...ContextOption) (*Context, error) {
	var o C.gj_context_options
	C.gj_context_options_init_v(&o, C.sizeof_gj_context_options)
	for _, opt := range opts {
		opt(&o)
	}
	c := &Context{}
	if err := check(C.gj_context_create(&o, &c.ptr)); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(c, (*Context).destroy)
	return c, nil
}

// Close destroys the context. Graphs and functions made from it keep
// working; making new ones from it, or finishing a builder, fails with
// FAILED_PRECONDITION. Closing twice is a no-op.
func (c *Context) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	runtime.SetFinalizer(c, nil)
	c.destroy()
	return nil
}

func (c *Context) destroy() {
	C.gj_context_destroy(c.ptr)
	c.ptr = nil
}

func (c *Context) use() error { return c.acquire("context") }

// MemoryStats is gj_memory_stats: the context's host memory.
type MemoryStats struct {
	BytesInUse        int64 // outputs and intermediates alive now
	BytesCached       int64 // freed, kept for reuse
	PeakBytesInUse    int64 // since the context was created
	SystemAllocations int64 // blocks taken from the system
	CacheHits         int64 // blocks served from the cache
	CompiledModules   int64 // JIT code modules loaded
	CachedKernels     int64 // compiled kernels kept for reuse
}

// MemoryStats reads the context's memory counters. Library-allocated
// outputs (LibTensor) count as in use until closed.
func (c *Context) MemoryStats() (MemoryStats, error) {
	if err := c.use(); err != nil {
		return MemoryStats{}, err
	}
	defer c.release()
	var s C.gj_memory_stats
	C.gj_memory_stats_init_v(&s, C.sizeof_gj_memory_stats)
	if err := check(C.gj_context_get_memory_stats(c.ptr, &s)); err != nil {
		return MemoryStats{}, err
	}
	return MemoryStats{
		BytesInUse:        int64(s.bytes_in_use),
		BytesCached:       int64(s.bytes_cached),
		PeakBytesInUse:    int64(s.peak_bytes_in_use),
		SystemAllocations: int64(s.system_allocations),
		CacheHits:         int64(s.cache_hits),
		CompiledModules:   int64(s.compiled_modules),
		CachedKernels:     int64(s.cached_kernels),
	}, nil
}

// Device is a DLPack device: where a tensor's memory is, and where
// DeviceMemoryStats reads memory. The zero value is the host.
type Device struct {
	Type int32 // kDLCPU (1), kDLCUDA (2) or kDLCUDAHost (3); 0 = kDLCPU
	ID   int32
}

// CPU is the host; CUDA(i) is CUDA device ordinal i; CUDAHost is page-locked
// host memory registered with CUDA (read as host memory beside CUDA tensors).
func CPU() Device        { return Device{Type: C.kDLCPU, ID: 0} }
func CUDA(id int) Device { return Device{Type: C.kDLCUDA, ID: int32(id)} }
func CUDAHost() Device   { return Device{Type: C.kDLCUDAHost, ID: 0} }

func (d Device) raw() C.DLDevice {
	if d.Type == 0 {
		d.Type = C.kDLCPU
	}
	return C.DLDevice{device_type: C.DLDeviceType(d.Type), device_id: C.int32_t(d.ID)}
}

func (d Device) String() string {
	switch d.Type {
	case 0, C.kDLCPU:
		return "cpu"
	case C.kDLCUDA:
		return fmt.Sprintf("cuda:%d", d.ID)
	case C.kDLCUDAHost:
		return "cuda_host"
	}
	return fmt.Sprintf("device(%d, %d)", d.Type, d.ID)
}

// DeviceMemoryStats reads one device's memory counters (C API 0.10): CPU()
// is the context's host memory, as MemoryStats; CUDA(i) is device i's
// stream-ordered caching allocator, shared by every context of the process
// (SystemAllocations counts cuMemAlloc calls). CodeUnavailable naming the
// device without a usable CUDA driver or device.
func (c *Context) DeviceMemoryStats(d Device) (MemoryStats, error) {
	if err := c.use(); err != nil {
		return MemoryStats{}, err
	}
	defer c.release()
	var s C.gj_memory_stats
	C.gj_memory_stats_init_v(&s, C.sizeof_gj_memory_stats)
	if err := check(C.gj_context_get_device_memory_stats(c.ptr, d.raw(), &s)); err != nil {
		return MemoryStats{}, err
	}
	return MemoryStats{
		BytesInUse:        int64(s.bytes_in_use),
		BytesCached:       int64(s.bytes_cached),
		PeakBytesInUse:    int64(s.peak_bytes_in_use),
		SystemAllocations: int64(s.system_allocations),
		CacheHits:         int64(s.cache_hits),
		CompiledModules:   int64(s.compiled_modules),
		CachedKernels:     int64(s.cached_kernels),
	}, nil
}

// ReleaseCachedDeviceMemory returns one device's idle cached blocks to the
// system (C API 0.10); blocks in use stay. Errors as DeviceMemoryStats.
func (c *Context) ReleaseCachedDeviceMemory(d Device) error {
	if err := c.use(); err != nil {
		return err
	}
	defer c.release()
	return check(C.gj_context_release_cached_device_memory(c.ptr, d.raw()))
}

// ReleaseCachedMemory returns every cached host block to the system.
func (c *Context) ReleaseCachedMemory() error {
	if err := c.use(); err != nil {
		return err
	}
	defer c.release()
	return check(C.gj_context_release_cached_memory(c.ptr))
}
