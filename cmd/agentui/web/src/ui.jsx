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

// ToolCard shows one tool call: its name, state, input and output, and the
// Approve / Deny buttons while it waits for approval.
export function ToolCard({ id, name, state, input, output, errorText, approval, onApprove, onDeny, busy }) {
  const waiting = state === 'approval-requested';
  let label = STATE_LABELS[state] ?? state;
  if (state === 'approval-responded' && approval) label = approval.approved ? 'approved' : 'denied';
  return (
    <section
      className={`tool tool-${state}`}
      data-testid="tool"
      data-tool-name={name}
      data-tool-call-id={id}
      data-state={state}
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
          <span className="tool-io-label">Output</span>
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
          <button type="button" className="btn btn-approve" data-testid="approve" disabled={busy} onClick={onApprove}>
            Approve
          </button>
          <button type="button" className="btn btn-deny" data-testid="deny" disabled={busy} onClick={onDeny}>
            Deny
          </button>
        </div>
      )}
      {approval?.reason && <p className="approval-reason">Reason: {approval.reason}</p>}
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

export function Text({ text }) {
  return (
    <div className="text" data-testid="text">
      {text}
    </div>
  );
}

export function Message({ role, id, streaming, children }) {
  const who = role === 'user' ? 'You' : role === 'assistant' ? 'Assistant' : role;
  return (
    <li className={`message message-${role}`} data-testid="message" data-role={role} data-message-id={id} aria-busy={streaming || undefined}>
      <div className="message-role">{who}</div>
      <div className="message-body">{children}</div>
    </li>
  );
}

// MessageList keeps the newest message in view while the user has not
// scrolled away from the bottom.
export function MessageList({ children, empty, note, contentKey }) {
  const ref = useRef(null);
  const pinned = useRef(true);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && pinned.current) el.scrollTop = el.scrollHeight;
  }, [contentKey]);
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
            <li><code>hello</code>, <code>think about cats</code></li>
            <li><code>weather in Paris</code> (a server tool)</li>
            <li><code>delete /tmp/x.txt</code> (needs your approval)</li>
            <li><code>where am I</code> (a tool this page answers)</li>
            <li><code>wait 3000 ms</code> (try Stop), <code>count to 20</code>, <code>fail</code></li>
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

// Composer is the input line: Enter sends; while a reply streams, Stop
// replaces Send.
export function Composer({ busy, onSend, onStop, onRegenerate, canRegenerate, status }) {
  const [text, setText] = useState('');
  const input = useRef(null);
  useEffect(() => {
    if (!busy) input.current?.focus();
  }, [busy]);
  const submit = (e) => {
    e.preventDefault();
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
      <input
        id="chat-input"
        ref={input}
        data-testid="input"
        type="text"
        autoComplete="off"
        placeholder="Type a message and press Enter"
        value={text}
        onChange={(e) => setText(e.target.value)}
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
      <button
        type="button"
        className="btn"
        data-testid="regenerate"
        onClick={onRegenerate}
        disabled={busy || !canRegenerate}
        title="Answer the last message again"
      >
        Regenerate
      </button>
    </form>
  );
}
