// Command loadtest drives a running inference server (examples/server) from
// many goroutines at mixed batch sizes over loopback, then reports
// throughput, latency percentiles and, from /metrics, how many compiles the
// run caused: each new shape should compile once, and a second pass over
// the same shapes should compile nothing.
//
//	go run ./examples/server/loadtest -addr 127.0.0.1:8080 -model mlp -input x=float32[B,8]
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("loadtest: ")
	addr := flag.String("addr", "127.0.0.1:8080", "server address (loopback)")
	model := flag.String("model", "mlp", "model to call")
	input := flag.String("input", "x=float32[B,8]", "NAME=float32[d0,d1,...] per input, separated by ;, where a dim B is the batch")
	batchList := flag.String("batches", "1,2,4,8,16,32", "batch sizes to mix")
	requests := flag.Int("requests", 2000, "requests in the main pass")
	concurrency := flag.Int("concurrency", 16, "goroutines sending requests")
	format := flag.String("format", "binary", "binary or json")
	flag.Parse()

	host := strings.SplitN(strings.TrimPrefix(*addr, "http://"), ":", 2)[0]
	if host != "127.0.0.1" && host != "localhost" && host != "[::1]" {
		log.Fatalf("-addr %s: loopback only", *addr)
	}
	base := "http://" + strings.TrimPrefix(*addr, "http://")
	var batches []int
	for _, s := range strings.Split(*batchList, ",") {
		b, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || b < 0 {
			log.Fatalf("-batches: %q", s)
		}
		batches = append(batches, b)
	}
	specs, err := parseInputs(*input)
	if err != nil {
		log.Fatal(err)
	}
	bodies := map[int][]byte{}
	for _, b := range batches {
		bodies[b] = makeBody(specs, b, *format == "json")
	}
	ctype := "application/octet-stream"
	if *format == "json" {
		ctype = "application/json"
	}
	url := base + "/v1/models/" + *model + ":predict"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *concurrency}, Timeout: time.Minute}

	before := scrape(client, base, *model)
	main := run(client, url, ctype, bodies, batches, *requests, *concurrency)
	after := scrape(client, base, *model)
	again := run(client, url, ctype, bodies, batches, *requests/4, *concurrency)
	final := scrape(client, base, *model)

	main.report(fmt.Sprintf("main pass (%d requests, %d goroutines, batches %v, %s)", *requests, *concurrency, batches, *format))
	again.report("second pass over the same shapes")
	compiled := after["compiles"] - before["compiles"]
	recompiled := final["compiles"] - after["compiles"]
	fmt.Printf("compiles: %v in the main pass for %d distinct batch sizes; %v in the second pass\n", compiled, len(batches), recompiled)
	fmt.Printf("cache: %v entries; calls %v, hits %v, misses %v; compile time %.1f ms in all\n",
		final["entries"], final["calls"], final["hits"], final["misses"], final["compile_seconds"]*1000)
	ok := main.errors == 0 && again.errors == 0 && compiled <= float64(len(batches)) && recompiled == 0
	if !ok {
		fmt.Println("FAIL: errors, more compiles than shapes, or compiles on known shapes")
		os.Exit(1)
	}
	fmt.Println("PASS")
}

type inputSpec struct {
	name, dtype string
	dims        []string
}

func parseInputs(s string) ([]inputSpec, error) {
	var out []inputSpec
	for _, part := range strings.Split(s, ";") {
		name, rest, ok := strings.Cut(part, "=")
		open, close := strings.IndexByte(rest, '['), strings.IndexByte(rest, ']')
		if !ok || open < 0 || close < open {
			return nil, fmt.Errorf("-input %q: want NAME=float32[B,8]", part)
		}
		if rest[:open] != "float32" {
			return nil, fmt.Errorf("-input %q: only float32 inputs", part)
		}
		out = append(out, inputSpec{name, rest[:open], strings.Split(rest[open+1:close], ",")})
	}
	return out, nil
}

