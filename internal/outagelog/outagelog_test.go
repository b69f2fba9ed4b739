package outagelog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentui/agentui/internal/wire"
)

// A dependency that stays down is logged at ERROR once a minute, with the
// count of the refusals in between (at DEBUG); other errors pass through.
func TestOutageLoggedOncePerIncident(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	log := slog.New(New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), func() time.Time { return now }))
	fail := func(err error) {
		wire.WriteError(httptest.NewRecorder(), log.With("chat", "c"), err)
	}
	down := wire.Unavailable("conversation history is unavailable", errors.New("dial tcp: refused"))
	count := func(level string) int {
		return strings.Count(buf.String(), "level="+level+" msg=\"request failed")
	}
	fail(down)
	now = now.Add(time.Second)
	fail(down)
	now = now.Add(time.Second)
	fail(down)
	fail(wire.Unavailable("the run log is unavailable", errors.New("x"))) // another incident
	fail(errors.New("a bug"))                                             // not an outage: always logged
	fail(errors.New("a bug"))
	if e, d := count("ERROR"), count("DEBUG"); e != 4 || d != 2 {
		t.Fatalf("%d ERROR and %d DEBUG lines:\n%s", e, d, &buf)
	}
	buf.Reset()
	now = now.Add(time.Minute)
	fail(down)
	if out := buf.String(); count("ERROR") != 1 || !strings.Contains(out, "same_failures_since_last_logged=2") || !strings.Contains(out, "chat=c") {
		t.Fatalf("a minute on: %s", out)
	}
}

// What makes a line an outage's is the Unavailable error it carries, not
// its text or its attribute names: a reworded line with the error under
// another key is rate-limited all the same, and a line that only reads
// like a refused request (the old text, a 503 status, a refusal) is not.
func TestOutageIsRecognisedByItsError(t *testing.T) {
	var buf bytes.Buffer
	now := time.Unix(1000, 0)
	log := slog.New(New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}), func() time.Time { return now }))
	down := fmt.Errorf("loading the chat: %w", wire.Unavailable("conversation history is unavailable", errors.New("dial tcp: refused")))
	for range 3 {
		log.Error("the store did not answer", "cause", down)
		log.Error("request failed", "status", 503, "refusal", "conversation history is unavailable", "error", errors.New("a bug"))
	}
	out := buf.String()
	if n := strings.Count(out, `level=ERROR msg="the store did not answer"`); n != 1 {
		t.Errorf("the outage was logged at ERROR %d times:\n%s", n, out)
	}
	if n := strings.Count(out, `level=DEBUG msg="the store did not answer (the same outage`); n != 2 {
		t.Errorf("the outage's repeats at DEBUG: %d:\n%s", n, out)
	}
	if n := strings.Count(out, `level=ERROR msg="request failed"`); n != 3 {
		t.Errorf("a line without the error was rate-limited (%d at ERROR):\n%s", n, out)
	}
}
