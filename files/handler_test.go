package files_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
)

type fixture struct {
	t     *testing.T
	store *files.Dir
	url   string
	now   time.Time
}

func newFixture(t *testing.T, opts ...files.Option) *fixture {
	t.Helper()
	d, err := files.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, store: d, now: time.Unix(1_800_000_000, 0)}
	scope := func(r *http.Request) (string, error) {
		if s := r.Header.Get("X-Scope"); s != "" {
			return s, nil
		}
		return "", errors.New("no credentials")
	}
	opts = append([]files.Option{files.WithClock(func() time.Time { return f.now })}, opts...)
	h, err := files.NewHandler(d, bytes.Repeat([]byte("k"), 32), scope, opts...)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("POST /api/files", h.UploadHandler())
	mux.Handle("GET /api/files/{id}", h.ServeHandler())
	mux.Handle("DELETE /api/files/{id}", h.DeleteHandler())
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// upload posts a form with one "file" part of type declared.
func (f *fixture) upload(scope, name, declared string, body []byte) (int, files.Uploaded, string) {
	f.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	hdr := textproto.MIMEHeader{}
	hdr.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
	if declared != "" {
		hdr.Set("Content-Type", declared)
	}
	pw, _ := mw.CreatePart(hdr)
	_, _ = pw.Write(body)
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, f.url+"/api/files", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if scope != "" {
		req.Header.Set("X-Scope", scope)
	}
	return f.do(req)
}

func (f *fixture) do(req *http.Request) (int, files.Uploaded, string) {
	f.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var up files.Uploaded
	_ = json.Unmarshal(raw, &up)
	return resp.StatusCode, up, string(raw)
}

