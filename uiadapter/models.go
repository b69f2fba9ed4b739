package uiadapter

import (
	"net/http"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/wire"
)

// ModelInfo is one model a request may pick, as [Handler.ModelsHandler]
// lists it.
type ModelInfo struct {
	ID      string `json:"id"`                // what a request names: useChat's body "model", AG-UI's forwardedProps.model
	Default bool   `json:"default,omitempty"` // the model a request that names none gets
}

// ModelsHandler serves the models a request may pick, for a page's model
// picker (mount it at GET /api/models): {"models": [{"id": …, "default":
// true}, …]}, the default first, from the agent's [agent.ModelNames]. An
// agent that serves one model without names lists none: requests cannot
// pick, and the page shows no picker.
func (h *Handler) ModelsHandler() http.Handler {
	var out struct {
		Models []ModelInfo `json:"models"`
	}
	out.Models = []ModelInfo{}
	if mn, ok := h.agent.(agent.ModelNames); ok {
		for i, name := range mn.ModelNames() {
			out.Models = append(out.Models, ModelInfo{ID: name, Default: i == 0})
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			wire.WriteError(w, h.log, &wire.Error{Status: http.StatusMethodNotAllowed, Message: "method not allowed: use GET"})
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}
