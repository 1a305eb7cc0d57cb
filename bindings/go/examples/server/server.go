package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gj "guardjit.dev/guardjit"
)

// config is what main's flags set.
type config struct {
	models         map[string]string // name -> graph file
	threads        int
	backend        gj.Backend
	dynamic        gj.DynamicMode
	recompileLimit int // 0: the library's default
	maxBodyBytes   int64
	maxElements    int64
	timeout        time.Duration // per predict call; 0: none
	// The persistent compile cache (C API 0.11). nil leaves the option
	// unset, so the library reads GJ_CACHE_DIR, GJ_CACHE_KEY and
	// GJ_REMOTE_CACHE from the environment; "" turns it off.
	cacheDir, cacheKey, remoteCache *string
	maxCacheBytes                   *int64 // nil: the library's default, 1 GiB
}

// model is one loaded graph and its serving counters.
type model struct {
	name, path string
	fn         *gj.Function
	// What the graph declares of its inputs and outputs.
	inputs, outputs []tensorSpecJSON
	requests        sync.Map     // HTTP status code (int) -> *atomic.Int64
	seconds         atomic.Int64 // predict latency sum, nanoseconds
	count           atomic.Int64 // predict requests timed
}

func (m *model) countStatus(code int) {
	v, _ := m.requests.LoadOrStore(code, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// server serves the models of one guardjit context.
type server struct {
	cfg    config
	ctx    *gj.Context
	models map[string]*model
	names  []string // sorted
	lim    limits
}

func newServer(cfg config) (*server, error) {
	if !littleEndian {
		return nil, errors.New("the wire formats assume a little-endian host")
	}
	if len(cfg.models) == 0 {
		return nil, errors.New("no models: pass -model name=path.pbtxt")
	}
	opts := []gj.ContextOption{gj.WithBackend(cfg.backend)}
	if cfg.threads > 0 {
		opts = append(opts, gj.WithThreads(cfg.threads))
	}
	if cfg.cacheDir != nil {
		opts = append(opts, gj.WithCacheDir(*cfg.cacheDir))
	}
	if cfg.cacheKey != nil {
		opts = append(opts, gj.WithCacheKey(*cfg.cacheKey))
	}
	if cfg.remoteCache != nil {
		opts = append(opts, gj.WithRemoteCache(*cfg.remoteCache))
	}
	if cfg.maxCacheBytes != nil {
		opts = append(opts, gj.WithMaxCacheBytes(*cfg.maxCacheBytes))
	}
	c, err := gj.NewContext(opts...)
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, ctx: c, models: map[string]*model{},
		lim: limits{maxElements: cfg.maxElements, maxHeader: 1 << 20}}
	for name, path := range cfg.models {
		if err := s.load(name, path); err != nil {
			s.Close()
			return nil, fmt.Errorf("model %q: %w", name, err)
		}
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	return s, nil
}

func (s *server) load(name, path string) error {
	g, err := s.ctx.GraphFromFile(path)
	if err != nil {
		return err
	}
	defer g.Close()
	opts := []gj.FunctionOption{gj.WithName(name), gj.WithDynamic(s.cfg.dynamic)}
	if s.cfg.recompileLimit > 0 {
		opts = append(opts, gj.WithRecompileLimit(s.cfg.recompileLimit))
	}
	fn, err := s.ctx.NewFunction(g, opts...)
	if err != nil {
		return err
	}
	s.models[name] = &model{name: name, path: path, fn: fn,
		inputs: tensorSpecs(g.Inputs()), outputs: tensorSpecs(g.Outputs())}
	return nil
}

// Close releases every function and the context.
func (s *server) Close() error {
	for _, m := range s.models {
		m.fn.Close()
	}
	return s.ctx.Close()
}

// ServeHTTP routes:
//
//	POST /v1/models/{name}:predict
//	GET  /v1/models/{name}
//	GET  /v1/models
//	GET  /metrics
//	GET  /healthz
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() {
		if p := recover(); p != nil {
			log.Printf("panic serving %s %s: %v", r.Method, r.URL.Path, p)
			writeError(w, http.StatusInternalServerError, "INTERNAL", fmt.Sprint("internal error: ", p))
		}
	}()
	path := r.URL.Path
	switch {
	case path == "/healthz":
		if allow(w, r, http.MethodGet) {
			io.WriteString(w, "ok\n")
		}
	case path == "/metrics":
		if allow(w, r, http.MethodGet) {
			s.serveMetrics(w)
		}
	case path == "/v1/models":
		if allow(w, r, http.MethodGet) {
			writeJSON(w, http.StatusOK, map[string]any{"models": s.names})
		}
	case strings.HasPrefix(path, "/v1/models/"):
		rest := strings.TrimPrefix(path, "/v1/models/")
		name, verb, hasVerb := strings.Cut(rest, ":")
		m, ok := s.models[name]
		if !ok {
			writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no model %q (serving %s)", name, strings.Join(s.names, ", ")))
			return
		}
		switch {
		case !hasVerb:
			if allow(w, r, http.MethodGet) {
				s.serveModel(w, r, m)
			}
		case verb == "predict":
			if allow(w, r, http.MethodPost) {
				s.servePredict(w, r, m)
			}
		default:
			writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no method %q (only :predict)", verb))
		}
	default:
		writeError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no route %s", path))
	}
}

func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", fmt.Sprintf("%s needs %s, not %s", r.URL.Path, method, r.Method))
	return false
}