func (f *fixture) get(scope, url string) (*http.Response, []byte) {
	f.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.url+url, nil)
	req.Header.Set("X-Scope", scope)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func (f *fixture) count(scope string) int {
	n, err := f.store.Count(context.Background(), scope)
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// An upload is stored under its hash, typed by its bytes, and read back
// through the URL it answers with, by its scope.
func TestUploadAndRead(t *testing.T) {
	f := newFixture(t)
	status, up, raw := f.upload("alice", "cat.png", "image/png", filestest.PNG)
	if status != http.StatusCreated || up.MediaType != "image/png" || up.Size != int64(len(filestest.PNG)) || up.Name != "cat.png" || !strings.HasPrefix(up.URL, "/api/files/"+up.ID+"?") {
		t.Fatalf("upload: %d %s", status, raw)
	}
	resp, b := f.get("alice", up.URL)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(b, filestest.PNG) {
		t.Fatalf("read: %d %q", resp.StatusCode, b)
	}
	for k, want := range map[string]string{"Content-Type": "image/png", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": "sandbox; default-src 'none'"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	// A client that says nothing of the type is read by the bytes too.
	if status, up, _ := f.upload("alice", "notes", "", []byte("plain words")); status != http.StatusCreated || up.MediaType != "text/plain" {
		t.Fatalf("an upload without a type: %d %+v", status, up)
	}
}

// Every refusal is a short JSON error with nothing stored: too large, a
// type lie, a type not accepted, too many files, not a form, no scope.
func TestUploadRefusals(t *testing.T) {
	f := newFixture(t, files.WithMaxBytes(1000), files.WithMaxFiles(2))
	script := []byte("<script>alert(1)</script>")
	for _, c := range []struct {
		name, declared string
		body           []byte
		status         int
	}{
		{"big.png", "image/png", append(bytes.Clone(filestest.PNG), make([]byte, 1000)...), http.StatusRequestEntityTooLarge},
		{"cat.png", "image/png", []byte("alert(document.cookie)"), http.StatusUnsupportedMediaType}, // a script named .png
		{"page.html", "text/html", script, http.StatusUnsupportedMediaType},
		{"page.png", "image/png", script, http.StatusUnsupportedMediaType},
	} {
		status, _, raw := f.upload("alice", c.name, c.declared, c.body)
		if status != c.status || !strings.HasPrefix(raw, `{"error":`) {
			t.Errorf("%s: %d %s, want %d", c.name, status, raw, c.status)
		}
	}
	if n := f.count("alice"); n != 0 {
		t.Fatalf("refused uploads left %d files", n)
	}
	f.upload("alice", "a.txt", "text/plain", []byte("one"))
	f.upload("alice", "b.txt", "text/plain", []byte("two"))
	if status, _, raw := f.upload("alice", "c.txt", "text/plain", []byte("three")); status != http.StatusConflict || !strings.HasPrefix(raw, `{"error":`) {
		t.Fatalf("one file too many: %d %s", status, raw)
	}
	if status, _, _ := f.upload("", "a.txt", "text/plain", []byte("one")); status != http.StatusUnauthorized {
		t.Fatalf("no scope: %d", status)
	}
	req, _ := http.NewRequest(http.MethodPost, f.url+"/api/files", strings.NewReader("just bytes"))
	req.Header.Set("X-Scope", "alice")
	req.Header.Set("Content-Type", "image/png")
	if status, _, raw := f.do(req); status != http.StatusBadRequest || !strings.HasPrefix(raw, `{"error":`) {
		t.Fatalf("not a form: %d %s", status, raw)
	}
}

// A URL reads its file for its scope until it expires: another scope's,
// a forged, an expired, a deleted file's URL read nothing.
func TestSignedURLs(t *testing.T) {
	f := newFixture(t, files.WithURLTTL(time.Minute))
	_, up, _ := f.upload("alice", "cat.png", "image/png", filestest.PNG)
	forged := strings.Replace(up.URL, "sig=", "sig=A", 1)
	later := strings.Replace(up.URL, "exp=", "exp=9", 1)
	for name, c := range map[string]struct {
		scope, url string
		status     int
	}{
		"another scope's":          {"bob", up.URL, http.StatusForbidden},
		"a forged signature":       {"alice", forged, http.StatusForbidden},
		"an expiry moved later":    {"alice", later, http.StatusForbidden},
		"no signature":             {"alice", "/api/files/" + up.ID, http.StatusForbidden},
		"a path that is not an id": {"alice", "/api/files/..%2Fx?exp=1&sig=x", http.StatusForbidden},
	} {
		resp, b := f.get(c.scope, c.url)
		if resp.StatusCode != c.status || !bytes.HasPrefix(b, []byte(`{"error":`)) {
			t.Errorf("%s: %d %s, want %d", name, resp.StatusCode, b, c.status)
		}
	}
	f.now = f.now.Add(2 * time.Minute)
	if resp, _ := f.get("alice", up.URL); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("an expired URL: %d", resp.StatusCode)
	}
	f.now = f.now.Add(-2 * time.Minute)
	req, _ := http.NewRequest(http.MethodDelete, f.url+"/api/files/"+up.ID, nil)
	req.Header.Set("X-Scope", "alice")
	if status, _, _ := f.do(req); status != http.StatusNoContent {
		t.Fatalf("delete: %d", status)
	}
	if resp, _ := f.get("alice", up.URL); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("a deleted file's URL: %d", resp.StatusCode)
	}
}

// A handler's bounds are checked at construction.
func TestHandlerRefusesBadConfiguration(t *testing.T) {
	d, _ := files.NewDir(t.TempDir())
	scope := func(*http.Request) (string, error) { return "s", nil }
	for name, make := range map[string]func() (*files.Handler, error){
		"a short secret": func() (*files.Handler, error) { return files.NewHandler(d, []byte("short"), scope) },
		"no scope":       func() (*files.Handler, error) { return files.NewHandler(d, bytes.Repeat([]byte("k"), 32), nil) },
		"no types": func() (*files.Handler, error) {
			return files.NewHandler(d, bytes.Repeat([]byte("k"), 32), scope, files.WithTypes())
		},
	} {
		if _, err := make(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// A refused upload touches nothing: the same bytes kept before, under
// a claim that was true, stay.
func TestARefusedUploadLeavesTheSameFileKept(t *testing.T) {
	f := newFixture(t)
	_, up, _ := f.upload("alice", "cat.png", "image/png", filestest.PNG)
	if status, _, raw := f.upload("alice", "cat.txt", "text/plain", filestest.PNG); status != http.StatusUnsupportedMediaType {
		t.Fatalf("the same bytes said to be text: %d %s", status, raw)
	}
	if resp, b := f.get("alice", up.URL); resp.StatusCode != http.StatusOK || !bytes.Equal(b, filestest.PNG) {
		t.Fatalf("the file kept before: %d", resp.StatusCode)
	}
}
