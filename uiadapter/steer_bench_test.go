package uiadapter_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkSteerDelivery: a message steered into a reply whose model is
// answering (a 150 ms `wait`), sent to the replica that runs the reply
// (local) or to another one that reaches it through the shared Redis log
// (redis). At the step boundary the reply takes it: boundary-ms is the
// time from the step's finish-step chunk to the steering message's chunk
// on the reply's stream, outcome-ms the time from the finish-step to the
// steering request's answer (its sender learns it was delivered). p50 and
// p99 of each.
func BenchmarkSteerDelivery(b *testing.B) {
	for _, rl := range runLogs {
		b.Run(rl.name, func(b *testing.B) {
			owner, sender := runLogReplicas(b, rl.open)
			var boundary, outcome []time.Duration
			n := 0
			for b.Loop() {
				n++
				chat := "steer-" + strconv.Itoa(n)
				resp, err := http.Post(owner.URL, "application/json", strings.NewReader(userBody(chat, "wait 150 ms")))
				if err != nil {
					b.Fatal(err)
				}
				events := bufio.NewReader(resp.Body)
				replyID := readUntil(b, events, `"type":"start"`)
				var start struct{ MessageID string }
				_ = json.Unmarshal([]byte(replyID), &start)
				body, _ := json.Marshal(map[string]any{"id": chat, "trigger": "submit-message", "busy": "steer", "messages": []any{
					map[string]any{"id": "u1", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "wait 150 ms"}}},
					map[string]any{"id": start.MessageID, "role": "assistant", "parts": []any{}},
					map[string]any{"id": "u2", "role": "user", "parts": []any{map[string]any{"type": "text", "text": "hello"}}},
				}})
				answered := make(chan time.Time, 1)
				go func() {
					r, err := http.Post(sender.URL, "application/json", strings.NewReader(string(body)))
					if err == nil {
						a, _ := io.ReadAll(r.Body)
						r.Body.Close()
						if !strings.Contains(string(a), `"outcome":"delivered"`) {
							err = io.ErrUnexpectedEOF
						}
					}
					if err != nil {
						answered <- time.Time{}
						return
					}
					answered <- time.Now()
				}()
				readUntil(b, events, `"type":"finish-step"`)
				stepEnd := time.Now()
				readUntil(b, events, `"type":"data-steering-message"`)
				boundary = append(boundary, time.Since(stepEnd))
				at := <-answered
				if at.IsZero() {
					b.Fatal("the steering request was not answered delivered (it came after the step's end?)")
				}
				outcome = append(outcome, at.Sub(stepEnd))
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			report := func(ds []time.Duration, unit string) {
				slices.Sort(ds)
				b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, unit+"-p50-ms")
				b.ReportMetric(float64(ds[len(ds)*99/100].Microseconds())/1000, unit+"-p99-ms")
			}
			report(boundary, "boundary")
			report(outcome, "outcome")
		})
	}
}

// readUntil reads SSE lines until one holds want, and returns it.
func readUntil(b *testing.B, r *bufio.Reader, want string) string {
	b.Helper()
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatalf("the stream ended before %s: %v", want, err)
		}
		if strings.Contains(line, want) {
			return strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		}
	}
}