const binaryType = "application/octet-stream"

func (s *server) servePredict(w http.ResponseWriter, r *http.Request, m *model) {
	start := time.Now()
	status := s.predict(w, r, m)
	m.countStatus(status)
	m.seconds.Add(int64(time.Since(start)))
	m.count.Add(1)
}

// predict answers one request and returns the HTTP status it wrote.
func (s *server) predict(w http.ResponseWriter, r *http.Request, m *model) int {
	body := http.MaxBytesReader(w, r.Body, s.cfg.maxBodyBytes)
	binaryIn := mediaType(r.Header.Get("Content-Type")) == binaryType
	binaryOut := binaryIn
	switch mediaType(r.Header.Get("Accept")) {
	case binaryType:
		binaryOut = true
	case "application/json":
		binaryOut = false
	}

	var inputs []namedTensor
	var err error
	if binaryIn {
		inputs, err = decodeBinary(body, s.lim)
	} else {
		var b []byte
		if b, err = io.ReadAll(body); err == nil {
			inputs, err = decodeJSON(b, s.lim)
		}
	}
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) || (err != nil && strings.Contains(err.Error(), "request body too large")) {
		return writeError(w, http.StatusRequestEntityTooLarge, "RESOURCE_EXHAUSTED", fmt.Sprintf("request body over %d bytes", s.cfg.maxBodyBytes))
	}
	if err != nil {
		return writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
	}
	ordered, err := arrange(m.fn.InputNames(), inputs)
	if err != nil {
		return writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
	}

	ctx := r.Context()
	if s.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.cfg.timeout)
		defer cancel()
	}
	outs, err := m.fn.Call(ctx, ordered)
	if err != nil {
		var e *gj.Error
		if errors.As(err, &e) {
			return writeError(w, statusOf(e.Code()), e.Code().String(), e.Message())
		}
		return writeError(w, http.StatusInternalServerError, "INTERNAL", err.Error())
	}
	named := make([]namedTensor, len(outs))
	for i, name := range m.fn.OutputNames() {
		named[i] = namedTensor{name, outs[i]}
	}
	if binaryOut {
		w.Header().Set("Content-Type", binaryType)
		w.WriteHeader(http.StatusOK)
		encodeBinary(w, named)
	} else {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write(encodeJSON(m.name, named))
	}
	return http.StatusOK
}

// arrange orders the request's tensors as the graph's inputs: by name, or
// by position when no tensor is named.
func arrange(names []string, in []namedTensor) ([]gj.Tensor, error) {
	out := make([]gj.Tensor, len(in))
	anyNamed := false
	for _, t := range in {
		anyNamed = anyNamed || t.Name != ""
	}
	if !anyNamed {
		for i, t := range in {
			out[i] = t.Tensor
		}
		return out, nil // a wrong count gets the library's message
	}
	if len(in) != len(names) {
		return nil, fmt.Errorf("%d inputs given, the model takes %d (%s)", len(in), len(names), strings.Join(names, ", "))
	}
	index := map[string]int{}
	for i, n := range names {
		index[n] = i
	}
	seen := make([]bool, len(names))
	for _, t := range in {
		i, ok := index[t.Name]
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("name every input or none")
		case !ok:
			return nil, fmt.Errorf("the model has no input %q (inputs: %s)", t.Name, strings.Join(names, ", "))
		case seen[i]:
			return nil, fmt.Errorf("input %q given twice", t.Name)
		}
		seen[i] = true
		out[i] = t.Tensor
	}
	return out, nil
}

