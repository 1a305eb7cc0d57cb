// Package guardjit is the Go binding of guardjit, an embeddable JIT for
// tensor graphs with a guard cache (TorchDynamo's model) behind a stable C
// ABI (C API 0.12: the library it loads must be 0.12 or newer). It uses cgo
// and finds the library with `pkg-config guardjit`.
//
//	c, _ := guardjit.NewContext()
//	defer c.Close()
//	g, _ := c.GraphFromFile("examples/mlp.pbtxt")
//	defer g.Close()
//	f, _ := c.NewFunction(g, guardjit.WithName("mlp"))
//	defer f.Close()
//	x := guardjit.TensorOf(make([]float32, 4*8), 4, 8)
//	outs, err := f.Call(ctx, []guardjit.Tensor{x})
//
// # Handles
//
// Context, Graph, Builder, Function and LibTensor wrap C handles. Each has a
// Close method (idempotent) and a finalizer that releases the handle if
// Close was never called; the finalizer is a backstop, not a substitute:
// compiled code and library-allocated outputs hold memory the Go garbage
// collector cannot see. Graphs and functions keep what they need of their
// Context (as in the C API), so they keep working after Context.Close; only
// making new handles from a closed Context fails. Every method is safe
// from any goroutine, and Close waits for calls in progress on the handle; a
// handle used after Close returns a FAILED_PRECONDITION *Error. Calls on one
// Function may run concurrently (one compile per new shape; other callers
// of that shape wait for it).
//
// # Compile cache
//
// WithCacheDir gives a context a persistent compile cache (C API 0.11): the
// object code of every CPU kernel it compiles is stored in the directory and
// looked up there first, so a restarted process, or any process sharing the
// directory, loads instead of compiling (Context.CompileCacheStats,
// Stats.EntriesLoaded). The string options WithCacheDir, WithCacheKey and
// WithRemoteCache keep the C API's NULL-versus-"" rule: an option left out is
// NULL, and the library takes GJ_CACHE_DIR, GJ_CACHE_KEY or GJ_REMOTE_CACHE
// from the environment; an option given as "" turns that part off.
//
// # Errors
//
// Every error from this package is a *Error with the library's canonical
// Code (CodeInvalidArgument, ...) and its message, which names the node,
// input or argument at fault. Errors raised on the Go side before the
// library is called (a data slice shorter than its shape, an unknown dtype)
// use the same codes. CodeOf(err) reads the code through wrapping.
//
// # Tensors and cgo's pointer rules
//
// A Tensor is a dtype, a shape and a row-major []byte of data, usually Go
// memory (TensorOf views a []float32 and so on without copying). cgo lets Go
// pass a pointer to Go memory to C only if that memory holds no Go pointers
// and C keeps no copy after the call returns; and Go code may not store a Go
// pointer in C memory at all. A DLTensor holds a data pointer and a shape
// pointer, so a DLTensor in Go memory pointing at a Go slice, or a C-allocated
// DLTensor whose data field Go code sets to a Go slice, would each break a
// rule. This package therefore:
//
//   - builds the DLTensor structs, their shape arrays, the pointer array
//     gj_function_call takes, the call options and the cancel flag in one
//     block of C memory (a "frame"; each Function keeps a few for reuse, so a
//     cached call does not malloc);
//   - passes the data pointers of the first 8 tensors (inputs, then
//     outputs) as direct arguments of a small C function, which cgo pins for
//     the duration of the call; the C side stores them into the C DLTensors,
//     calls gj_function_call and clears them again before it returns, so no
//     Go pointer outlives the call in C memory;
//   - copies the data of any further tensor through a C buffer (inputs
//     before the call, outputs after it), which costs one copy per such
//     tensor but keeps every rule;
//   - checks on the Go side that each slice holds exactly the bytes its
//     dtype and shape need, so the library can never read or write past a Go
//     slice (a shape the library refuses anyway is passed without data, to
//     get the library's own message).
//
// The library borrows tensors only for the duration of a call, which is what
// makes this sound. Data must be aligned to the element size (the library
// checks); NewTensor and TensorOf are.
//
// # Outputs
//
// CallInto writes into caller-provided tensors (no allocation by the library;
// compiled kernels write contiguous outputs in place). Call returns outputs
// in Go memory, copied once from library-allocated buffers. CallAlloc keeps
// them as LibTensor (C memory, no copy) that must be closed; LibTensor.View
// can be passed as an input to another call.
//
// # Cancellation
//
// Calls take a context.Context. If it can be cancelled, a goroutine watches
// it for the duration of the call and sets the call's cancel flag, an int32
// in the frame's C memory that the library reads with relaxed atomic loads;
// the call then stops between steps with CodeCancelled, and
// errors.Is(err, context.Canceled) holds. A deadline on the context becomes
// the call's timeout (CodeDeadlineExceeded). The watcher costs a goroutine
// and two channel operations per call; context.Background() costs nothing.
// A call that stops writes no output.
package guardjit
