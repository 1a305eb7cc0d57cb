package guardjit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"time"
	"unsafe"
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
type ContextOption func(*contextConfig)

// contextConfig is gj_context_options plus its string fields, which stay in
// Go until NewContext copies them into C memory for gj_context_create: nil
// passes NULL (the library then reads the environment), a pointer to ""
// passes "".
type contextConfig struct {
	raw                             C.gj_context_options
	cacheDir, cacheKey, remoteCache *string
}

// WithThreads sets the threads compiled CPU programs run on, the calling
// thread included (the context then owns a pool of that many); 0, the
// default, is the process-wide pool (GJ_NUM_THREADS, else one per core).
func WithThreads(n int) ContextOption {
	return func(c *contextConfig) { c.raw.num_threads = C.int32_t(n) }
}

// WithBackend chooses what compiles cache entries.
func WithBackend(b Backend) ContextOption {
	return func(c *contextConfig) { c.raw.backend = C.gj_backend(b) }
}

// WithMaxCachedKernels caps the compiled kernels kept for reuse once no
// function uses them (default 1024; 0 = none).
func WithMaxCachedKernels(n int) ContextOption {
	return func(c *contextConfig) { c.raw.max_cached_kernels = C.int32_t(n) }
}

// WithMaxCachedBytes caps the freed host memory kept for reuse (default
// 1 GiB; 0 = none).
func WithMaxCachedBytes(n int64) ContextOption {
	return func(c *contextConfig) { c.raw.max_cached_bytes = C.int64_t(n) }
}

// WithCacheDir sets the persistent compile cache (C API 0.11): a directory
// where the context stores the code it compiles and looks it up before
// compiling, so that the next process, or any process sharing the
// directory, loads what was compiled once (the repository README's "Compile
// cache"). Without this option the library takes GJ_CACHE_DIR from the
// environment (none if unset); "" turns the cache off whatever the
// environment says. The directory is created if missing; NewContext fails
// with CodeUnavailable, naming it, when it cannot be created or written.
func WithCacheDir(dir string) ContextOption {
	return func(c *contextConfig) { c.cacheDir = &dir }
}

// WithMaxCacheBytes bounds the compile cache directory (C API 0.11): beyond
// it the least recently used records are removed. Default 1 GiB; 0 =
// unbounded.
func WithMaxCacheBytes(n int64) ContextOption {
	return func(c *contextConfig) { c.raw.max_cache_bytes = C.int64_t(n) }
}

// WithCacheKey sets a secret key (any bytes but NUL) that signs every record
// the context stores (HMAC-SHA256); with a key, a record without a valid
// signature under it is refused (CompileCacheStats.Rejected) and compiled
// anew, so whoever can write to the directory cannot make the process run
// code (C API 0.11). Without this option the library takes GJ_CACHE_KEY
// from the environment; "" means no key.
func WithCacheKey(key string) ContextOption {
	return func(c *contextConfig) { c.cacheKey = &key }
}

