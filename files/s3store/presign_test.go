package s3store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
	"github.com/agentui/agentui/files/s3store"
)

// presignFixture serves the file routes over a bucket of a real
// S3-compatible server.
func presignFixture(t *testing.T) (string, *s3store.Store) {
	t.Helper()
	client := gateway(t)
	bucket := "agentui-presign"
	if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	store := s3store.New(client, bucket, "")
	scope := func(r *http.Request) (string, error) {
		if s := r.Header.Get("X-Scope"); s != "" {
			return s, nil
		}
		return "", errors.New("no credentials")
	}
	h, err := files.NewHandler(store, bytes.Repeat([]byte("k"), 32), scope, files.WithMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/files/presign", h.PresignHandler())
	mux.Handle("POST /api/files/finalize", h.FinalizeHandler())
	mux.Handle("GET /api/files/{id}", h.ServeHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL, store
}

func post(t *testing.T, url, scope string, body any) (int, map[string]any) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Scope", scope)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// put uploads body where a presign said, as a browser does.
func put(t *testing.T, up map[string]any, body []byte) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, up["signedUrl"].(string), bytes.NewReader(body))
	for k, v := range up["headers"].(map[string]any) {
		req.Header.Set(k, v.(string))
	}
	req.ContentLength = int64(len(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// A browser uploads straight to the bucket: presign, PUT, finalize. The
// server reads the bytes back (their type is theirs, not the browser's
// word), keeps them under their hash, removes the staged object, and
// answers as an upload does.
func TestPresignedUpload(t *testing.T) {
	base, store := presignFixture(t)
	status, up := post(t, base+"/api/files/presign", "alice", map[string]any{"name": "cat.png", "contentType": "image/png", "size": len(filestest.PNG)})
	if status != http.StatusOK || !strings.HasPrefix(up["signedUrl"].(string), "http") || up["key"] == "" {
		t.Fatalf("presign: %d %v", status, up)
	}
	if code := put(t, up, filestest.PNG); code != http.StatusOK {
		t.Fatalf("the browser's PUT: %d", code)
	}
	status, got := post(t, base+"/api/files/finalize", "alice", map[string]any{"key": up["key"], "name": "cat.png", "contentType": "image/png"})
	if status != http.StatusCreated || got["mediaType"] != "image/png" || !files.ValidID(got["id"].(string)) {
		t.Fatalf("finalize: %d %v", status, got)
	}
	req, _ := http.NewRequest(http.MethodGet, base+got["url"].(string), nil)
	req.Header.Set("X-Scope", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(b, filestest.PNG) {
		t.Fatalf("reading it: %d", resp.StatusCode)
	}
	if _, err := store.OpenStaged(context.Background(), "alice", up["key"].(string)); !errors.Is(err, files.ErrNotFound) {
		t.Fatalf("the staged object stayed: %v", err)
	}
	// Finalized once: the key names nothing now.
	if status, _ := post(t, base+"/api/files/finalize", "alice", map[string]any{"key": up["key"], "contentType": "image/png"}); status != http.StatusNotFound {
		t.Fatalf("a second finalize: %d", status)
	}
}

// Each wrong turn of the presigned flow is a clear 4xx with nothing kept:
// too large or a type not accepted at presign; a type lie, a presign
// never uploaded to, another scope's key at finalize.
func TestPresignedUploadRefusals(t *testing.T) {
	base, store := presignFixture(t)
	for name, c := range map[string]struct {
		body   map[string]any
		status int
	}{
		"too large":      {map[string]any{"name": "big.png", "contentType": "image/png", "size": 2 << 20}, http.StatusRequestEntityTooLarge},
		"a type refused": {map[string]any{"name": "page.html", "contentType": "text/html", "size": 10}, http.StatusUnsupportedMediaType},
		"no size":        {map[string]any{"name": "x.png", "contentType": "image/png"}, http.StatusBadRequest},
	} {
		if status, out := post(t, base+"/api/files/presign", "alice", c.body); status != c.status || out["error"] == nil {
			t.Errorf("%s: %d %v, want %d", name, status, out, c.status)
		}
	}
	presign := func(contentType string, size int) map[string]any {
		t.Helper()
		_, up := post(t, base+"/api/files/presign", "alice", map[string]any{"name": "f", "contentType": contentType, "size": size})
		return up
	}
	script := []byte("alert(document.cookie)")
	lie := presign("image/png", len(script))
	put(t, lie, script)
	if status, out := post(t, base+"/api/files/finalize", "alice", map[string]any{"key": lie["key"], "contentType": "image/png"}); status != http.StatusUnsupportedMediaType {
		t.Errorf("a type lie: %d %v", status, out)
	}
	never := presign("image/png", len(filestest.PNG))
	if status, _ := post(t, base+"/api/files/finalize", "alice", map[string]any{"key": never["key"], "contentType": "image/png"}); status != http.StatusNotFound {
		t.Errorf("a presign never uploaded to: %d", status)
	}
	theirs := presign("image/png", len(filestest.PNG))
	put(t, theirs, filestest.PNG)
	if status, _ := post(t, base+"/api/files/finalize", "bob", map[string]any{"key": theirs["key"], "contentType": "image/png"}); status != http.StatusNotFound {
		t.Errorf("another scope's key: %d", status)
	}
	for _, scope := range []string{"alice", "bob"} {
		if n, err := store.Count(context.Background(), scope); err != nil || n != 0 {
			t.Errorf("%s keeps %d files after refusals (%v)", scope, n, err)
		}
	}
}
