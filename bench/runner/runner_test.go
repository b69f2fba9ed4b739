package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const vercelCount3 = `data: {"type":"start","messageId":"m"}

data: {"type":"start-step"}

data: {"type":"text-start","id":"t"}

data: {"type":"text-delta","id":"t","delta":"1 "}

data: {"type":"text-delta","id":"t","delta":"2 "}

data: {"type":"text-delta","id":"t","delta":"3 "}

data: {"type":"text-end","id":"t"}

data: {"type":"finish-step"}

data: {"type":"finish","finishReason":"stop"}

data: [DONE]

`

func TestVerifyVercel(t *testing.T) {
	frames, err := parseFrames([]byte(vercelCount3))
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != minFrames(vercel, 3) {
		t.Errorf("%d frames, minFrames says %d", len(frames), minFrames(vercel, 3))
	}
	if err := verifyVercel(frames); err != nil {
		t.Fatal(err)
	}
	short := strings.Replace(vercelCount3, "data: {\"type\":\"finish-step\"}\n\n", "", 1)
	frames, _ = parseFrames([]byte(short))
	if verifyVercel(frames) == nil {
		t.Error("a reply without finish-step passed")
	}
}

func TestVerifyAGUI(t *testing.T) {
	body := `data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}

: a comment is not a frame

data: {"type":"STEP_STARTED","stepName":"s"}

data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}

data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"1 "}

data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"2 "}

data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"3 "}

data: {"type":"TEXT_MESSAGE_END","messageId":"m"}

data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}

`
	frames, err := parseFrames([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if err := verifyAGUI(frames); err != nil {
		t.Fatal(err)
	}
	if verifyAGUI(frames[:len(frames)-1]) == nil {
		t.Error("a run without RUN_FINISHED passed")
	}
}

func TestBodyFor(t *testing.T) {
	v := string(bodyFor(vercel, "7", `count to "3"`))
	if !strings.Contains(v, `"id":"c-7"`) || !strings.Contains(v, `"text":"count to \"3\""`) || !strings.Contains(v, `"trigger":"submit-message"`) {
		t.Errorf("vercel body %s", v)
	}
	a := string(bodyFor(agui, "7", "count to 3"))
	if !strings.Contains(a, `"threadId":"t-7","runId":"r-7"`) || !strings.Contains(a, `"content":"count to 3"`) {
		t.Errorf("agui body %s", a)
	}
}

func TestWriteDocKeepsHandWrittenParts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.md")
	doc := "# B\n\nintro\n\n" + beginMarker + "\nold\n" + endMarker + "\n\n## Go micro-benchmarks\n\nkept\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeDoc(path, "new\n"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# B\n\nintro\n\n" + beginMarker + "\nnew\n" + endMarker + "\n\n## Go micro-benchmarks\n\nkept\n"
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	if err := os.WriteFile(path, []byte("no markers"), 0o644); err != nil {
		t.Fatal(err)
	}
	if writeDoc(path, "x") == nil {
		t.Error("a document without markers was overwritten")
	}
}

func TestHelpers(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 2, 3}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
	if g := group(1234567.4); g != "1,234,567" {
		t.Errorf("group = %q", g)
	}
	if g := group(999); g != "999" {
		t.Errorf("group = %q", g)
	}
	if s := ms(1500 * time.Microsecond); s != "1.50 ms" {
		t.Errorf("ms = %q", s)
	}
	if s := signedMs(-2 * time.Millisecond); s != "−2.00 ms" {
		t.Errorf("signedMs = %q", s)
	}
	tb := newTailBuffer(10)
	_, _ = tb.Write([]byte("first line\nsecond\n"))
	if l := tb.LastLine(); l != "second" {
		t.Errorf("LastLine = %q", l)
	}
}

func TestProcReaders(t *testing.T) {
	if _, err := cpuSeconds(os.Getpid()); err != nil {
		t.Fatal(err)
	}
	if kb, err := rssKB(os.Getpid()); err != nil || kb <= 0 {
		t.Fatalf("rssKB = %d, %v", kb, err)
	}
	if s, err := machineBusySeconds(); err != nil || s <= 0 {
		t.Fatalf("machineBusySeconds = %v, %v", s, err)
	}
	m, err := startCPUMeter(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.stop(); err != nil {
		t.Fatal(err)
	}
}

// A history conversation whose page load is refused, or sets no cookie,
// or whose reply was served without history, fails rather than be
// measured as one with history; and the other way round.
func TestConversationNeedsItsScope(t *testing.T) {
	cookie := func(w http.ResponseWriter) { http.SetCookie(w, &http.Cookie{Name: "agentui_scope", Value: "s"}) }
	for _, tc := range []struct {
		name   string
		page   func(http.ResponseWriter)
		run    bool   // the reply names its run: served with history
		want   string // "" for a turn that succeeds
		stated bool   // wantScope
	}{
		{"cookie", cookie, true, "", true},
		{"cookie, reply without history", cookie, false, "served with history: false", true},
		{"no cookie", func(http.ResponseWriter) {}, true, "no scope cookie", true},
		{"no cookie, no history", func(http.ResponseWriter) {}, false, "", false},
		{"no history wanted, reply with it", func(http.ResponseWriter) {}, true, "served with history: true", false},
		{"refused", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTooManyRequests) }, true, "429", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodGet {
					tc.page(w)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				if tc.run {
					w.Header().Set("Agentui-Run", "r1")
				}
				_, _ = io.WriteString(w, vercelCount3)
			}))
			defer srv.Close()
			convs, err := newConversations(1, srv.Client().Transport, "t")
			if err != nil {
				t.Fatal(err)
			}
			convs[0].wantScope = tc.stated
			_, err = convs[0].turn(context.Background(), strings.TrimPrefix(srv.URL, "http://"), "hi")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("turn: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("turn: %v, want an error saying %q", err, tc.want)
			}
		})
	}
}
