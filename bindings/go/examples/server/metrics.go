package main

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"
)

// serveMetrics writes Prometheus text format (version 0.0.4): per model the
// guard cache's counters (gj_function_stats) and the requests served, the
// context's memory (gj_memory_stats) and its compile cache
// (gj_compile_cache_stats).
func (s *server) serveMetrics(w http.ResponseWriter) {
	var b bytes.Buffer
	type sample struct {
		labels string
		value  float64
	}
	family := func(name, typ, help string, samples []sample) {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
		for _, smp := range samples {
			fmt.Fprintf(&b, "%s%s %v\n", name, smp.labels, smp.value)
		}
	}
	perModel := map[string][]sample{}
	stat := func(metric string, m *model, v float64) {
		perModel[metric] = append(perModel[metric], sample{fmt.Sprintf(`{model="%s"}`, escapeLabel(m.name)), v})
	}
	var requests, latencySum, latencyCount []sample
	for _, name := range s.names {
		m := s.models[name]
		st, err := m.fn.Stats()
		if err != nil {
			continue
		}
		stat("calls", m, float64(st.Calls))
		stat("hits", m, float64(st.Hits))
		stat("misses", m, float64(st.Misses))
		stat("compiles", m, float64(st.Compiles))
		stat("recompiles", m, float64(st.Recompiles))
		stat("fallback", m, float64(st.FallbackCalls))
		stat("entries", m, float64(st.CacheEntries))
		stat("compile_seconds", m, st.CompileTime.Seconds())
		stat("guard_seconds", m, float64(st.GuardLookup)/float64(time.Second))
		stat("entries_loaded", m, float64(st.EntriesLoaded))
		var codes []int
		m.requests.Range(func(k, _ any) bool { codes = append(codes, k.(int)); return true })
		sort.Ints(codes)
		for _, code := range codes {
			v, _ := m.requests.Load(code)
			requests = append(requests, sample{fmt.Sprintf(`{model="%s",code="%d"}`, escapeLabel(name), code), float64(v.(*atomic.Int64).Load())})
		}
		label := fmt.Sprintf(`{model="%s"}`, escapeLabel(name))
		latencySum = append(latencySum, sample{label, float64(m.seconds.Load()) / float64(time.Second)})
		latencyCount = append(latencyCount, sample{label, float64(m.count.Load())})
	}
	family("guardjit_calls_total", "counter", "Calls of the model's function.", perModel["calls"])
	family("guardjit_cache_hits_total", "counter", "Calls served by an existing cache entry.", perModel["hits"])
	family("guardjit_cache_misses_total", "counter", "Calls no cache entry's guards accepted.", perModel["misses"])
	family("guardjit_compiles_total", "counter", "Cache entries compiled.", perModel["compiles"])
	family("guardjit_recompiles_total", "counter", "Compiles after the first.", perModel["recompiles"])
	family("guardjit_fallback_calls_total", "counter", "Eager runs past the recompile limit.", perModel["fallback"])
	family("guardjit_cache_entries", "gauge", "Cache entries held.", perModel["entries"])
	family("guardjit_compile_seconds_total", "counter", "Time spent compiling (gj_function_stats.compile_ms_total / 1000).", perModel["compile_seconds"])
	family("guardjit_guard_lookup_seconds", "gauge", "Mean guard lookup on hits, sampled (gj_function_stats.guard_ns_mean / 1e9).", perModel["guard_seconds"])
	family("guardjit_entries_loaded_total", "counter", "Cache entries whose code all came from the compile cache.", perModel["entries_loaded"])
	family("guardjit_http_requests_total", "counter", "Predict requests by HTTP status.", requests)
	b.WriteString("# HELP guardjit_predict_seconds Predict request latency.\n# TYPE guardjit_predict_seconds summary\n")
	for i := range latencySum {
		fmt.Fprintf(&b, "guardjit_predict_seconds_sum%s %v\n", latencySum[i].labels, latencySum[i].value)
		fmt.Fprintf(&b, "guardjit_predict_seconds_count%s %v\n", latencyCount[i].labels, latencyCount[i].value)
	}
	if ms, err := s.ctx.MemoryStats(); err == nil {
		family("guardjit_memory_in_use_bytes", "gauge", "Outputs and intermediates alive now.", []sample{{"", float64(ms.BytesInUse)}})
		family("guardjit_memory_cached_bytes", "gauge", "Freed host memory kept for reuse.", []sample{{"", float64(ms.BytesCached)}})
		family("guardjit_memory_peak_in_use_bytes", "gauge", "Peak bytes in use since start.", []sample{{"", float64(ms.PeakBytesInUse)}})
		family("guardjit_compiled_modules", "gauge", "JIT code modules loaded.", []sample{{"", float64(ms.CompiledModules)}})
		family("guardjit_cached_kernels", "gauge", "Compiled kernels kept for reuse.", []sample{{"", float64(ms.CachedKernels)}})
		family("guardjit_packed_weight_bytes", "gauge", "Graph weights held again by live cache entries, packed into their kernels' layouts.", []sample{{"", float64(ms.PackedWeightBytes)}})
	}
	if cs, err := s.ctx.CompileCacheStats(); err == nil {
		for _, c := range []struct {
			name, help string
			value      int64
		}{
			{"kernels_compiled", "Kernels the context compiled.", cs.KernelsCompiled},
			{"kernels_loaded", "Kernels loaded from the compile cache instead of compiled.", cs.KernelsLoaded},
			{"disk_hits", "Compile cache lookups answered by the directory.", cs.DiskHits},
			{"disk_misses", "Compile cache lookups the directory had no usable record for.", cs.DiskMisses},
			{"disk_stores", "Records written to the compile cache directory.", cs.DiskStores},
			{"remote_hits", "Compile cache lookups answered by Redis.", cs.RemoteHits},
			{"remote_misses", "Compile cache lookups Redis had no usable record for.", cs.RemoteMisses},
			{"remote_stores", "Records written to Redis.", cs.RemoteStores},
			{"lock_waits", "Kernels left to another replica holding their compile lock.", cs.LockWaits},
			{"lock_timeouts", "Lock waits that ended without the other replica's record.", cs.LockTimeouts},
			{"rejected", "Records refused (truncated, corrupt, foreign, unsigned or wrongly signed).", cs.Rejected},
			{"errors", "Compile cache I/O and Redis failures.", cs.Errors},
			{"evictions", "Records removed past the directory's size limit.", cs.Evictions},
		} {
			family("guardjit_compile_cache_"+c.name+"_total", "counter", c.help, []sample{{"", float64(c.value)}})
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Write(b.Bytes())
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}
