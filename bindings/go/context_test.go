package guardjit_test

import (
	"context"
	"errors"
	"math/rand"
	"runtime"
	"strings"
	"testing"
	"time"

	gj "guardjit.dev/guardjit"
)

// Handles are freed: library outputs return to the allocator when closed
// (or finalized), and closed functions release their compiled code.
func TestMemoryReleased(t *testing.T) {
	c := newContext(t, gj.WithMaxCachedKernels(0))
	base, err := c.MemoryStats()
	if err != nil {
		t.Fatal(err)
	}
	x := gj.TensorOf(randFloats(rand.New(rand.NewSource(5)), 64*8), 64, 8)
	for round := 0; round < 3; round++ {
		f := loadFunction(t, c, "mlp.pbtxt")
		for i := 0; i < 300; i++ {
			lib, err := f.CallAlloc(context.Background(), []gj.Tensor{x})
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				ms, _ := c.MemoryStats()
				if ms.BytesInUse < 64*4*4 {
					t.Fatalf("a live output is not counted: %+v", ms)
				}
			}
			lib[0].Close()
			if _, err := f.Call(context.Background(), []gj.Tensor{x}); err != nil {
				t.Fatal(err)
			}
		}
		ms, _ := c.MemoryStats()
		if ms.BytesInUse != base.BytesInUse {
			t.Fatalf("round %d: %d bytes in use after closing every output (base %d)", round, ms.BytesInUse, base.BytesInUse)
		}
		if ms.CompiledModules == 0 {
			t.Fatalf("no compiled modules while a function is live: %+v", ms)
		}
		f.Close()
		ms, _ = c.MemoryStats()
		if ms.CompiledModules != 0 {
			t.Fatalf("round %d: %d compiled modules after closing the function", round, ms.CompiledModules)
		}
	}

	// Outputs never closed are released by their finalizers.
	f := loadFunction(t, c, "mlp.pbtxt")
	for i := 0; i < 50; i++ {
		if _, err := f.CallAlloc(context.Background(), []gj.Tensor{x}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		ms, _ := c.MemoryStats()
		if ms.BytesInUse == base.BytesInUse {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bytes still in use after finalizers", ms.BytesInUse)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := c.ReleaseCachedMemory(); err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.MemoryStats(); ms.BytesCached != 0 {
		t.Fatalf("cached bytes after release: %+v", ms)
	}
}

// DeviceMemoryStats: the host's are MemoryStats; a CUDA device's are its
// allocator's where a driver and device exist, else CodeUnavailable naming
// the device; a negative ordinal is CodeInvalidArgument.
func TestDeviceMemoryStats(t *testing.T) {
	c := newContext(t)
	f := loadFunction(t, c, "mlp.pbtxt")
	x := gj.TensorOf(randFloats(rand.New(rand.NewSource(9)), 16*8), 16, 8)
	lib, err := f.CallAlloc(context.Background(), []gj.Tensor{x})
	if err != nil {
		t.Fatal(err)
	}
	host, err := c.DeviceMemoryStats(gj.CPU())
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.MemoryStats(); ms != host || host.BytesInUse < 16*4*4 {
		t.Fatalf("host device stats %+v, context stats %+v", host, ms)
	}
	lib[0].Close()
	if err := c.ReleaseCachedDeviceMemory(gj.CPU()); err != nil {
		t.Fatal(err)
	}
	if ms, _ := c.DeviceMemoryStats(gj.CPU()); ms.BytesCached != 0 {
		t.Fatalf("cached host bytes after release: %+v", ms)
	}
	if ms, err := c.DeviceMemoryStats(gj.CUDA(0)); err != nil {
		var e *gj.Error
		if !errors.As(err, &e) || e.Code() != gj.CodeUnavailable || !strings.Contains(e.Message(), "CUDA device 0") {
			t.Fatalf("CUDA device 0: %v", err)
		}
	} else if ms.CompiledModules != 0 {
		t.Fatalf("CUDA device 0: %+v", ms)
	}
	_, err = c.DeviceMemoryStats(gj.CUDA(-1))
	var e *gj.Error
	if !errors.As(err, &e) || e.Code() != gj.CodeInvalidArgument || !strings.Contains(e.Message(), "device id -1 is negative") {
		t.Fatalf("CUDA device -1: %v", err)
	}
}
