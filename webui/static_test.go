package webui_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/agentui/agentui/webui"
)

func TestPage(t *testing.T) {
	page := fstest.MapFS{
		"index.html":           {Data: []byte("<!doctype html><title>chat</title>" + strings.Repeat("<p>x</p>", 100))},
		"assets/app-abc1.js":   {Data: []byte(strings.Repeat("console.log('hello');\n", 200))},
		"assets/logo-abc2.png": {Data: []byte("\x89PNG\r\n\x1a\n")},
	}
	h, err := webui.FileHandler(page)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	get := func(path, enc string, hdr ...string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if enc != "" {
			req.Header.Set("Accept-Encoding", enc)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultTransport.RoundTrip(req) // no transparent decompression
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	index := get("/", "")
	if index.StatusCode != 200 || index.Header.Get("Cache-Control") != "no-cache" || !strings.HasPrefix(index.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(index.Header.Get("Content-Security-Policy"), "default-src 'self'") || index.Header.Get("X-Frame-Options") != "DENY" {
		t.Fatalf("index: %d %v", index.StatusCode, index.Header)
	}
	js := get("/assets/app-abc1.js", "gzip, br")
	if js.Header.Get("Content-Encoding") != "gzip" || !strings.Contains(js.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("asset: %v", js.Header)
	}
	zr, err := gzip.NewReader(js.Body)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(zr); len(b) != 200*len("console.log('hello');\n") {
		t.Fatalf("decompressed %d bytes", len(b))
	}
	if png := get("/assets/logo-abc2.png", "gzip"); png.Header.Get("Content-Encoding") != "" {
		t.Fatal("an image was gzipped")
	}
	if again := get("/assets/app-abc1.js", "gzip", "If-None-Match", js.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d", again.StatusCode)
	}
	if missing := get("/nope.js", ""); missing.StatusCode != 404 {
		t.Fatalf("missing file: %d", missing.StatusCode)
	}
}

// The embedded page is whole: its index names assets that are there, and
// the handler serves them under a prefix too.
func TestEmbeddedPage(t *testing.T) {
	mux := http.NewServeMux()
	mux.Handle("GET /chat/", http.StripPrefix("/chat", webui.Handler()))
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	get := func(path string) (int, string) {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	status, index := get("/chat/")
	if status != 200 || !strings.Contains(index, `<div id="root">`) {
		t.Fatalf("index: %d %.200s", status, index)
	}
	assets := 0
	for _, part := range strings.Split(index, `"`)[1:] {
		if !strings.HasPrefix(part, "./assets/") {
			continue
		}
		assets++
		if status, body := get("/chat/" + strings.TrimPrefix(part, "./")); status != 200 || len(body) == 0 {
			t.Fatalf("%s: %d", part, status)
		}
	}
	if assets < 2 {
		t.Fatalf("the index names %d relative assets: %.400s", assets, index)
	}
}
