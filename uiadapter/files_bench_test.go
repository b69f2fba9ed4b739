package uiadapter_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/agentui/agentui/files"
	"github.com/agentui/agentui/files/filestest"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// BenchmarkThreadWithImages: the bytes a useChat client sends per turn,
// and what the turn costs the server, when its thread holds ten images
// of 200 KB: inline (data URLs: what useChat's files send, resent with
// every turn) against by reference (the chat page's upload first: URLs
// the server maps to the files it keeps). Each op is one turn with
// history; bytes/op is its request body.
func BenchmarkThreadWithImages(b *testing.B) {
	img := append(bytes.Clone(filestest.PNG), make([]byte, 200<<10)...)
	_, _ = rand.Read(img[len(filestest.PNG):])
	for _, shape := range []string{"inline", "reference"} {
		b.Run(shape, func(b *testing.B) {
			dir, err := files.NewDir(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			fh := testutil.Must(files.NewHandler(dir, bytes.Repeat([]byte("f"), 32), uiadapter.SingleScope))
			h := testutil.Must(vercelai.Handler(testutil.DemoLoopWith(b), uiadapter.WithStore(history.NewMemory()),
				uiadapter.WithScope(uiadapter.SingleScope), uiadapter.WithFiles(fh), uiadapter.WithMaxBodyBytes(64<<20)))
			url := "data:image/png;base64," + base64.StdEncoding.EncodeToString(img)
			if shape == "reference" {
				f, err := fh.Keep(b.Context(), "single", bytes.NewReader(img), "image/png")
				if err != nil {
					b.Fatal(err)
				}
				url = fh.URL("single", f.ID)
			}
			var thread []any
			turn := func(i int) int {
				msg := map[string]any{"id": "u" + strconv.Itoa(i), "role": "user", "parts": []any{
					map[string]any{"type": "file", "mediaType": "image/png", "url": url},
					map[string]any{"type": "text", "text": "what is this?"},
				}}
				body, _ := json.Marshal(map[string]any{"id": "c", "trigger": "submit-message", "messages": append(thread, msg)})
				req := httptest.NewRequest(http.MethodPost, "/api/chat", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				w := &testutil.DiscardWriter{}
				h.ServeHTTP(w, req)
				if w.Status != http.StatusOK {
					b.Fatalf("status %d", w.Status)
				}
				thread = append(thread, msg, map[string]any{"id": "a" + strconv.Itoa(i), "role": "assistant", "parts": []any{map[string]any{"type": "text", "text": "You said: what is this?"}}})
				return len(body)
			}
			for i := range 9 { // the thread holds nine images; each op sends the tenth
				turn(i)
			}
			base := len(thread)
			var sent int
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				thread = thread[:base]
				sent = turn(9 + n)
				n++
			}
			b.ReportMetric(float64(sent), "bytes/op")
		})
	}
}
