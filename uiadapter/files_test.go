package uiadapter_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/uiadapter"
)

// newFilesFixture is a history fixture that keeps files, with the file
// routes mounted.
func newFilesFixture(t *testing.T, opts ...files.Option) (*historyFixture, *files.Dir) {
	t.Helper()
	dir, err := files.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fh, err := files.NewHandler(dir, bytes.Repeat([]byte("f"), 32), headerScope, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f := newHistoryFixture(t, history.NewMemory(), uiadapter.WithFiles(fh))
	f.mux.Handle("GET /api/files/{id}", fh.ServeHandler())
	return f, dir
}

// fileMessage is a useChat request whose message (id) carries a file
// part with url, then text.
func fileMessage(chat, id, url, mediaType, text string) string {
	b, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "messages": []any{
		map[string]any{"id": id, "role": "user", "parts": []any{
			map[string]any{"type": "file", "mediaType": mediaType, "url": url, "filename": "cat.png"},
			map[string]any{"type": "text", "text": text},
		}},
	}})
	return string(b)
}

func dataURL(mediaType string, b []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(b)
}

// A file sent inline is kept once in the file store: history holds its
// reference (never its bytes), the model is given its bytes, a reload
// shows it through a URL signed for the chat's scope, and that URL sent
// back (an edit) is the same file again.
func TestFilesAreKeptByReference(t *testing.T) {
	f, dir := newFilesFixture(t)
	reply := f.chat("alice", fileMessage("c", "u1", dataURL("image/png", filestest.PNG), "image/png", "/context"))
	if !strings.Contains(reply.Text(), `"parts":["image:base64","text"]`) {
		t.Fatalf("the model was given %s", reply.Text())
	}
	msgs := f.stored("alice", "c")
	src, ok := cmf.Media(msgs[0].Content[0])
	raw, _ := json.Marshal(msgs[0])
	if !ok || src.Type != cmf.SourceFile || !files.ValidID(src.Data) || src.MediaType != "image/png" || bytes.Contains(raw, []byte(base64.StdEncoding.EncodeToString(filestest.PNG))) {
		t.Fatalf("history holds %s", raw)
	}
	// A reload: the file part's URL reads the file, for alice.
	status, body := f.do("alice", http.MethodGet, "/api/chat/c", "")
	var ui []struct {
		Parts []struct{ Type, URL, MediaType string }
	}
	if status != http.StatusOK || json.Unmarshal([]byte(body), &ui) != nil || ui[0].Parts[0].Type != "file" || !strings.HasPrefix(ui[0].Parts[0].URL, "/api/files/"+src.Data+"?exp=") {
		t.Fatalf("the reload: %d %s", status, body)
	}
	url := ui[0].Parts[0].URL
	req, _ := http.NewRequest(http.MethodGet, f.url+url, nil)
	req.Header.Set("X-Scope", "alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, filestest.PNG) {
		t.Fatalf("reading the file: %d", resp.StatusCode)
	}
	// The URL sent back, absolute as a browser sends it, in an edit.
	reply = f.chat("alice", fileMessage("c", "u1", f.url+url, "image/png", "/context again"))
	if !strings.Contains(reply.Text(), `"parts":["image:base64","text"]`) {
		t.Fatalf("after the edit the model was given %s", reply.Text())
	}
	msgs = f.stored("alice", "c")
	if again, _ := cmf.Media(msgs[0].Content[0]); again != src {
		t.Fatalf("the echoed URL is %+v, want the same file %+v", again, src)
	}
	if n, _ := dir.Count(context.Background(), "alice"); n != 1 {
		t.Fatalf("alice has %d files, want 1", n)
	}
}

