package uiadapter

import (
	"net/http"
	"strconv"
	"sync"

	"github.com/agentui/agentui/internal/wire"
)

// resumeRetryAfter is the Retry-After of a resume over the bound, in
// seconds: a slot frees when one of the scope's streams ends, which the
// server cannot foresee.
const resumeRetryAfter = 1

// scopeSlots counts the resumed streams each scope has open.
type scopeSlots struct {
	max  int // < 1: no bound
	mu   sync.Mutex
	held map[string]int
}

func newScopeSlots(n int) *scopeSlots { return &scopeSlots{max: n, held: map[string]int{}} }

// take takes one of scope's slots; false when all are taken. release
// gives it back.
func (s *scopeSlots) take(scope string) bool {
	if s.max < 1 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[scope] >= s.max {
		return false
	}
	s.held[scope]++
	return true
}

func (s *scopeSlots) release(scope string) {
	if s.max < 1 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[scope]--; s.held[scope] <= 0 {
		delete(s.held, scope)
	}
}

// tooManyResumes is the refusal of a resume over the scope's bound.
func tooManyResumes(w http.ResponseWriter) *wire.Error {
	w.Header().Set("Retry-After", strconv.Itoa(resumeRetryAfter))
	return &wire.Error{Status: http.StatusTooManyRequests, Message: "too many resumed streams open for this user: close one, or try again in " + strconv.Itoa(resumeRetryAfter) + " s"}
}
