package vercelai

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/wire"
)

// sameTail checks DecodeTail against Decode on one body: where Decode
// accepts it, DecodeTail does too, and its turn is Decode's but for the
// messages, of which it holds Decode's last ones (the request's last
// message). A body Decode refuses for an earlier message may pass.
func sameTail(t *testing.T, body []byte) {
	t.Helper()
	r := httptest.NewRequest("POST", "/", nil)
	tail, terr := New().DecodeTail(r, body)
	if terr != nil {
		var e *wire.Error
		if !asError(terr, &e) || e.Status != 400 {
			t.Fatalf("DecodeTail failed without a 400: %v", terr)
		}
	}
	full, err := New().Decode(r, body)
	if err != nil {
		return
	}
	if terr != nil {
		t.Fatalf("Decode accepts what DecodeTail refuses (%v): %s", terr, body)
	}
	n := len(tail.Messages)
	if n == 0 || n > len(full.Messages) {
		t.Fatalf("DecodeTail has %d messages, Decode %d", n, len(full.Messages))
	}
	for i, m := range tail.Messages {
		want := full.Messages[len(full.Messages)-n+i]
		a, _ := json.Marshal(m.Content)
		b, _ := json.Marshal(want.Content)
		if m.Role != want.Role || string(a) != string(b) || (m.ID() != want.ID() && isClientID(body, want.ID())) {
			t.Fatalf("tail message %d: %+v, want %+v", i, m, want)
		}
	}
	tail.Messages, full.Messages, tail.RunID, full.RunID = nil, nil, "", ""
	tail.Skipped, full.Skipped = nil, nil
	for _, res := range [][]wire.Resolution{tail.Resolutions, full.Resolutions} {
		for i := range res {
			res[i].Output = json.RawMessage(compact(res[i].Output))
		}
	}
	if !reflect.DeepEqual(tail, full) {
		t.Fatalf("DecodeTail's turn %+v, Decode's %+v", tail, full)
	}
}

// isClientID says whether id is in the body (not one the decoder made up
// for a message without one).
func isClientID(body []byte, id string) bool {
	b, _ := json.Marshal(id)
	return id != "" && json.Valid(body) && bytes.Contains(body, b)
}

func compact(b []byte) []byte {
	var out []byte
	if v := json.RawMessage(b); json.Valid(v) {
		out, _ = json.Marshal(v)
		return out
	}
	return b
}

// DecodeTail gives every recorded request the turn Decode does.
func TestDecodeTailMatchesDecode(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.json"))
	if len(files) < 5 {
		t.Fatalf("%d samples", len(files))
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(filepath.Base(file), func(t *testing.T) { sameTail(t, b) })
	}
	// A branch: the parent is the message before the last, and the
	// messages before it are not read at all.
	tail, err := New().DecodeTail(httptest.NewRequest("POST", "/", nil), []byte(`{"id":"c","messages":[
		{"id":"x","role":"robot","parts":7},
		{"id":"a1","role":"assistant","parts":[{"type":"text","text":"hi"}]},
		{"id":"u2","role":"user","parts":[{"type":"text","text":"again"}]}]}`))
	if err != nil || tail.ParentID != "a1" || len(tail.Messages) != 1 || tail.Messages[0].ID() != "u2" || tail.Messages[0].Text() != "again" {
		t.Fatalf("DecodeTail = %+v, %v", tail, err)
	}
	for body, want := range map[string]string{
		`{"id":"c","messages":[]}`: `"messages" must be a non-empty array`,
		`{"id":"c","messages":[{"id":"u","role":"user","parts":[]}],"message":{"id":"u","role":"user","parts":[]}}`: `send either "messages" or "message", not both`,
		`{"id":"c","messages":[{"id":"u","role":"robot","parts":[]}]}`:                                              `messages[0]: unknown role "robot"`,
		`{"id":"c","messages":[{"id":"u","role":"user","parts":[]},{"id":"v","role":"robot","parts":[]}]}`:          `messages[1]: unknown role "robot"`,
		`{"id":"c","messages":[{"id":"u","role":"user","content":"hi"}]}`:                                           `messages[0] has "content" and no "parts"`,
		`{"id":"c","messages":[{"id":"u","role":"user","parts":[]},{"id":7}]}`:                                      `malformed request`,
	} {
		_, err := New().DecodeTail(httptest.NewRequest("POST", "/", nil), []byte(body))
		var e *wire.Error
		if !asError(err, &e) || e.Status != 400 || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %v, want a 400 with %q", body, err, want)
		}
	}
}

func FuzzDecodeTail(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "samples", "*.json"))
	for _, file := range files {
		b, _ := os.ReadFile(file)
		f.Add(b)
	}
	f.Add([]byte(`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"a"}]},{"role":"user","parts":[]}]}`))
	f.Fuzz(sameTail)
}
