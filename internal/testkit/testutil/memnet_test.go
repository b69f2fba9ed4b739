package testutil

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"testing/synctest"
	"time"
)

// Through an InMemoryServer, in a synctest bubble: a flushed frame reaches
// the client while its handler waits, a handler's wait passes on the
// bubble's clock, and a client that leaves ends its request's context, as
// over a socket.
func TestInMemoryServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		left := make(chan error, 1)
		srv := InMemoryServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "first\n")
			_ = http.NewResponseController(w).Flush()
			if r.URL.Path == "/wait" {
				time.Sleep(time.Hour)
				_, _ = io.WriteString(w, "second\n")
				return
			}
			<-r.Context().Done()
			left <- r.Context().Err()
		}))

		start := time.Now()
		resp, err := srv.Client().Get(srv.URL + "/wait")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(body) != "first\nsecond\n" || time.Since(start) != time.Hour {
			t.Fatalf("got %q (%v) after %v, want both lines after an hour", body, err, time.Since(start))
		}

		resp, err = srv.Client().Get(srv.URL + "/leave")
		if err != nil {
			t.Fatal(err)
		}
		line := make([]byte, len("first\n"))
		if _, err := io.ReadFull(resp.Body, line); err != nil || string(line) != "first\n" {
			t.Fatalf("read %q, %v before the handler returned", line, err)
		}
		resp.Body.Close()
		if err := <-left; !errors.Is(err, context.Canceled) {
			t.Fatalf("the handler's context ended with %v", err)
		}
	})
}

// A read deadline ends a read that waits, also one set while it waits
// (net/http aborts its background read so), and a closed end reads EOF
// once what was sent is read.
func TestMemConnDeadlinesAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := memPipe()
		_ = a.SetReadDeadline(time.Now().Add(time.Second))
		start := time.Now()
		if _, err := a.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != time.Second {
			t.Fatalf("read ended with %v after %v, want a timeout after 1s", err, time.Since(start))
		}
		_ = a.SetReadDeadline(time.Time{})
		done := make(chan error, 1)
		go func() { _, err := a.Read(make([]byte, 1)); done <- err }()
		synctest.Wait()
		_ = a.SetReadDeadline(time.Now().Add(-time.Second))
		if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("a deadline set during the read: %v", err)
		}

		_, _ = b.Write([]byte("last"))
		_ = b.Close()
		if _, err := b.Write([]byte("x")); err == nil {
			t.Fatal("wrote to a closed end")
		}
		_ = a.SetReadDeadline(time.Time{})
		if got, err := io.ReadAll(a); err != nil || string(got) != "last" {
			t.Fatalf("read %q, %v after the other end closed", got, err)
		}
		if _, err := a.Write([]byte("x")); err == nil {
			t.Fatal("wrote to an end whose reader has gone")
		}
	})
}