// WithRemoteCache shares compile cache records through Redis, for a fleet
// (C API 0.11): "redis://[:password@]host[:port][/db]" with optional
// "?timeout_ms=100&ttl_s=0&max_value_bytes=67108864&lock_ms=10000&wait_ms=10000".
// A lookup that misses the directory asks Redis; what the context compiles
// is stored in both; replicas missing the same kernel at once compile it
// once. An unreachable server is not an error (the context compiles
// locally, with one warning); a malformed URL fails NewContext with
// CodeInvalidArgument. Without this option the library takes
// GJ_REMOTE_CACHE from the environment; "" means none.
func WithRemoteCache(url string) ContextOption {
	return func(c *contextConfig) { c.remoteCache = &url }
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
	var cfg contextConfig
	C.gj_context_options_init_v(&cfg.raw, C.sizeof_gj_context_options)
	for _, opt := range opts {
		opt(&cfg)
	}
	// The strings live in C memory for the duration of the create call
	// (the library copies them); an unset one stays NULL.
	defer func() {
		C.free(unsafe.Pointer(cfg.raw.cache_dir))
		C.free(unsafe.Pointer(cfg.raw.cache_key))
		C.free(unsafe.Pointer(cfg.raw.remote_cache))
	}()
	for _, f := range []struct {
		name string
		val  *string
		dst  **C.char
	}{
		{"WithCacheDir", cfg.cacheDir, &cfg.raw.cache_dir},
		{"WithCacheKey", cfg.cacheKey, &cfg.raw.cache_key},
		{"WithRemoteCache", cfg.remoteCache, &cfg.raw.remote_cache},
	} {
		if f.val == nil {
			continue
		}
		if strings.IndexByte(*f.val, 0) >= 0 {
			return nil, newError(CodeInvalidArgument, "%s: the string contains a NUL byte", f.name)
		}
		*f.dst = C.CString(*f.val)
	}
	c := &Context{}
	if err := check(C.gj_context_create(&cfg.raw, &c.ptr)); err != nil {
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
	// Graph weights the context's live cache entries hold again, packed
	// into their kernels' layouts (C API 0.13; 0 for a CUDA device).
	PackedWeightBytes int64
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
		PackedWeightBytes: int64(s.packed_weight_bytes),
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
		PackedWeightBytes: int64(s.packed_weight_bytes),
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

// CompileCacheStats is gj_compile_cache_stats (C API 0.11): what the
// context's compile cache (WithCacheDir, WithRemoteCache) did. A record is
// one compiled kernel; a lookup that finds no usable record is a miss, and
// the kernel compiles. Without a compile cache only KernelsCompiled counts
// (what a JIT context compiles; all are 0 with BackendEager).
type CompileCacheStats struct {
	KernelsCompiled int64 // kernels the context compiled
	KernelsLoaded   int64 // kernels loaded from the cache instead
	DiskHits        int64
	DiskMisses      int64
	DiskStores      int64
	RemoteHits      int64 // from Redis (WithRemoteCache)
	RemoteMisses    int64
	RemoteStores    int64
	// Kernels left to another replica holding their compile lock, and of
	// those the waits that ended without its record (compiled here then).
	LockWaits    int64
	LockTimeouts int64
	// Records refused: truncated, corrupt (digest), of another record
	// format, stored under another key, unsigned or wrongly signed with
	// WithCacheKey. Each is removed, its kernel compiled and stored again.
	Rejected  int64
	Errors    int64 // I/O and Redis failures: each a miss or a lost store
	Evictions int64 // records this context removed past WithMaxCacheBytes
}

// CompileCacheStats reads the context's compile cache counters (C API
// 0.11).
func (c *Context) CompileCacheStats() (CompileCacheStats, error) {
	if err := c.use(); err != nil {
		return CompileCacheStats{}, err
	}
	defer c.release()
	var s C.gj_compile_cache_stats
	C.gj_compile_cache_stats_init_v(&s, C.sizeof_gj_compile_cache_stats)
	if err := check(C.gj_context_get_compile_cache_stats(c.ptr, &s)); err != nil {
		return CompileCacheStats{}, err
	}
	return CompileCacheStats{
		KernelsCompiled: int64(s.kernels_compiled),
		KernelsLoaded:   int64(s.kernels_loaded),
		DiskHits:        int64(s.disk_hits),
		DiskMisses:      int64(s.disk_misses),
		DiskStores:      int64(s.disk_stores),
		RemoteHits:      int64(s.remote_hits),
		RemoteMisses:    int64(s.remote_misses),
		RemoteStores:    int64(s.remote_stores),
		LockWaits:       int64(s.lock_waits),
		LockTimeouts:    int64(s.lock_timeouts),
		Rejected:        int64(s.rejected),
		Errors:          int64(s.errors),
		Evictions:       int64(s.evictions),
	}, nil
}

// CacheDirStats is gj_cache_dir_stats (C API 0.11): a compile cache
// directory as a whole.
type CacheDirStats struct {
	Records int64 // record files
	Bytes   int64 // their total size
	// Last use of the least and of the most recently used record (the zero
	// Time without records).
	OldestUse time.Time
	NewestUse time.Time
	Verified  int64 // with verify: records whose checks passed
	Bad       int64 // with verify: records that failed them
	Removed   int64 // with removeBad: bad records removed
}

// InspectCacheDir counts the records of compile cache directory dir (C API
// 0.11, `guardjit cache stats|verify DIR`); with verify it reads each one
// whole and checks it as a load would (its digest, its file name against
// its key and, with a non-empty key, its signature), and with removeBad it
// also removes those that fail. The report is a summary by kind of record,
// then one line per bad record naming the file and the problem.
// CodeNotFound when dir does not exist. Safe while other processes use the
// directory.
func InspectCacheDir(dir, key string, verify, removeBad bool) (CacheDirStats, string, error) {
	if strings.IndexByte(dir, 0) >= 0 || strings.IndexByte(key, 0) >= 0 {
		return CacheDirStats{}, "", newError(CodeInvalidArgument, "InspectCacheDir: the directory or key contains a NUL byte")
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	var ckey *C.char
	if key != "" {
		ckey = C.CString(key)
		defer C.free(unsafe.Pointer(ckey))
	}
	var s C.gj_cache_dir_stats
	C.gj_cache_dir_stats_init_v(&s, C.sizeof_gj_cache_dir_stats)
	var report *C.char
	if err := check(C.gj_cache_dir_inspect(cdir, ckey, cBool(verify), cBool(removeBad), &s, &report)); err != nil {
		return CacheDirStats{}, "", err
	}
	text := C.GoString(report)
	C.gj_string_destroy(report)
	return CacheDirStats{
		Records:   int64(s.records),
		Bytes:     int64(s.bytes),
		OldestUse: unixMilli(int64(s.oldest_use_ms)),
		NewestUse: unixMilli(int64(s.newest_use_ms)),
		Verified:  int64(s.verified),
		Bad:       int64(s.bad),
		Removed:   int64(s.removed),
	}, text, nil
}

// ClearCacheDir removes every record (and leftover temporary file) of
// compile cache directory dir and returns how many files it removed (C API
// 0.11, `guardjit cache clear DIR`). CodeNotFound when dir does not exist.
func ClearCacheDir(dir string) (int64, error) {
	if strings.IndexByte(dir, 0) >= 0 {
		return 0, newError(CodeInvalidArgument, "ClearCacheDir: the directory contains a NUL byte")
	}
	cdir := C.CString(dir)
	defer C.free(unsafe.Pointer(cdir))
	var removed C.int64_t
	if err := check(C.gj_cache_dir_clear(cdir, &removed)); err != nil {
		return 0, err
	}
	return int64(removed), nil
}

// unixMilli is the time of Unix milliseconds ms, the zero Time for 0.
func unixMilli(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func cBool(b bool) C.int32_t {
	if b {
		return 1
	}
	return 0
}