// statusOf maps a library code to an HTTP status: what the request got
// wrong is 400.
func statusOf(c gj.Code) int {
	switch c {
	case gj.CodeInvalidArgument, gj.CodeOutOfRange, gj.CodeUnimplemented, gj.CodeFailedPrecondition, gj.CodeNotFound:
		return http.StatusBadRequest
	case gj.CodeCancelled:
		return 499 // client closed request (nginx's convention)
	case gj.CodeDeadlineExceeded:
		return http.StatusGatewayTimeout
	case gj.CodeResourceExhausted, gj.CodeUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

func mediaType(h string) string {
	mt, _, _ := strings.Cut(h, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// tensorSpecJSON is what a graph declares of an input or output: dtype ""
// where not declared, shape null where the rank is not, -1 for a dynamic
// dim, whose symbol ("batch", or "") is in dim_symbols.
type tensorSpecJSON struct {
	Name       string   `json:"name"`
	DType      string   `json:"dtype"`
	Shape      []int64  `json:"shape"`
	DimSymbols []string `json:"dim_symbols,omitempty"`
}

func tensorSpecs(infos []gj.TensorInfo) []tensorSpecJSON {
	out := make([]tensorSpecJSON, len(infos))
	for i, t := range infos {
		out[i].Name = t.Name
		if t.DType != gj.UnknownDType {
			out[i].DType = t.DType.String()
		}
		if t.Rank < 0 {
			continue
		}
		out[i].Shape = []int64{}
		dynamic := false
		for _, d := range t.Dims {
			out[i].Shape = append(out[i].Shape, d.Size)
			out[i].DimSymbols = append(out[i].DimSymbols, d.Symbol)
			dynamic = dynamic || d.Size < 0
		}
		if !dynamic {
			out[i].DimSymbols = nil
		}
	}
	return out
}

type modelInfo struct {
	Name             string           `json:"name"`
	Path             string           `json:"path"`
	Inputs           []string         `json:"inputs"`
	Outputs          []string         `json:"outputs"`
	InputSpecs       []tensorSpecJSON `json:"input_specs"`
	OutputSpecs      []tensorSpecJSON `json:"output_specs"`
	CacheEntries     int64            `json:"cache_entries"`
	Stats            statsJSON        `json:"stats"`
	RecompileReasons []string         `json:"recompile_reasons"`
	Explain          string           `json:"explain,omitempty"`
	Guards           string           `json:"guards,omitempty"`
}

type statsJSON struct {
	Calls          int64   `json:"calls"`
	Hits           int64   `json:"hits"`
	Misses         int64   `json:"misses"`
	Compiles       int64   `json:"compiles"`
	Recompiles     int64   `json:"recompiles"`
	FallbackCalls  int64   `json:"fallback_calls"`
	CacheEntries   int64   `json:"cache_entries"`
	CompileMsTotal float64 `json:"compile_ms_total"`
	GuardNsMean    float64 `json:"guard_ns_mean"`
	EntriesLoaded  int64   `json:"entries_loaded"` // from the compile cache
}

// serveModel: inputs, outputs, cache entries, stats and recompile reasons;
// ?explain=1 adds Explain's text, ?guards=1 the guard dump.
func (s *server) serveModel(w http.ResponseWriter, r *http.Request, m *model) {
	st, err := m.fn.Stats()
	if err != nil {
		writeError(w, http.StatusInternalServerError, gj.CodeOf(err).String(), err.Error())
		return
	}
	explain, err := m.fn.Explain()
	if err != nil {
		writeError(w, http.StatusInternalServerError, gj.CodeOf(err).String(), err.Error())
		return
	}
	info := modelInfo{
		Name: m.name, Path: m.path, Inputs: m.fn.InputNames(), Outputs: m.fn.OutputNames(),
		InputSpecs: m.inputs, OutputSpecs: m.outputs,
		CacheEntries: st.CacheEntries,
		Stats: statsJSON{st.Calls, st.Hits, st.Misses, st.Compiles, st.Recompiles, st.FallbackCalls, st.CacheEntries,
			float64(st.CompileTime) / float64(time.Millisecond), float64(st.GuardLookup), st.EntriesLoaded},
		RecompileReasons: gj.ParseRecompileReasons(explain),
	}
	if info.RecompileReasons == nil {
		info.RecompileReasons = []string{}
	}
	if r.URL.Query().Get("explain") == "1" {
		info.Explain = explain
	}
	if r.URL.Query().Get("guards") == "1" {
		if info.Guards, err = m.fn.DumpGuards(); err != nil {
			writeError(w, http.StatusInternalServerError, gj.CodeOf(err).String(), err.Error())
			return
		}
	}
	writeJSON(w, http.StatusOK, info)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":{"code":"INTERNAL","message":"encoding the response failed"}}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError answers {"error":{"code":..,"message":..}} and returns status.
func writeError(w http.ResponseWriter, status int, code, msg string) int {
	type errBody struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	writeJSON(w, status, map[string]errBody{"error": {code, msg}})
	return status
}
