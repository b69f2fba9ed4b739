package uiadapter

import (
	"bytes"
	"errors"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentui/agentui/internal/wire"
)

// A refusal the client caused is not logged as the server's failure,
// even with a cause (a scope function's 401); a 5xx is.
func TestWriteErrorLogLevels(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{scopeError(errors.New("session expired")), "level=INFO"},
		{wire.Conflict("busy"), "level=DEBUG"},
		{wire.Unavailable("down", errors.New("dial tcp")), "level=ERROR"},
	} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
		wire.WriteError(httptest.NewRecorder(), log, c.err)
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("%v logged %q, want %s", c.err, buf.String(), c.want)
		}
	}
}
