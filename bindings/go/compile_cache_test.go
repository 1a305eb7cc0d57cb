package guardjit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	gj "guardjit.dev/guardjit"
)

// runAttention calls examples/attention.pbtxt once on a fixed x of
// float32[2,4,8] in a new function of c: its output, stats and explain text.
func runAttention(t *testing.T, c *gj.Context) ([]float32, gj.Stats, string) {
	t.Helper()
	f := loadFunction(t, c, "attention.pbtxt")
	x := make([]float32, 2*4*8)
	for i := range x {
		x[i] = 0.01*float32(i%17) - 0.05
	}
	outs, err := f.Call(context.Background(), []gj.Tensor{gj.TensorOf(x, 2, 4, 8)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Stats()
	if err != nil {
		t.Fatal(err)
	}
	explain, err := f.Explain()
	if err != nil {
		t.Fatal(err)
	}
	return values[float32](t, outs[0]), st, explain
}

func compileCacheStats(t *testing.T, c *gj.Context) gj.CompileCacheStats {
	t.Helper()
	cs, err := c.CompileCacheStats()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// The persistent compile cache (C API 0.11): a second context on the same
// directory loads every kernel the first compiled and computes the same
// output; a key refuses unsigned records; InspectCacheDir and ClearCacheDir
// see and remove the records.
func TestCompileCacheAcrossContexts(t *testing.T) {
	dir := t.TempDir()
	first := newContext(t, gj.WithCacheDir(dir))
	want, st, _ := runAttention(t, first)
	cs := compileCacheStats(t, first)
	if cs.KernelsCompiled == 0 || cs.KernelsLoaded != 0 || cs.DiskStores != cs.KernelsCompiled || cs.DiskMisses == 0 || st.EntriesLoaded != 0 {
		t.Fatalf("first context: cache %+v, function %+v", cs, st)
	}

	second := newContext(t, gj.WithCacheDir(dir))
	got, st, explain := runAttention(t, second)
	cs2 := compileCacheStats(t, second)
	if cs2.KernelsCompiled != 0 || cs2.KernelsLoaded == 0 || cs2.DiskHits != cs2.KernelsLoaded || cs2.Rejected != 0 || cs2.Errors != 0 {
		t.Fatalf("second context: cache %+v", cs2)
	}
	if st.EntriesLoaded != 1 || st.Compiles != 1 || !strings.Contains(explain, "loaded from the disk cache") {
		t.Fatalf("second context: function %+v\n%s", st, explain)
	}
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("output[%d] = %v from the cache, %v compiled", i, got[i], want[i])
		}
	}

	ds, report, err := gj.InspectCacheDir(dir, "", true, false)
	if err != nil {
		t.Fatal(err)
	}
	if ds.Records == 0 || ds.Records > cs.DiskStores || ds.Verified != ds.Records || ds.Bad != 0 || ds.Bytes <= 0 || ds.NewestUse.IsZero() || ds.OldestUse.After(ds.NewestUse) || report == "" {
		t.Fatalf("inspect: %+v\n%s", ds, report)
	}

	// With a key, the unsigned records are refused and stored again signed.
	keyed := newContext(t, gj.WithCacheDir(dir), gj.WithCacheKey("k"))
	runAttention(t, keyed)
	if ks := compileCacheStats(t, keyed); ks.Rejected == 0 || ks.KernelsLoaded != 0 || ks.KernelsCompiled == 0 {
		t.Fatalf("keyed context: cache %+v", ks)
	}
	if ds, report, err := gj.InspectCacheDir(dir, "k", true, false); err != nil || ds.Bad != 0 || ds.Records == 0 {
		t.Fatalf("inspect with the key: %+v %v\n%s", ds, err, report)
	}

	removed, err := gj.ClearCacheDir(dir)
	if err != nil || removed < ds.Records {
		t.Fatalf("clear: %d removed (%d records), %v", removed, ds.Records, err)
	}
	if ds, _, err := gj.InspectCacheDir(dir, "", false, false); err != nil || ds.Records != 0 || !ds.NewestUse.IsZero() {
		t.Fatalf("after clear: %+v %v", ds, err)
	}
	_, err = gj.ClearCacheDir(filepath.Join(dir, "missing"))
	expectCode(t, err, gj.CodeNotFound)
	_, _, err = gj.InspectCacheDir(filepath.Join(dir, "missing"), "", false, false)
	expectCode(t, err, gj.CodeNotFound)
}

// WithCacheDir("") turns the cache off even with GJ_CACHE_DIR set, while a
// context without the option takes GJ_CACHE_DIR from the environment.
func TestCompileCacheEmptyDirDisables(t *testing.T) {
	envDir := t.TempDir()
	t.Setenv("GJ_CACHE_DIR", envDir)
	off := newContext(t, gj.WithCacheDir(""))
	runAttention(t, off)
	// Kernels compile (KernelsCompiled counts them) but nothing is looked
	// up, loaded or stored.
	if cs := compileCacheStats(t, off); cs.DiskMisses != 0 || cs.DiskHits != 0 || cs.DiskStores != 0 || cs.KernelsLoaded != 0 || cs.KernelsCompiled == 0 {
		t.Fatalf("cache_dir \"\": %+v", cs)
	}
	if entries, _ := os.ReadDir(envDir); len(entries) != 0 {
		t.Fatalf("cache_dir \"\" wrote to GJ_CACHE_DIR: %d files", len(entries))
	}
	fromEnv := newContext(t)
	runAttention(t, fromEnv)
	if cs := compileCacheStats(t, fromEnv); cs.DiskMisses == 0 || cs.DiskStores == 0 {
		t.Fatalf("GJ_CACHE_DIR: %+v", cs)
	}
}

// Bad cache options fail NewContext with the library's code; a string with a
// NUL byte is refused before the library sees it.
func TestCompileCacheBadOptions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := gj.NewContext(gj.WithCacheDir(filepath.Join(file, "sub")))
	expectCode(t, err, gj.CodeUnavailable, "cache_dir")
	_, err = gj.NewContext(gj.WithCacheDir(""), gj.WithMaxCacheBytes(-5))
	expectCode(t, err, gj.CodeInvalidArgument, "max_cache_bytes")
	_, err = gj.NewContext(gj.WithCacheKey("a\x00b"))
	expectCode(t, err, gj.CodeInvalidArgument, "WithCacheKey", "NUL")
	_, err = gj.NewContext(gj.WithRemoteCache("http://not-redis"))
	expectCode(t, err, gj.CodeInvalidArgument, "remote_cache")
}