// A message whose file cannot be kept is refused with a clear 4xx and
// nothing stored: a type lie, one too large, another scope's file, a
// file that was deleted.
func TestFileRefusals(t *testing.T) {
	f, dir := newFilesFixture(t, files.WithMaxBytes(64))
	script := []byte("alert(document.cookie)")
	for name, c := range map[string]struct {
		body   string
		status int
	}{
		"a script said to be a PNG": {fileMessage("c1", "u1", dataURL("image/png", script), "image/png", "hi"), http.StatusUnsupportedMediaType},
		"too large":                 {fileMessage("c2", "u1", dataURL("image/png", append(bytes.Clone(filestest.PNG), make([]byte, 64)...)), "image/png", "hi"), http.StatusRequestEntityTooLarge},
		"not base64":                {fileMessage("c3", "u1", "data:image/png;base64,!!!", "image/png", "hi"), http.StatusBadRequest},
	} {
		status, body := f.do("alice", http.MethodPost, "/api/chat", c.body)
		if status != c.status || !strings.HasPrefix(body, `{"error":`) {
			t.Errorf("%s: %d %s, want %d", name, status, body, c.status)
		}
	}
	if n, _ := dir.Count(context.Background(), "alice"); n != 0 {
		t.Fatalf("refused messages left %d files", n)
	}
	if status, _ := f.do("alice", http.MethodGet, "/api/chat/c1", ""); status != http.StatusNotFound {
		t.Fatalf("a refused message's chat was stored: %d", status)
	}
	// Alice's file, sent by Bob (who has its URL), and after its delete.
	f.chat("alice", fileMessage("c", "u1", dataURL("image/png", filestest.PNG), "image/png", "hi"))
	msgs := f.stored("alice", "c")
	src, _ := cmf.Media(msgs[0].Content[0])
	url := "/api/files/" + src.Data + "?exp=1&sig=x"
	if status, body := f.do("bob", http.MethodPost, "/api/chat", fileMessage("b", "u1", url, "image/png", "mine?")); status != http.StatusBadRequest || !strings.Contains(body, "not yours") {
		t.Fatalf("another scope's file: %d %s", status, body)
	}
	if err := dir.Delete(context.Background(), "alice", src.Data); err != nil {
		t.Fatal(err)
	}
	if status, _ := f.do("alice", http.MethodPost, "/api/chat", fileMessage("c", "u2", url, "image/png", "again")); status != http.StatusBadRequest {
		t.Fatalf("a deleted file: %d", status)
	}
	// A reply after the file went says so to the model, and fails nothing.
	reply := f.chat("alice", strings.Replace(userBody("c", "/context"), `"u1"`, `"u3"`, 1))
	if !strings.Contains(reply.Text(), `"text":"(a file that is no longer available)`) {
		t.Fatalf("the model was given %s", reply.Text())
	}
}

// Deleting a chat deletes its files that no other chat of the scope
// refers to: a file sent in two chats stays until both are gone.
func TestFilesGoWithTheirLastChat(t *testing.T) {
	f, dir := newFilesFixture(t)
	png := dataURL("image/png", filestest.PNG)
	f.chat("alice", fileMessage("c1", "u1", png, "image/png", "one"))
	f.chat("alice", fileMessage("c2", "u1", png, "image/png", "two"))
	f.chat("alice", fileMessage("c3", "u1", dataURL("text/plain", []byte("only here")), "text/plain", "three"))
	count := func() int {
		n, err := dir.Count(context.Background(), "alice")
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(); n != 2 {
		t.Fatalf("alice has %d files, want 2", n)
	}
	del := func(chat string) {
		t.Helper()
		if status, body := f.do("alice", http.MethodDelete, "/api/chat/"+chat, ""); status != http.StatusNoContent {
			t.Fatalf("delete %s: %d %s", chat, status, body)
		}
	}
	del("c3")
	if n := count(); n != 1 {
		t.Fatalf("after the text file's only chat went: %d files", n)
	}
	del("c1")
	if n := count(); n != 1 {
		t.Fatalf("c2 still shows the picture, yet %d files are left", n)
	}
	del("c2")
	if n := count(); n != 0 {
		t.Fatalf("after the picture's last chat went: %d files", n)
	}
}
