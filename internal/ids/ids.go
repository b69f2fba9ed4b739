// Package ids generates the identifiers agentui hands out: message ids,
// tool call ids, approval ids. There is one generator so that every id has
// the same shape.
package ids

import "github.com/google/uuid"

// New returns a new time-ordered id (a UUIDv7 string), so ids sort by
// creation time in logs and storage.
func New() string {
	id, err := uuid.NewV7()
	if err != nil { // only when the system's randomness fails
		return uuid.NewString()
	}
	return id.String()
}
