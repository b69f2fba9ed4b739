package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Ledger is where a run records its server tool calls, durably and
// beside the conversation ([Input].Ledger; a handler that keeps history
// gives each run its chat's). The loop records a call as started before
// its tool runs and finished with its result after, so that a second
// attempt at the same call (a retried or replayed request, a resumed or
// re-driven run, another replica) never runs a finished call again: it
// gets the recorded result. A call that started and never finished ran
// into a crash or a stop: an at-most-once tool ([Tool].Idempotent false,
// the default) is then not run again, and the model and the person are
// told its outcome is unknown ([OutcomeUnknown]); an idempotent one runs
// again.
type Ledger interface {
	// Begin records call as started, unless it is recorded already: then
	// it returns the record and true, and records nothing. A tool runs
	// only once Begin has returned without an error.
	Begin(ctx context.Context, call ToolCall) (LedgerRecord, bool, error)
	// Finish records the call's result.
	Finish(ctx context.Context, call ToolCall, result LedgerRecord) error
}

// LedgerRecord is a call as a [Ledger] has it.
type LedgerRecord struct {
	Finished bool
	Output   json.RawMessage // the result (JSON), once finished
	IsError  bool
}

// OutcomeUnknown is the result of an at-most-once call that started and
// never finished (its run stopped or its server died while it ran), on
// any later attempt: the call is not run again.
const OutcomeUnknown = "This tool call was interrupted before its result was recorded: whether it took effect is unknown, and it was not run again."

type idempotencyKeyKey struct{}

// IdempotencyKey returns the key of the server tool call ctx runs: the
// same for every attempt at that call (it derives from the chat and the
// call id), and different for every other call. Pass it to the systems a
// tool changes (an Idempotency-Key header, a unique request id), so that
// they apply a re-run call once. "" outside a tool call.
func IdempotencyKey(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKeyKey{}).(string)
	return k
}

// idempotencyKey derives a call's key from the run's chat and its id.
func idempotencyKey(ctx context.Context, callID string) string {
	ri, _ := RunInfoFrom(ctx)
	sum := sha256.Sum256([]byte(ri.Scope + "\x00" + ri.ChatID + "\x00" + callID))
	return "agentui-" + hex.EncodeToString(sum[:16])
}
