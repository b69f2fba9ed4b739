package gemini

import (
	"context"
	"time"
)

// SetSleep replaces the wait between retries, so that tests see the
// waits asked for without waiting.
func SetSleep(m *Model, f func(context.Context, time.Duration) error) { m.retry.Sleep = f }
