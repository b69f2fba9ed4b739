package wire

// What a person is told when a reply does not end well: the text of the
// protocol's error event, stored with the reply it ended. Each says what
// happened and what to do; the cause stays in the server's log.

// ErrorMessage is what the client sees when a run fails after streaming
// has started. The cause is logged.
const ErrorMessage = "An error occurred."

// Messages for run failures the user can act on: one for each of the
// agent errors a model wraps, the same whichever provider failed. They
// say what happened and what to do, never the provider's detail (status,
// body, address, key), which stays in the log.
const (
	// ContextOverflowMessage: the model's context window is full.
	ContextOverflowMessage = "This conversation is too long for the model: start a new chat."
	// ModelBusyMessage: the model's provider is rate-limiting, overloaded
	// or failing.
	ModelBusyMessage = "The model is busy right now: try again in a moment."
	// ModelUnreachableMessage: the model's provider could not be reached.
	ModelUnreachableMessage = "The model could not be reached: try again in a moment."
	// ModelRejectedMessage: the provider would not take the request as it
	// is.
	ModelRejectedMessage = "The model could not take this request: try changing it, or start a new chat."
	// ModelAccessDeniedMessage: the provider refused the server's
	// credentials; only the operator can fix that.
	ModelAccessDeniedMessage = "The service is misconfigured: please tell its operator."
)

// DiedMessage ends the log of a run whose process died: what it had
// produced is stored (stop reason aborted).
const DiedMessage = "The reply was cut short: the server producing it stopped."

// EndNotShownMessage ends a stream on another replica whose run stored
// its reply but could not end its shared log: the reply is whole in the
// conversation, and a reload shows it.
const EndNotShownMessage = "The rest of this reply could not be shown here: reload the chat to see it."

// Messages a run cut by a bound ends with.
const (
	// RunTooLongMessage: the run went on past RunLimits.MaxDuration.
	RunTooLongMessage = "The reply was stopped: it ran longer than the server allows."
	// RunTooLargeMessage: the run streamed more than RunLimits.MaxOutput.
	RunTooLargeMessage = "The reply was stopped: it grew longer than the server allows."
)

// Messages the client sees when a reply streamed but did not end well.
const (
	// SaveFailedMessage: the reply was not stored.
	SaveFailedMessage = "The reply could not be saved."
	// SaveUncertainMessage: the store did not answer in time, so whether
	// the reply was stored is not known yet; the server keeps trying.
	SaveUncertainMessage = "The reply may not have been saved."
	// LockLostMessage: the run was stopped because the server could no
	// longer hold the chat for it (another request took it over, or the
	// store was unreachable for longer than the lock lasts).
	LockLostMessage = "The reply was stopped: the server lost its hold on this chat."
)

// ShutdownMessage ends a stream that the handler's Shutdown cut: what the run produced
// until then is kept (with history, stored with stop reason aborted).
const ShutdownMessage = "The reply was cut short: the server is restarting."

// QueuedAtShutdownMessage ends the stream of a request whose queued
// message had not run when its server began to shut down: the message
// stays queued, and another replica or the next start runs it.
const QueuedAtShutdownMessage = "The server is restarting: your message is still queued and will be answered."
