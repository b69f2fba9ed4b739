package cmf

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzMessageJSON decodes arbitrary bytes into a Message. Decoding must not
// panic, and whatever decodes must re-encode and decode to the same value.
func FuzzMessageJSON(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":[{"content_type":"text","text":"hi"}]}`))
	f.Add([]byte(`{"role":"tool","content":[{"content_type":"tool_result","tool_call_id":"c","tool_name":"t","content":{ "a" : [1, 2.50, "<x>"] }}]}`))
	f.Add([]byte(`{"role":"user","content":[],"extensions":{"custom":{},"security":{"labels":[]}}}`))
	if b, err := os.ReadFile(filepath.Join("testdata", "message.json")); err == nil {
		f.Add(b)
	}
	parts, _ := filepath.Glob(filepath.Join("testdata", "parts", "*.json"))
	for _, p := range parts {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(append(append([]byte(`{"role":"assistant","content":[`), b...), "]}"...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Message
		if err := json.Unmarshal(data, &m); err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded an invalid message: %v", err)
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encoding failed: %v", err)
		}
		var again Message
		if err := json.Unmarshal(enc, &again); err != nil {
			t.Fatalf("re-encoded message does not decode: %v\n%s", err, enc)
		}
		if !reflect.DeepEqual(m, again) {
			t.Fatalf("round trip changed the message:\n first  %#v\n second %#v\n json %s", m, again, enc)
		}
		// Views never fail on a decoded message.
		if _, err := m.Views(CapAll); err != nil {
			t.Fatalf("Views: %v", err)
		}
	})
}
