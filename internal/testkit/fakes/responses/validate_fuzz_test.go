package responses

import (
	"net/http"
	"testing"
)

// FuzzValidate reads arbitrary request bodies: the fake never panics, and
// it either accepts a body or refuses it with a status and a message.
func FuzzValidate(f *testing.F) {
	f.Add(`{"model":"gpt-5","stream":true,"store":false,"input":"hi"}`)
	f.Add(`{"model":"gpt-5","store":false,"input":[{"role":"user","content":"hi"},{"type":"reasoning","id":"rs_1","encrypted_content":"gAAA","summary":[]},{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":"x"}]}`)
	f.Add(`{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,AA=="},{"type":"input_file"}]}],"tools":[{"type":"function","name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{}},"additionalProperties":false}}]}`)
	f.Add(`{"model":"o3","reasoning":{"effort":"none"},"temperature":1,"include":["x"],"input":[{"type":"message","role":"bot"},null,1]}`)
	s := &Server{calls: map[string]string{"fc_1": "rs_1"}}
	f.Fuzz(func(t *testing.T, body string) {
		p, status, e := s.validate([]byte(body))
		switch {
		case e == nil && p == nil:
			t.Fatal("neither accepted nor refused")
		case e != nil && (status < http.StatusBadRequest || e.Message == "" || e.Type == ""):
			t.Fatalf("refused with %d %+v", status, e)
		case e == nil:
			_ = p.prompt()
		}
	})
}