// makeBody is one request with every input at batch b, random values.
func makeBody(specs []inputSpec, b int, asJSON bool) []byte {
	type th struct {
		Name  string    `json:"name"`
		DType string    `json:"dtype"`
		Shape []int64   `json:"shape"`
		Data  []float32 `json:"data,omitempty"`
	}
	rng := rand.New(rand.NewSource(int64(b)))
	var hs []th
	var data bytes.Buffer
	for _, s := range specs {
		h := th{Name: s.name, DType: s.dtype}
		n := int64(1)
		for _, d := range s.dims {
			v := int64(b)
			if d != "B" {
				v, _ = strconv.ParseInt(d, 10, 64)
			}
			h.Shape = append(h.Shape, v)
			n *= v
		}
		vals := make([]float32, n)
		for i := range vals {
			vals[i] = rng.Float32()*2 - 1
		}
		if asJSON {
			h.Data = vals
		} else {
			binary.Write(&data, binary.LittleEndian, vals)
		}
		hs = append(hs, h)
	}
	if asJSON {
		b, _ := json.Marshal(map[string]any{"inputs": hs})
		return b
	}
	hb, _ := json.Marshal(map[string]any{"tensors": hs})
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hb)))
	return append(append(out, hb...), data.Bytes()...)
}

type result struct {
	latencies []time.Duration
	errors    int
	firstErr  string
	elapsed   time.Duration
	rows      int
}

func run(client *http.Client, url, ctype string, bodies map[int][]byte, batches []int, n, conc int) result {
	var mu sync.Mutex
	res := result{}
	next := make(chan int)
	go func() {
		for i := 0; i < n; i++ {
			next <- batches[i%len(batches)]
		}
		close(next)
	}()
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < conc; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range next {
				t0 := time.Now()
				resp, err := client.Post(url, ctype, bytes.NewReader(bodies[b]))
				var msg string
				if err == nil {
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						msg = fmt.Sprintf("%d %s", resp.StatusCode, body)
					}
				} else {
					msg = err.Error()
				}
				d := time.Since(t0)
				mu.Lock()
				res.latencies = append(res.latencies, d)
				res.rows += b
				if msg != "" {
					res.errors++
					if res.firstErr == "" {
						res.firstErr = msg
					}
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}

func (r result) report(title string) {
	sort.Slice(r.latencies, func(i, j int) bool { return r.latencies[i] < r.latencies[j] })
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[int(p*float64(len(r.latencies)-1)+0.5)]
	}
	n := len(r.latencies)
	fmt.Printf("%s: %d requests in %v, %d errors\n", title, n, r.elapsed.Round(time.Millisecond), r.errors)
	if r.firstErr != "" {
		fmt.Printf("  first error: %s\n", r.firstErr)
	}
	fmt.Printf("  throughput %.0f req/s (%.0f rows/s); latency p50 %v p90 %v p99 %v max %v\n",
		float64(n)/r.elapsed.Seconds(), float64(r.rows)/r.elapsed.Seconds(),
		pct(0.50).Round(time.Microsecond), pct(0.90).Round(time.Microsecond), pct(0.99).Round(time.Microsecond), pct(1).Round(time.Microsecond))
}

// scrape reads the model's guardjit_* samples from /metrics.
func scrape(client *http.Client, base, model string) map[string]float64 {
	resp, err := client.Get(base + "/metrics")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	names := map[string]string{
		"guardjit_calls_total": "calls", "guardjit_cache_hits_total": "hits", "guardjit_cache_misses_total": "misses",
		"guardjit_compiles_total": "compiles", "guardjit_cache_entries": "entries", "guardjit_compile_seconds_total": "compile_seconds",
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	label := `{model="` + model + `"} `
	for sc.Scan() {
		line := sc.Text()
		metric, value, ok := strings.Cut(line, label)
		if !ok {
			continue
		}
		if key, ok := names[metric]; ok {
			out[key], _ = strconv.ParseFloat(value, 64)
		}
	}
	return out
}
