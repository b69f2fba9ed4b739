// Package vercelai speaks the Vercel AI SDK UI message stream protocol
// (v1, what useChat in AI SDK 5, 6 and 7 consumes): it decodes
// DefaultChatTransport requests into CMF and encodes agent events as
// stream chunks. Exact rules: docs/protocols.md.
package vercelai

import (
	"net/http"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/wire"
	"github.com/agentui/agentui/uiadapter"
)

// Protocol is the UI message stream protocol. The zero value is not
// usable; call New.
type Protocol struct {
	v7 bool
}

// Option configures the protocol.
type Option func(*Protocol)

// WithAISDK7 speaks to AI SDK 7 clients: it enables chunk types only they
// accept (today: tool-approval-response, sent before the outcome of an
// approved or denied call), and a reply's usage in message metadata takes
// AI SDK 7's shape (inputTokenDetails, outputTokenDetails). Off by default:
// one unknown chunk type fails an AI SDK 6 client. No request says which
// SDK sent it, so this is the server's choice.
func WithAISDK7() Option { return func(p *Protocol) { p.v7 = true } }

// New returns the protocol.
func New(opts ...Option) *Protocol {
	p := &Protocol{}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Handler returns a chat endpoint for a: the protocol with the adapter's
// options. Mount it at POST /api/chat, where useChat posts by default.
func Handler(a agent.Agent, opts ...uiadapter.Option) (*uiadapter.Handler, error) {
	return uiadapter.New(New(), a, opts...)
}

// ConversationHandler serves a stored conversation as UI messages (see
// Dump) for GET {api}/{id}: useChat's initial messages after a reload. h
// must keep history (uiadapter.WithStore). The chat id is chatID(r); nil
// reads the ServeMux path value "id" (other routers can set it with
// r.SetPathValue, as examples/gin does, or pass their own function).
func ConversationHandler(h *uiadapter.Handler, chatID func(*http.Request) string) http.Handler {
	p, _ := h.Protocol().(*Protocol)
	v7 := p != nil && p.v7
	return h.ConversationHandler(func(msgs []cmf.Message) any { return dump(msgs, v7) }, chatID)
}

// TreeHandler serves the chat's messages on every branch as UI messages
// (see uiadapter.Handler.TreeHandler) for GET {api}/chat/{id}/tree: the
// shape assistant-ui's history adapter loads with useChatRuntime
// ({headId, messages: [{parentId, message}]}), and what a page's branch
// picker ("‹ 1/2 ›") counts. h must keep history (uiadapter.WithStore);
// chatID as for ConversationHandler.
func TreeHandler(h *uiadapter.Handler, chatID func(*http.Request) string) http.Handler {
	p, _ := h.Protocol().(*Protocol)
	v7 := p != nil && p.v7
	return h.TreeHandler(func(msgs []cmf.Message) []uiadapter.Shown {
		ui := dump(msgs, v7)
		out := make([]uiadapter.Shown, len(ui))
		for i := range ui {
			out[i] = uiadapter.Shown{ID: ui[i].ID, Message: ui[i]}
		}
		return out
	}, chatID)
}

// Name is "vercel-ai".
func (p *Protocol) Name() string { return "vercel-ai" }

// SetHeaders adds what the AI SDK's own servers send besides the SSE
// headers every stream gets: the protocol header its docs require of
// custom backends, and Connection: keep-alive (HTTP/2 servers drop it).
func (p *Protocol) SetHeaders(h http.Header) {
	h.Set("X-Vercel-Ai-Ui-Message-Stream", "v1")
	h.Set("Connection", "keep-alive")
}

// NewEncoder returns an encoder for one run.
func (p *Protocol) NewEncoder(w *wire.SSEWriter, t *wire.Turn, tr wire.Trusted) wire.Encoder {
	return p.newEncoder(w, t, tr)
}
