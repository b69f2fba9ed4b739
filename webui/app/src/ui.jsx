// Presentational pieces both protocols share: messages, tool cards,
// reasoning, the composer and the error box. Every element a test needs
// carries a data-testid.
import { useEffect, useLayoutEffect, useRef, useState } from 'react';

const STATE_LABELS = {
  'input-streaming': 'receiving input',
  'input-available': 'running',
  'approval-requested': 'needs approval',
  'approval-responded': 'answered',
  'approval-expired': 'not answered',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
};

export function Json({ value }) {
  if (value === undefined) return null;
  let text;
  try {
    if (typeof value === 'string') text = value;
    else {
      // Small values stay on one line; larger ones are indented.
      text = JSON.stringify(value);
      if (text.length > 72) text = JSON.stringify(value, null, 2);
    }
  } catch {
    text = String(value);
  }
  return <pre className="json">{text}</pre>;
}

// ToolCard shows one tool call: its name, state, input and output (or,
// while a streaming tool runs, its latest progress: preliminary), and,
// while it waits for approval, Approve and Deny with an optional reason
// (the model reads it with the denial).
export function ToolCard({ id, name, state, input, output, preliminary, errorText, approval, onApprove, onDeny, busy }) {
  const waiting = state === 'approval-requested';
  const [reason, setReason] = useState('');
  let label = STATE_LABELS[state] ?? state;
  if (state === 'approval-responded' && approval) label = approval.approved ? 'approved' : 'denied';
  if (preliminary) label = 'working';
  return (
    <section
      className={`tool tool-${state}`}
      data-testid="tool"
      data-tool-name={name}
      data-tool-call-id={id}
      data-state={state}
      data-preliminary={preliminary ? 'true' : undefined}
      aria-label={`Tool call ${name}`}
    >
      <header className="tool-head">
        <span className="tool-icon" aria-hidden="true">⚙</span>
        <code className="tool-name" data-testid="tool-name">{name}</code>
        <span className={`badge badge-${state}`} data-testid="tool-state">{label}</span>
      </header>
      {input !== undefined && (
        <div className="tool-io">
          <span className="tool-io-label">Input</span>
          <Json value={input} />
        </div>
      )}
      {output !== undefined && (
        <div className="tool-io" data-testid="tool-output">
          <span className="tool-io-label">{preliminary ? 'Progress' : 'Output'}</span>
          <Json value={output} />
        </div>
      )}
      {errorText && (
        <div className="tool-io tool-error" data-testid="tool-error">
          <span className="tool-io-label">Error</span>
          <pre className="json">{errorText}</pre>
        </div>
      )}
      {waiting && (
        <div className="approval" role="group" aria-label={`Approve or deny ${name}`}>
          <span className="approval-question">Allow this tool call?</span>
          <div className="approval-actions">
            <button type="button" className="btn btn-approve" data-testid="approve" disabled={busy} onClick={onApprove}>
              Approve
            </button>
            <input
              className="approval-reason-input"
              data-testid="deny-reason"
              aria-label="Reason for denying (optional)"
              placeholder="Reason (optional)"
              maxLength={500}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              onKeyDown={(e) => {
                if (e.key === 'Enter' && !busy) onDeny(reason.trim() || undefined);
              }}
            />
            <button type="button" className="btn btn-deny" data-testid="deny" disabled={busy} onClick={() => onDeny(reason.trim() || undefined)}>
              Deny
            </button>
          </div>
        </div>
      )}
      {approval?.reason && (
        <p className="approval-reason" data-testid="approval-reason">
          Reason: {approval.reason}
        </p>
      )}
    </section>
  );
}

export function Reasoning({ text, streaming }) {
  return (
    <details className="reasoning" data-testid="reasoning" open={streaming || undefined}>
      <summary>{streaming ? 'Thinking…' : 'Reasoning'}</summary>
      <p className="reasoning-text">{text}</p>
    </details>
  );
}

// UserText shows what the user typed as they typed it: plain text, line
// breaks kept, nothing interpreted.
export function UserText({ text }) {
  return (
    <div className="text user-text" data-testid="text">
      {text}
    </div>
  );
}

export function Message({ role, id, streaming, failed, children, actions, footer }) {
  const who = role === 'user' ? 'You' : role === 'assistant' ? 'Assistant' : role;
  return (
    <li
      className={`message message-${role}${failed ? ' message-failed' : ''}`}
      data-testid="message"
      data-role={role}
      data-message-id={id}
      data-failed={failed ? 'true' : undefined}
      aria-busy={streaming || undefined}
    >
      <div className="message-role">{who}</div>
      <div className="message-body">
        {children}
        {failed && (
          <p className="failed-note" data-testid="failed">
            This reply failed before it was finished.
          </p>
        )}
        {(actions || footer) && (
          <div className="message-foot">
            {actions && <div className="message-actions">{actions}</div>}
            {footer}
          </div>
        )}
      </div>
    </li>
  );
}

// Usage shows a reply's token usage (and model) as the server reported it.
export function Usage({ usage, model }) {
  if (!usage) return null;
  const n = (x) => (typeof x === 'number' ? x.toLocaleString('en-US') : '?');
  return (
    <span className="usage" data-testid="usage" title={model ? 'Model: ' + model : undefined}>
      {n(usage.inputTokens)} in · {n(usage.outputTokens)} out
      {usage.reasoningTokens ? ` · ${n(usage.reasoningTokens)} reasoning` : ''}
      {model ? ` · ${model}` : ''}
    </span>
  );
}

