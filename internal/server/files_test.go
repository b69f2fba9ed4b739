package server

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/agentui/agentui/files/filestest"
)

// The binary keeps files by reference (-files; a temporary directory by
// default): a page's upload, and a file a message carries inline, are
// read back through signed URLs; a form posted from another site is
// refused.
func TestFilesInTheBinary(t *testing.T) {
	ts := newTestServer(t, Config{Secret: "s"})
	jar, _ := cookiejar.New(nil)
	page := &http.Client{Jar: jar}
	msg, _ := json.Marshal(map[string]any{"id": "c", "trigger": "submit-message", "messages": []any{map[string]any{"id": "u1", "role": "user", "parts": []any{
		map[string]any{"type": "file", "mediaType": "image/png", "url": "data:image/png;base64," + base64.StdEncoding.EncodeToString(filestest.PNG)},
		map[string]any{"type": "text", "text": "/context"},
	}}}})
	if resp, body := send(t, page, http.MethodPost, ts.URL+"/api/chat", string(msg), browserHeaders...); resp.StatusCode != 200 || !strings.Contains(body, `image:base64`) {
		t.Fatalf("a message with a file: %d %s", resp.StatusCode, body)
	}
	_, body := send(t, page, http.MethodGet, ts.URL+"/api/chat/c", "", browserHeaders...)
	var ui []struct{ Parts []struct{ Type, URL string } }
	if json.Unmarshal([]byte(body), &ui) != nil || !strings.HasPrefix(ui[0].Parts[0].URL, "/api/files/sha256-") {
		t.Fatalf("the reload: %s", body)
	}
	if resp, got := send(t, page, http.MethodGet, ts.URL+ui[0].Parts[0].URL, "", browserHeaders...); resp.StatusCode != 200 || got != string(filestest.PNG) {
		t.Fatalf("reading the file: %d", resp.StatusCode)
	}
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "cat.png")
	_, _ = fw.Write(filestest.PNG)
	_ = mw.Close()
	upload := func(h ...string) (*http.Response, string) {
		return send(t, page, http.MethodPost, ts.URL+"/api/files", form.String(), append([]string{"Content-Type", mw.FormDataContentType()}, h...)...)
	}
	if resp, body := upload(browserHeaders...); resp.StatusCode != http.StatusCreated || !strings.Contains(body, `"mediaType":"image/png"`) {
		t.Fatalf("an upload: %d %s", resp.StatusCode, body)
	}
	if resp, body := upload("Sec-Fetch-Site", "cross-site", "Sec-Fetch-Mode", "navigate", "Origin", "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a form posted from another site: %d %s", resp.StatusCode, body)
	}
}
