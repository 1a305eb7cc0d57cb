package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	gj "guardjit.dev/guardjit"
)

const examples = "../../../../examples/"

// startServer serves mlp, absdiv and branch on a loopback port.
func startServer(t *testing.T, mutate ...func(*config)) (*server, string) {
	t.Helper()
	cfg := config{
		models: map[string]string{
			"mlp":    examples + "mlp.pbtxt",
			"absdiv": examples + "seed_abs_div.pbtxt",
			"catadd": examples + "seed_cat_add.pbtxt",
		},
		maxBodyBytes: 1 << 20, maxElements: 1 << 16,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	s, err := newServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s) // 127.0.0.1:0
	t.Cleanup(func() {
		ts.Close()
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s, ts.URL
}

func do(t *testing.T, method, url, ctype string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

type outputJSON struct {
	Name  string            `json:"name"`
	DType string            `json:"dtype"`
	Shape []int64           `json:"shape"`
	Data  []json.RawMessage `json:"data"`
}

func predictJSON(t *testing.T, base, model, body string) []outputJSON {
	t.Helper()
	code, _, b := do(t, "POST", base+"/v1/models/"+model+":predict", "application/json", []byte(body))
	if code != 200 {
		t.Fatalf("predict %s: %d %s", model, code, b)
	}
	var resp struct {
		Model   string       `json:"model"`
		Outputs []outputJSON `json:"outputs"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || resp.Model != model {
		t.Fatalf("response %s: %v", b, err)
	}
	return resp.Outputs
}

func TestPredictJSON(t *testing.T) {
	_, base := startServer(t)
	outs := predictJSON(t, base, "absdiv", `{"inputs":[
		{"name":"b","dtype":"float32","shape":[3],"data":[-1,-2,0.5]},
		{"name":"a","dtype":"float32","shape":[3],"data":[1,-3,"NaN"]}]}`)
	if len(outs) != 2 || outs[0].Name != "div" || outs[1].Name != "lt" || outs[1].DType != "bool" {
		t.Fatalf("outputs %+v", outs)
	}
	want := []string{"0.5", "-0.75", `"NaN"`}
	for i, w := range want {
		if string(outs[0].Data[i]) != w {
			t.Fatalf("div[%d] = %s, want %s", i, outs[0].Data[i], w)
		}
	}
	if string(outs[1].Data[0]) != "true" {
		t.Fatalf("lt = %s", outs[1].Data[0])
	}
	// Positional inputs, nested data, integer inputs promoted by the graph.
	outs = predictJSON(t, base, "catadd", `{"inputs":[
		{"dtype":"float32","shape":[1,2],"data":[[1,2]]},
		{"dtype":"float32","shape":[2,2],"data":[[3,4],[5,6]]}]}`)
	if fmt.Sprint(outs[0].Shape) != "[3 2]" || string(bytes.Join(rawBytes(outs[0].Data), []byte(","))) != "3,4,5,6,7,8" {
		t.Fatalf("catadd %+v", outs[0])
	}
}

func rawBytes(r []json.RawMessage) [][]byte {
	out := make([][]byte, len(r))
	for i, m := range r {
		out[i] = m
	}
	return out
}

// encodeRequest builds a binary body (see README.md).
func encodeRequest(t testing.TB, tensors ...namedTensor) []byte {
	var b bytes.Buffer
	if err := encodeBinary(&b, tensors); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestPredictBinary(t *testing.T) {
	s, base := startServer(t)
	rng := rand.New(rand.NewSource(1))
	xs := make([]float32, 5*8)
	for i := range xs {
		xs[i] = rng.Float32()*2 - 1
	}
	body := encodeRequest(t, namedTensor{"x", gj.TensorOf(xs, 5, 8)})
	code, h, b := do(t, "POST", base+"/v1/models/mlp:predict", binaryType, body)
	if code != 200 || h.Get("Content-Type") != binaryType {
		t.Fatalf("%d %s %s", code, h.Get("Content-Type"), b)
	}
	outs, err := decodeBinary(bytes.NewReader(b), limits{maxElements: 1 << 20, maxHeader: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Name != "addmm_1" || fmt.Sprint(outs[0].Shape) != "[5 4]" {
		t.Fatalf("outputs %+v", outs)
	}
	// The same as calling the function directly.
	direct, err := s.models["mlp"].fn.Call(nil, []gj.Tensor{gj.TensorOf(xs, 5, 8)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(direct[0].Data, outs[0].Data) {
		t.Fatal("binary response differs from a direct call")
	}
	// JSON in, binary out through Accept.
	req, _ := http.NewRequest("POST", base+"/v1/models/absdiv:predict", strings.NewReader(`{"inputs":[{"dtype":"float32","shape":[1],"data":[2]},{"dtype":"float32","shape":[1],"data":[1]}]}`))
	req.Header.Set("Accept", binaryType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	outs, err = decodeBinary(bytes.NewReader(rb), limits{maxElements: 16, maxHeader: 1 << 20})
	if err != nil || outs[1].DType != gj.Bool || math.Float32frombits(binary.LittleEndian.Uint32(outs[0].Data)) != float32(2.0/3) {
		t.Fatalf("%v %+v", err, outs)
	}
}

func TestModelInfoAndMetrics(t *testing.T) {
	_, base := startServer(t)
	for _, n := range []int{1, 2, 3, 3} {
		body := fmt.Sprintf(`{"inputs":[{"name":"x","dtype":"float32","shape":[%d,8],"data":[%s]}]}`, n, strings.TrimSuffix(strings.Repeat("0.5,", 8*n), ","))
		predictJSON(t, base, "mlp", body)
	}
	code, _, b := do(t, "GET", base+"/v1/models/mlp?explain=1&guards=1", "", nil)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	var info modelInfo
	if err := json.Unmarshal(b, &info); err != nil {
		t.Fatal(err)
	}
	// examples/mlp.pbtxt declares x as float32[4, 8] and its output not at all.
	if fmt.Sprint(info.InputSpecs, info.OutputSpecs) != "[{x float32 [4 8] []}] [{addmm_1  [] []}]" {
		t.Fatalf("specs %s", b)
	}
	if fmt.Sprint(info.Inputs, info.Outputs) != "[x] [addmm_1]" || info.Stats.Calls != 4 || info.Stats.Hits+info.Stats.Misses != 4 || info.Stats.Hits < 1 ||
		info.CacheEntries < 2 || len(info.RecompileReasons) == 0 || !strings.Contains(info.Guards, "TREE_GUARD_MANAGER") || info.Explain == "" {
		t.Fatalf("info %s", b)
	}
	code, _, b = do(t, "GET", base+"/v1/models", "", nil)
	if code != 200 || !strings.Contains(string(b), `"absdiv"`) {
		t.Fatalf("%d %s", code, b)
	}
	code, _, b = do(t, "GET", base+"/healthz", "", nil)
	if code != 200 {
		t.Fatalf("%d %s", code, b)
	}
	code, h, b := do(t, "GET", base+"/metrics", "", nil)
	if code != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %s", code, b)
	}
	m := parseMetrics(t, string(b))
	for key, want := range map[string]float64{
		`guardjit_calls_total{model="mlp"}`:                    4,
		`guardjit_cache_hits_total{model="mlp"}`:               float64(info.Stats.Hits),
		`guardjit_cache_misses_total{model="mlp"}`:             float64(info.Stats.Misses),
		`guardjit_calls_total{model="absdiv"}`:                 0,
		`guardjit_http_requests_total{model="mlp",code="200"}`: 4,
		`guardjit_predict_seconds_count{model="mlp"}`:          4,
	} {
		if got, ok := m[key]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	for _, key := range []string{`guardjit_compiles_total{model="mlp"}`, `guardjit_compile_seconds_total{model="mlp"}`, `guardjit_guard_lookup_seconds{model="mlp"}`, `guardjit_memory_in_use_bytes`, `guardjit_compiled_modules`,
		`guardjit_entries_loaded_total{model="mlp"}`, `guardjit_compile_cache_kernels_compiled_total`, `guardjit_compile_cache_kernels_loaded_total`, `guardjit_compile_cache_disk_misses_total`, `guardjit_compile_cache_evictions_total`} {
		if _, ok := m[key]; !ok {
			t.Errorf("no %s", key)
		}
	}
	if m[`guardjit_compiles_total{model="mlp"}`] < 2 || m[`guardjit_compile_seconds_total{model="mlp"}`] <= 0 {
		t.Errorf("compiles %v", m)
	}
}

// Two servers on one -cache-dir: the second loads every kernel of the
// attention example from the directory (no compile), says so in its
// metrics and model info, and answers what the first did.
func TestCompileCacheMetrics(t *testing.T) {
	dir := t.TempDir()
	attention := func(c *config) {
		c.models = map[string]string{"attention": examples + "attention.pbtxt"}
		c.cacheDir = &dir
	}
	x := make([]string, 64)
	for i := range x {
		x[i] = strconv.FormatFloat(0.01*float64(i%17)-0.05, 'g', -1, 32)
	}
	body := `{"inputs":[{"name":"x","dtype":"float32","shape":[2,4,8],"data":[` + strings.Join(x, ",") + `]}]}`
	run := func() ([]outputJSON, map[string]float64, modelInfo) {
		_, base := startServer(t, attention)
		outs := predictJSON(t, base, "attention", body)
		_, _, b := do(t, "GET", base+"/metrics", "", nil)
		m := parseMetrics(t, string(b))
		_, _, b = do(t, "GET", base+"/v1/models/attention", "", nil)
		var info modelInfo
		if err := json.Unmarshal(b, &info); err != nil {
			t.Fatal(err)
		}
		return outs, m, info
	}
	want, m, info := run()
	if m["guardjit_compile_cache_kernels_compiled_total"] == 0 || m["guardjit_compile_cache_kernels_loaded_total"] != 0 ||
		m["guardjit_compile_cache_disk_stores_total"] != m["guardjit_compile_cache_kernels_compiled_total"] ||
		m[`guardjit_entries_loaded_total{model="attention"}`] != 0 || info.Stats.EntriesLoaded != 0 {
		t.Fatalf("first server: %v", m)
	}
	got, m, info := run()
	if m["guardjit_compile_cache_kernels_compiled_total"] != 0 || m["guardjit_compile_cache_kernels_loaded_total"] == 0 ||
		m["guardjit_compile_cache_disk_hits_total"] != m["guardjit_compile_cache_kernels_loaded_total"] ||
		m[`guardjit_entries_loaded_total{model="attention"}`] != 1 || info.Stats.EntriesLoaded != 1 {
		t.Fatalf("second server: %v", m)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("outputs from the cache %v, compiled %v", got, want)
	}
}

// The cache flags: one left out stays nil (the library reads the
// environment), one given as "" is "", the key comes from a file.
func TestCacheFlags(t *testing.T) {
	keyFile := t.TempDir() + "/key"
	if err := os.WriteFile(keyFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	cf := addCacheFlags(fs)
	if err := fs.Parse([]string{"-cache-dir=", "-cache-key-file", keyFile, "-max-cache-bytes", "0"}); err != nil {
		t.Fatal(err)
	}
	var cfg config
	if err := cf.apply(fs, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.cacheDir == nil || *cfg.cacheDir != "" || cfg.cacheKey == nil || *cfg.cacheKey != "s3cret" ||
		cfg.remoteCache != nil || cfg.maxCacheBytes == nil || *cfg.maxCacheBytes != 0 {
		t.Fatalf("%+v", cfg)
	}
	fs = flag.NewFlagSet("server", flag.ContinueOnError)
	cf = addCacheFlags(fs)
	if err := fs.Parse([]string{"-cache-key-file", keyFile + ".missing"}); err != nil {
		t.Fatal(err)
	}
	if err := cf.apply(fs, &config{}); err == nil || !strings.Contains(err.Error(), "-cache-key-file") {
		t.Fatalf("a missing key file: %v", err)
	}
}

var metricLine = regexp.MustCompile(`^([a-z_]+(?:\{[^}]*\})?) (\S+)$`)

func parseMetrics(t *testing.T, text string) map[string]float64 {
	m := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "# HELP ") || strings.HasPrefix(line, "# TYPE ") {
			continue
		}
		g := metricLine.FindStringSubmatch(line)
		if g == nil {
			t.Fatalf("not a Prometheus sample line: %q", line)
		}
		v, err := strconv.ParseFloat(g[2], 64)
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		m[g[1]] = v
	}
	return m
}

// Every bad request gets a status and a message, never a crash.
func TestBadRequests(t *testing.T) {
	_, base := startServer(t)
	pred := func(model string) string { return base + "/v1/models/" + model + ":predict" }
	hdr := func(json string) []byte {
		b := make([]byte, 8, 8+len(json))
		binary.LittleEndian.PutUint64(b, uint64(len(json)))
		return append(b, json...)
	}
	x := `{"name":"x","dtype":"float32","shape":[1,8],"data":[1,2,3,4,5,6,7,8]}`
	cases := []struct {
		name, method, url, ctype string
		body                     []byte
		status                   int
		code, msg                string
	}{
		{"unknown model", "POST", pred("nope"), "", []byte(`{}`), 404, "NOT_FOUND", `no model "nope"`},
		{"unknown model info", "GET", base + "/v1/models/nope", "", nil, 404, "NOT_FOUND", "nope"},
		{"unknown verb", "POST", base + "/v1/models/mlp:train", "", nil, 404, "NOT_FOUND", "train"},
		{"unknown route", "GET", base + "/v2", "", nil, 404, "NOT_FOUND", "/v2"},
		{"GET predict", "GET", pred("mlp"), "", nil, 405, "METHOD_NOT_ALLOWED", "POST"},
		{"POST metrics", "POST", base + "/metrics", "", nil, 405, "METHOD_NOT_ALLOWED", "GET"},
		{"malformed JSON", "POST", pred("mlp"), "", []byte(`{"inputs":[`), 400, "INVALID_ARGUMENT", "malformed JSON"},
		{"unknown field", "POST", pred("mlp"), "", []byte(`{"input":[]}`), 400, "INVALID_ARGUMENT", "unknown field"},
		{"unknown dtype", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"complex64","shape":[1],"data":[1]}]}`), 400, "INVALID_ARGUMENT", "complex64"},
		{"too few values", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[1,8],"data":[1,2]}]}`), 400, "INVALID_ARGUMENT", "2 values for shape [1 8]"},
		{"too many values", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[1],"data":[1,2]}]}`), 400, "INVALID_ARGUMENT", "more than the 1 values"},
		{"not a number", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[1],"data":["one"]}]}`), 400, "INVALID_ARGUMENT", `"one" is not a number`},
		{"int out of range", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"int8","shape":[1],"data":[300]}]}`), 400, "INVALID_ARGUMENT", "not a int8"},
		{"not a bool", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"bool","shape":[1],"data":[2]}]}`), 400, "INVALID_ARGUMENT", "not a bool"},
		{"wrong input name", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"y","dtype":"float32","shape":[1],"data":[1]}]}`), 400, "INVALID_ARGUMENT", `no input "y"`},
		{"input twice", "POST", pred("absdiv"), "", []byte(`{"inputs":[{"name":"a","dtype":"float32","shape":[1],"data":[1]},{"name":"a","dtype":"float32","shape":[1],"data":[1]}]}`), 400, "INVALID_ARGUMENT", "twice"},
		{"too many elements", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[100000,8],"data":[]}]}`), 400, "INVALID_ARGUMENT", "limit"},
		// The library's own messages.
		{"wrong input count", "POST", pred("absdiv"), "", []byte(`{"inputs":[{"dtype":"float32","shape":[1],"data":[1]}]}`), 400, "INVALID_ARGUMENT", "input"},
		{"shapes the graph rejects", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[2,3],"data":[1,2,3,4,5,6]}]}`), 400, "INVALID_ARGUMENT", "addmm"},
		{"rank the graph rejects", "POST", pred("catadd"), "", []byte(`{"inputs":[{"dtype":"float32","shape":[2],"data":[1,2]},{"dtype":"float32","shape":[2,2],"data":[1,2,3,4]}]}`), 400, "INVALID_ARGUMENT", "cat"},
		{"negative size", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[-1,8]}]}`), 400, "INVALID_ARGUMENT", "negative"},
		{"element count past int64", "POST", pred("mlp"), "", []byte(`{"inputs":[{"name":"x","dtype":"float32","shape":[4294967296,4294967296]}]}`), 400, "OUT_OF_RANGE", ""},
		// Binary bodies.
		{"binary: empty", "POST", pred("mlp"), binaryType, nil, 400, "INVALID_ARGUMENT", "header length"},
		{"binary: header too long", "POST", pred("mlp"), binaryType, hdr(strings.Repeat(" ", 2<<20)), 400, "INVALID_ARGUMENT", "header of 2097152 bytes"},
		{"binary: huge header length", "POST", pred("mlp"), binaryType, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 400, "INVALID_ARGUMENT", "header of"},
		{"binary: truncated header", "POST", pred("mlp"), binaryType, append(hdr(`{"tensors":[]}`)[:12]), 400, "INVALID_ARGUMENT", "header shorter"},
		{"binary: malformed header", "POST", pred("mlp"), binaryType, hdr(`{"tensors":`), 400, "INVALID_ARGUMENT", "malformed header"},
		{"binary: data in header", "POST", pred("mlp"), binaryType, hdr(`{"tensors":[` + x + `]}`), 400, "INVALID_ARGUMENT", "data in the header"},
		{"binary: short data", "POST", pred("mlp"), binaryType, append(hdr(`{"tensors":[{"name":"x","dtype":"float32","shape":[1,8]}]}`), make([]byte, 31)...), 400, "INVALID_ARGUMENT", "body ends"},
		{"binary: trailing bytes", "POST", pred("mlp"), binaryType, append(hdr(`{"tensors":[{"name":"x","dtype":"float32","shape":[1,8]}]}`), make([]byte, 33)...), 400, "INVALID_ARGUMENT", "after the last"},
		{"body too large", "POST", pred("mlp"), "", bytes.Repeat([]byte(" "), 2<<20), 413, "RESOURCE_EXHAUSTED", "over"},
	}
	for _, c := range cases {
		code, h, b := do(t, c.method, c.url, c.ctype, c.body)
		var e struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(b, &e); err != nil || code != c.status || e.Error.Code != c.code || !strings.Contains(e.Error.Message, c.msg) || e.Error.Message == "" {
			t.Errorf("%s: got %d %s (%v), want %d %s containing %q", c.name, code, b, err, c.status, c.code, c.msg)
		}
		if code == 405 && h.Get("Allow") == "" {
			t.Errorf("%s: 405 without Allow", c.name)
		}
	}
	// Still serving.
	predictJSON(t, base, "mlp", `{"inputs":[`+x+`]}`)
}

// Many goroutines at mixed batch sizes: each new shape compiles once (far
// fewer compiles than requests), and a second pass compiles nothing.
func TestConcurrentMixedBatches(t *testing.T) {
	s, base := startServer(t)
	batches := []int64{1, 2, 4, 8, 16, 3}
	run := func(per int) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < per; i++ {
					n := batches[(g+i)%len(batches)]
					body := encodeRequest(t, namedTensor{"x", gj.NewTensor(gj.Float32, n, 8)})
					resp, err := http.Post(base+"/v1/models/mlp:predict", binaryType, bytes.NewReader(body))
					if err != nil {
						errs <- err
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						errs <- fmt.Errorf("%d %s", resp.StatusCode, b)
						return
					}
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	run(12)
	st, _ := s.models["mlp"].fn.Stats()
	if st.Calls != 96 || st.Compiles > int64(len(batches)) || st.Compiles == 0 {
		t.Fatalf("first pass: %+v", st)
	}
	run(6)
	st2, _ := s.models["mlp"].fn.Stats()
	if st2.Compiles != st.Compiles || st2.Calls != 96+48 {
		t.Fatalf("second pass compiled: %+v then %+v", st, st2)
	}
}

func TestHalfConversions(t *testing.T) {
	for _, c := range []struct {
		f float32
		h uint16
	}{{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {1e6, 0x7c00}, {0.1, 0x2e66}, {5.960464477539063e-08, 0x0001}, {0, 0}} {
		if got := float16Bits(c.f); got != c.h {
			t.Errorf("float16Bits(%g) = %#04x, want %#04x", c.f, got, c.h)
		}
		if c.f != 1e6 && c.f != 0.1 && float16Value(c.h) != c.f {
			t.Errorf("float16Value(%#04x) = %g, want %g", c.h, float16Value(c.h), c.f)
		}
	}
	if bfloat16Bits(1) != 0x3f80 || bfloat16Bits(-3) != 0xc040 {
		t.Error("bfloat16")
	}
}