// CopyButton copies text to the clipboard and says so for a moment.
export function CopyButton({ text }) {
  const [done, setDone] = useState(false);
  useEffect(() => {
    if (!done) return undefined;
    const t = setTimeout(() => setDone(false), 1500);
    return () => clearTimeout(t);
  }, [done]);
  return (
    <button
      type="button"
      className="btn btn-small btn-quiet"
      data-testid="copy"
      onClick={() =>
        navigator.clipboard?.writeText(text).then(
          () => setDone(true),
          () => {},
        )
      }
    >
      {done ? 'Copied' : 'Copy'}
    </button>
  );
}

// UserTurn is a message the user sent: its content (children), or the
// editor while it is being edited, with Edit under it. actions holds
// edit(id), saveEdit(id, text) and cancelEdit().
export function UserTurn({ id, text, editing, busy, actions, children }) {
  return (
    <Message
      role="user"
      id={id}
      actions={
        !editing && (
          <button type="button" className="btn btn-small btn-quiet" data-testid="edit" disabled={busy} onClick={() => actions.edit(id)}>
            Edit
          </button>
        )
      }
    >
      {editing ? <UserEditor text={text} onSave={(t) => actions.saveEdit(id, t)} onCancel={actions.cancelEdit} /> : children}
    </Message>
  );
}

// UserEditor edits a sent message in place: Save sends the new text in
// its stead (everything after it is answered again), Escape cancels.
export function UserEditor({ text, onSave, onCancel }) {
  const [value, setValue] = useState(text);
  const ref = useRef(null);
  useEffect(() => {
    const el = ref.current;
    el?.focus();
    el?.setSelectionRange(el.value.length, el.value.length);
  }, []);
  const save = () => {
    const t = value.trim();
    if (t) onSave(t);
  };
  return (
    <div className="editor" data-testid="editor">
      <textarea
        ref={ref}
        data-testid="edit-input"
        aria-label="Edit your message"
        value={value}
        rows={2}
        onChange={(e) => setValue(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Escape') onCancel();
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault();
            save();
          }
        }}
      />
      <div className="editor-actions">
        <button type="button" className="btn btn-small" onClick={onCancel}>
          Cancel
        </button>
        <button type="button" className="btn btn-small btn-primary" data-testid="edit-save" disabled={!value.trim()} onClick={save}>
          Send
        </button>
      </div>
    </div>
  );
}

// MessageList keeps the newest message in view while the user has not
// scrolled away from the bottom; sending a message (pinKey changes) or
// resizing the window while at the bottom keeps it there too.
export function MessageList({ children, empty, note, contentKey, pinKey }) {
  const ref = useRef(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    pinned.current = true;
  }, [pinKey]);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [contentKey, pinKey]);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof ResizeObserver === 'undefined') return undefined;
    // A resize runs this before the scroll event it causes, so pinned
    // still says where the user was.
    const ro = new ResizeObserver(() => {
      if (pinned.current) el.scrollTop = el.scrollHeight;
    });
    ro.observe(el);
    return () => ro.disconnect();
  }, [empty]);
  return (
    <div
      className="messages-scroll"
      ref={ref}
      onScroll={(e) => {
        const el = e.currentTarget;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
      }}
    >
      {empty ? (
        <div className="empty" data-testid="empty">
          {note && <p className="note">{note}</p>}
          <p>Say something to start. The demo model knows a few tricks:</p>
          <ul>
            <li><code>hello</code>, <code>think about cats</code>, <code>markdown</code></li>
            <li><code>weather in Paris</code> (a server tool)</li>
            <li><code>delete /tmp/x.txt</code> (needs your approval)</li>
            <li><code>where am I</code> (a tool this page answers)</li>
            <li><code>wait 3000 ms</code> (try Stop), <code>count to 10000</code>, <code>fail</code></li>
          </ul>
        </div>
      ) : (
        <ol className="messages" data-testid="messages" aria-live="polite">
          {children}
        </ol>
      )}
    </div>
  );
}

// Pending stands in for the assistant's reply until its first part arrives.
export function Pending() {
  return (
    <li className="message message-assistant pending" data-testid="pending" aria-label="Waiting for the reply">
      <div className="message-role">Assistant</div>
      <div className="message-body">
        <span className="dots" aria-hidden="true">
          <span />
          <span />
          <span />
        </span>
      </div>
    </li>
  );
}

export function ErrorBox({ message, onDismiss }) {
  if (!message) return null;
  return (
    <div className="error" role="alert" data-testid="error">
      <span>{message}</span>
      {onDismiss && (
        <button type="button" className="btn btn-link" onClick={onDismiss} aria-label="Dismiss the error">
          Dismiss
        </button>
      )}
    </div>
  );
}

// Composer is where a message is written: Enter sends, Shift+Enter starts
// a new line, and the box grows with its text. While a reply streams,
// Stop replaces Send (typing goes on).
export function Composer({ busy, onSend, onStop, status, placeholder }) {
  const [text, setText] = useState('');
  const input = useRef(null);
  useEffect(() => {
    if (!busy) input.current?.focus();
  }, [busy]);
  const submit = (e) => {
    e?.preventDefault();
    const t = text.trim();
    if (!t || busy) return;
    onSend(t);
    setText('');
  };
  return (
    <form className="composer" onSubmit={submit} data-testid="composer" data-status={status}>
      <label htmlFor="chat-input" className="visually-hidden">
        Message
      </label>
      <textarea
        id="chat-input"
        ref={input}
        data-testid="input"
        rows={1}
        autoComplete="off"
        placeholder={placeholder ?? 'Message (Shift+Enter for a new line)'}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) submit(e);
        }}
      />
      {busy ? (
        <button type="button" className="btn btn-stop" data-testid="stop" onClick={onStop}>
          Stop
        </button>
      ) : (
        <button type="submit" className="btn btn-primary" data-testid="send" disabled={!text.trim()}>
          Send
        </button>
      )}
    </form>
  );
}
