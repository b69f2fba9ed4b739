package vercelai_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/history"
	"github.com/agentui/agentui/internal/testkit/testutil"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

func sealingServer(t *testing.T, secret string, opts ...uiadapter.Option) (*testutil.SealingAgent, string, *testutil.LogBuffer) {
	t.Helper()
	a := &testutil.SealingAgent{}
	logs := &testutil.LogBuffer{}
	opts = append([]uiadapter.Option{uiadapter.WithSecret([]byte(secret)), uiadapter.WithLogger(testutil.Logger(logs))}, opts...)
	srv := httptest.NewServer(testutil.Must(vercelai.Handler(a, opts...)))
	t.Cleanup(srv.Close)
	return a, srv.URL, logs
}

// uiMessage builds the assistant message a stream makes, as useChat
// does: its parts, with the providerMetadata of text and reasoning parts
// and the callProviderMetadata of tool parts.
func uiMessage(chunks testutil.Chunks) map[string]any {
	msg := map[string]any{"role": "assistant"}
	var parts []any
	open := map[string]map[string]any{}
	for _, c := range chunks {
		id, _ := c["id"].(string)
		call, _ := c["toolCallId"].(string)
		switch c["type"] {
		case "start":
			msg["id"] = c["messageId"]
		case "start-step":
			parts = append(parts, map[string]any{"type": "step-start"})
		case "text-start", "reasoning-start":
			p := map[string]any{"type": strings.TrimSuffix(c["type"].(string), "-start"), "text": ""}
			open[id] = p
			parts = append(parts, p)
		case "text-delta", "reasoning-delta":
			open[id]["text"] = open[id]["text"].(string) + c["delta"].(string)
		case "text-end", "reasoning-end":
			open[id]["state"] = "done"
			if md, ok := c["providerMetadata"]; ok {
				open[id]["providerMetadata"] = md
			}
		case "tool-input-start":
			p := map[string]any{"type": "tool-" + c["toolName"].(string), "toolCallId": call, "state": "input-streaming"}
			open[call] = p
			parts = append(parts, p)
		case "tool-input-available":
			open[call]["state"], open[call]["input"] = "input-available", c["input"]
			if md, ok := c["providerMetadata"]; ok {
				open[call]["callProviderMetadata"] = md
			}
		case "tool-output-available":
			open[call]["state"], open[call]["output"] = "output-available", c["output"]
		}
	}
	msg["parts"] = parts
	return msg
}

func userMsg(id, text string) map[string]any {
	return map[string]any{"id": id, "role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
}

// sealedOf is the sealed values of a UI message's parts, in order.
func sealedOf(msg map[string]any) []string {
	var out []string
	for _, p := range msg["parts"].([]any) {
		p := p.(map[string]any)
		for _, key := range []string{"providerMetadata", "callProviderMetadata"} {
			if md, ok := p[key].(map[string]any); ok {
				out = append(out, md["agentui"].(map[string]any)["sealed"].(string))
			}
		}
	}
	return out
}

// setSealed replaces the i-th sealed value of a UI message.
func setSealed(msg map[string]any, i int, v string) {
	for _, p := range msg["parts"].([]any) {
		p := p.(map[string]any)
		for _, key := range []string{"providerMetadata", "callProviderMetadata"} {
			if _, ok := p[key]; ok {
				if i == 0 {
					p[key] = map[string]any{"agentui": map[string]any{"sealed": v}}
				}
				i--
			}
		}
	}
}

// Without history, each part's provider values reach the client sealed
// (redacted thinking inside the value of the part after it) and, sent
// back with the next message, reach the model on their parts again, the
// redacted thinking in its place. What the client alters, moves or
// brings from elsewhere is dropped, and so is what follows it in its
// step; the rest of the thread is untouched.
func TestSealedValuesComeBackOnTheirParts(t *testing.T) {
	step1, step2 := testutil.SealedReply(1)
	for _, c := range []struct {
		name    string
		tamper  func(msg map[string]any, body map[string]any)
		secret  string // the second request's server's secret, when not the first's
		want    []cmf.Part
		refused int
	}{
		{name: "as sent", want: append(append([]cmf.Part(nil), step1...), step2...)},
		{name: "a value altered", tamper: func(msg, _ map[string]any) {
			setSealed(msg, 1, alter(sealedOf(msg)[1]))
		}, want: []cmf.Part{step1[0], bare(step1[2]), bare(step1[3]), bare(step1[4]), step2[0]}, refused: 3},
		{name: "a value dropped", tamper: func(msg, _ map[string]any) {
			setSealed(msg, 0, "")
		}, want: []cmf.Part{bare(step1[0]), bare(step1[2]), bare(step1[3]), bare(step1[4]), step2[0]}, refused: 3},
		{name: "two swapped", tamper: func(msg, _ map[string]any) {
			v := sealedOf(msg)
			setSealed(msg, 0, v[1])
			setSealed(msg, 1, v[0])
		}, want: []cmf.Part{bare(step1[0]), bare(step1[2]), bare(step1[3]), bare(step1[4]), step2[0]}, refused: 4},
		{name: "moved to another step", tamper: func(msg, _ map[string]any) {
			setSealed(msg, 4, sealedOf(msg)[2])
		}, want: append(append([]cmf.Part(nil), step1...), bare(step2[0])), refused: 1},
		{name: "another chat", tamper: func(_, body map[string]any) {
			body["id"] = "another-chat"
		}, want: []cmf.Part{bare(step1[0]), bare(step1[2]), bare(step1[3]), bare(step1[4]), bare(step2[0])}, refused: 5},
		{name: "another secret", secret: "another secret",
			want: []cmf.Part{bare(step1[0]), bare(step1[2]), bare(step1[3]), bare(step1[4]), bare(step2[0])}, refused: 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, url, logs := sealingServer(t, "one secret")
			first := testutil.PostStream(t, url, testutil.UserMessage("sealed-chat", "u1", "Weather in Oslo?"))
			asst := uiMessage(first)
			if n := len(sealedOf(asst)); n != 5 {
				t.Fatalf("%d sealed values, want 5 (each of step one's parts but the redacted one, and step two's text): %v", n, asst)
			}
			for _, v := range sealedOf(asst) {
				if strings.Contains(v, "signature") || strings.Contains(v, "redacted") {
					t.Fatalf("a provider value shows through: %s", v)
				}
			}
			body := map[string]any{"id": "sealed-chat", "messages": []any{userMsg("u1", "Weather in Oslo?"), asst, userMsg("u2", "And tomorrow?")}}
			if c.tamper != nil {
				c.tamper(asst, body)
			}
			if c.secret != "" {
				a, url, logs = sealingServer(t, c.secret)
			}
			b, _ := json.Marshal(body)
			testutil.PostStream(t, url, string(b))
			in := a.Inputs()[len(a.Inputs())-1]
			if got := testutil.AssistantParts(in.History, in.Messages); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("the model got\n%+v\nwant\n%+v", got, c.want)
			}
			if n := strings.Count(logs.String(), `"dropped sealed provider values that did not open"`); (n == 1) != (c.refused > 0) ||
				c.refused > 0 && !strings.Contains(logs.String(), `did not open" protocol=vercel-ai chat=`+body["id"].(string)+` intent=submit count=`+string(rune('0'+c.refused))) {
				t.Fatalf("want %d refused; log:\n%s", c.refused, logs)
			}
		})
	}
}

