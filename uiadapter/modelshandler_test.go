package uiadapter_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
)

// GET /api/models lists the models a request may pick, the default
// first and marked; an agent with one unnamed model lists none.
func TestModelsHandlerListsTheModels(t *testing.T) {
	models := testutil.Must(agent.NewModels(agent.Named{Name: "small", Model: says("small")}, agent.Named{Name: "large", Model: says("large")}))
	for _, c := range []struct {
		name  string
		model agent.Model
		want  string
	}{
		{"several", models, `{"models":[{"id":"small","default":true},{"id":"large"}]}` + "\n"},
		{"one unnamed", says("only"), `{"models":[]}` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := testutil.Must(vercelai.Handler(testutil.Must(agent.New(c.model))))
			rec := httptest.NewRecorder()
			h.ModelsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/models", nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != http.StatusOK || string(body) != c.want || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s %q, want 200 %q", rec.Code, rec.Header().Get("Content-Type"), body, c.want)
			}
			rec = httptest.NewRecorder()
			h.ModelsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/api/models", nil))
			if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
				t.Fatalf("POST: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
			}
		})
	}
}
