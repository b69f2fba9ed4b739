package uiadapter

import (
	"net/http"
	"strconv"
	"sync"
)

// DefaultMaxResumes is how many resumed streams one scope may have open
// at once on a handler (WithMaxResumes): a person with a few tabs on
// chats whose replies are running, with room to spare.
const DefaultMaxResumes = 8

// resumeRetryAfter is the Retry-After of a resume over the bound, in
// seconds: a slot frees when one of the scope's streams ends, which the
// server cannot foresee.
const resumeRetryAfter = 1

// WithMaxResumes bounds how many streams of runs one scope may have
// resumed at once on this handler: GET {api}/{id}/stream
// ([Handler.ResumeHandler]) and an AG-UI connect to a running run
// ([Handler.ConnectHandler]). A resume over the bound gets 429 with
// Retry-After before anything is read, and nothing else changes: the run
// goes on, the scope's other streams too, and a retry once one of them
// has ended gets the whole stream. A resume replays the run from its log,
// which costs CPU and, read from another replica's shared log, a page of
// memory while it lasts; the bound keeps one user from spending either
// many times over. n < 1 removes the bound. The default is
// [DefaultMaxResumes].
func WithMaxResumes(n int) Option { return func(c *config) { c.resumes = newScopeSlots(n) } }

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
func tooManyResumes(w http.ResponseWriter) *Error {
	w.Header().Set("Retry-After", strconv.Itoa(resumeRetryAfter))
	return &Error{Status: http.StatusTooManyRequests, Message: "too many resumed streams open for this user: close one, or try again in " + strconv.Itoa(resumeRetryAfter) + " s"}
}