// alter changes one character in the middle of a sealed value.
func alter(v string) string {
	i := len(v) / 2
	c := byte('A')
	if v[i] == 'A' {
		c = 'B'
	}
	return v[:i] + string(c) + v[i+1:]
}

func bare(p cmf.Part) cmf.Part {
	switch p := p.(type) {
	case cmf.Thinking:
		p.Opaque = nil
		return p
	case cmf.Text:
		p.Opaque = nil
		return p
	case cmf.ToolCall:
		p.Opaque = nil
		return p
	}
	return p
}

// With history the server keeps the values: nothing of them is sent,
// and a client that sends one anyway changes nothing.
func TestWithHistoryNothingIsSealed(t *testing.T) {
	a, url, _ := sealingServer(t, "one secret", uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(uiadapter.SingleScope))
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(testutil.UserMessage("kept-chat", "u1", "Weather in Oslo?")))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	chunks := testutil.ParseChunks(t, resp.Body)
	resp.Body.Close()
	for _, c := range chunks {
		if _, ok := c["providerMetadata"]; ok {
			t.Fatalf("a chunk with providerMetadata: %v", c)
		}
	}
	if got := uiMessage(chunks); len(sealedOf(got)) != 0 {
		t.Fatalf("sealed values sent with history: %v", got)
	}
	if len(a.Inputs()) != 1 {
		t.Fatalf("%d runs", len(a.Inputs()))
	}
}

// A request without a scope credential, to a handler that keeps history,
// is served without it: its whole thread is decoded, and the values go
// to the client sealed and come back.
func TestWithoutAScopeCredentialValuesAreSealed(t *testing.T) {
	noScope := func(*http.Request) (string, error) { return "", uiadapter.ErrNoScope }
	a, url, logs := sealingServer(t, "one secret", uiadapter.WithStore(history.NewMemory()), uiadapter.WithScope(noScope))
	first := testutil.PostStream(t, url, testutil.UserMessage("anonymous-chat", "u1", "Weather in Oslo?"))
	asst := uiMessage(first)
	if n := len(sealedOf(asst)); n != 5 {
		t.Fatalf("%d sealed values, want 5", n)
	}
	b, _ := json.Marshal(map[string]any{"id": "anonymous-chat", "messages": []any{userMsg("u1", "Weather in Oslo?"), asst, userMsg("u2", "And tomorrow?")}})
	testutil.PostStream(t, url, string(b))
	in := a.Inputs()[1]
	step1, step2 := testutil.SealedReply(1)
	if got := testutil.AssistantParts(in.History, in.Messages); !reflect.DeepEqual(got, append(step1, step2...)) {
		t.Fatalf("the model got %+v", got)
	}
	if strings.Contains(logs.String(), "did not open") {
		t.Fatalf("log:\n%s", logs)
	}
}
