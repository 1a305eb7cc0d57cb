// Command server is an HTTP inference server over guardjit graphs (standard
// library only). See README.md for the API and wire formats.
//
//	go run ./examples/server -model mlp=../../examples/mlp.pbtxt -addr 127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	gj "guardjit.dev/guardjit"
)

// modelFlags collects repeated -model name=path flags.
type modelFlags map[string]string

func (m modelFlags) String() string { return fmt.Sprint(map[string]string(m)) }

func (m modelFlags) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" || strings.ContainsAny(name, "/:") {
		return fmt.Errorf("want name=path.pbtxt (name without '/' or ':'), got %q", v)
	}
	if _, dup := m[name]; dup {
		return fmt.Errorf("model %q given twice", name)
	}
	m[name] = path
	return nil
}

// cacheFlags are the compile cache's flags (C API 0.11).
type cacheFlags struct {
	dir, keyFile, remote *string
	maxBytes             *int64
}

func addCacheFlags(fs *flag.FlagSet) *cacheFlags {
	return &cacheFlags{
		dir:      fs.String("cache-dir", "", "compile cache directory, shared by restarts and replicas (unset: GJ_CACHE_DIR; \"\": none)"),
		keyFile:  fs.String("cache-key-file", "", "file holding the key that signs compile cache records, trailing newline dropped (unset: GJ_CACHE_KEY; an empty file: none)"),
		remote:   fs.String("remote-cache", "", "Redis the compile cache records are shared through, redis://[:password@]host[:port][/db] (unset: GJ_REMOTE_CACHE; \"\": none)"),
		maxBytes: fs.Int64("max-cache-bytes", 1<<30, "compile cache directory size limit in bytes (0: unbounded)"),
	}
}

// apply sets the cache flags fs was given into cfg (after fs.Parse). A flag
// left out leaves its option unset, so the library reads the environment
// (GJ_CACHE_DIR, GJ_CACHE_KEY, GJ_REMOTE_CACHE); given, even as "", it wins.
func (c *cacheFlags) apply(fs *flag.FlagSet, cfg *config) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "cache-dir":
			cfg.cacheDir = c.dir
		case "remote-cache":
			cfg.remoteCache = c.remote
		case "max-cache-bytes":
			cfg.maxCacheBytes = c.maxBytes
		case "cache-key-file":
			// A file rather than the key itself: a command line is visible
			// to every user of the host.
			key, e := os.ReadFile(*c.keyFile)
			if e != nil {
				err = fmt.Errorf("-cache-key-file: %w", e)
				return
			}
			k := strings.TrimRight(string(key), "\r\n")
			cfg.cacheKey = &k
		}
	})
	return err
}

func main() {
	log.SetFlags(log.LstdFlags)
	log.SetPrefix("server: ")
	models := modelFlags{}
	flag.Var(models, "model", "a model to serve, name=path.pbtxt (repeatable)")
	addr := flag.String("addr", "127.0.0.1:8080", "listen address (port 0 picks a free one; the address is printed)")
	threads := flag.Int("threads", 0, "threads compiled programs run on (0: GJ_NUM_THREADS, else one per core)")
	backend := flag.String("backend", "default", "default, eager or jit")
	dynamic := flag.String("dynamic", "auto", "auto, static or dynamic shapes")
	limit := flag.Int("recompile-limit", 0, "cache entries per model (0: the library's default, 8)")
	maxBody := flag.Int64("max-body", 64<<20, "largest request body in bytes")
	maxElements := flag.Int64("max-elements", 1<<24, "largest input tensor in elements")
	timeout := flag.Duration("timeout", 0, "per-request compute limit (0: none)")
	cache := addCacheFlags(flag.CommandLine)
	flag.Parse()

	cfg := config{models: models, threads: *threads, recompileLimit: *limit,
		maxBodyBytes: *maxBody, maxElements: *maxElements, timeout: *timeout}
	if err := cache.apply(flag.CommandLine, &cfg); err != nil {
		log.Fatal(err)
	}
	switch *backend {
	case "default":
	case "eager":
		cfg.backend = gj.BackendEager
	case "jit":
		cfg.backend = gj.BackendCPUJIT
	default:
		log.Fatalf("-backend %q: want default, eager or jit", *backend)
	}
	switch *dynamic {
	case "auto":
	case "static":
		cfg.dynamic = gj.DynamicStatic
	case "dynamic":
		cfg.dynamic = gj.DynamicDynamic
	default:
		log.Fatalf("-dynamic %q: want auto, static or dynamic", *dynamic)
	}

	s, err := newServer(cfg)
	if err != nil {
		log.Fatal(err)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening on %s (guardjit %s, models %s)\n", ln.Addr(), gj.Version(), strings.Join(s.names, ", "))

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		log.Print(err)
	case sig := <-stop:
		log.Printf("%v: shutting down", sig)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		hs.Shutdown(ctx)
		cancel()
	}
	if err := s.Close(); err != nil {
		log.Print(err)
	}
}
