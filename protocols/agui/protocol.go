package agui

import (
	"net/http"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/uiadapter"
)

// Protocol is AG-UI over HTTP and SSE. The zero value is not usable; call
// New.
type Protocol struct {
}

// Option configures the protocol.
type Option func(*Protocol)

// New returns the protocol.
func New(opts ...Option) *Protocol {
	p := &Protocol{}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Handler returns an AG-UI endpoint for a: the protocol with the adapter's
// options. Point HttpAgent's url at it.
func Handler(a agent.Agent, opts ...uiadapter.Option) (*uiadapter.Handler, error) {
	return uiadapter.New(New(), a, opts...)
}

// Name is "ag-ui".
func (p *Protocol) Name() string { return "ag-ui" }

// SetHeaders adds nothing: responses are SSE whatever the Accept header
// says (HttpAgent picks its parser by the response's content type, and
// agentui does not speak the protobuf framing).
func (p *Protocol) SetHeaders(http.Header) {}

// NewEncoder returns an encoder for one run.
func (p *Protocol) NewEncoder(w *wire.SSEWriter, t *wire.Turn, tr wire.Trusted) wire.Encoder {
	return newEncoder(w, t, tr)
}

// TreeHandler serves the thread's messages on every branch (edits and
// regenerations keep what they replaced; see uiadapter.Handler.TreeHandler)
// as AG-UI 1.0 messages, for GET {api}/agui/{id}/tree: {headId, messages:
// [{parentId, message}]}, what a page's branch picker ("‹ 1/2 ›") counts.
// h's BranchHandler then makes one branch the active one, which the
// connect route's MESSAGES_SNAPSHOT carries. chatID as for
// uiadapter.Handler.TreeHandler.
func TreeHandler(h *uiadapter.Handler, chatID func(*http.Request) string) http.Handler {
	return h.TreeHandler(func(msgs []cmf.Message) []uiadapter.Shown {
		shown := Dump(msgs)
		out := make([]uiadapter.Shown, len(shown))
		for i := range shown {
			out[i] = uiadapter.Shown{ID: shown[i].ID, Message: shown[i]}
		}
		return out
	}, chatID)
}
