// The chat over the Vercel AI SDK UI message stream: useChat from
// @ai-sdk/react against POST /api/chat (the default transport's path).
import { memo, useEffect, useRef, useState } from 'react';
import { Chat, useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { Composer, CopyButton, ErrorBox, Json, Message, MessageList, Pending, Reasoning, ToolCard, UserText, UserTurn, Usage } from './ui.jsx';
import { Markdown } from './markdown.jsx';
import { BUSY_NOTICE, errorText, isBusy, loadConversation, stopChat } from './api.js';
import { yieldingFetch } from './yieldingFetch.js';
import { getLocation, LOCATION_TOOL } from './location.js';

// THROTTLE_MS bounds how often a streaming reply re-renders: a reply of
// 10,000 deltas is 10,000 updates, and rendering each would freeze the tab.
const THROTTLE_MS = 50;

// VercelChat loads the stored conversation (a reload, a past chat from the
// list, a shared link), then starts the chat with it. A chat id the page
// just made has nothing stored, so it is not fetched.
export function VercelChat({ chatId, fresh, onTurnEnd }) {
  const [initial, setInitial] = useState(fresh ? [] : null);
  const [loadError, setLoadError] = useState(null);
  useEffect(() => {
    if (fresh) return undefined;
    const ctl = new AbortController();
    loadConversation(chatId, ctl.signal)
      .then(setInitial)
      .catch((e) => {
        if (ctl.signal.aborted) return;
        setLoadError(e.message);
        setInitial([]);
      });
    return () => ctl.abort();
  }, [chatId, fresh]);

  if (initial === null) {
    return (
      <p className="loading" data-testid="loading" role="status">
        Loading the conversation…
      </p>
    );
  }
  return <Conversation chatId={chatId} initialMessages={initial} loadError={loadError} resume={!fresh} onTurnEnd={onTurnEnd} />;
}

// Both kinds of continuation send themselves: answered approvals and
// client tool outputs.
function sendAutomaticallyWhen(options) {
  return lastAssistantMessageIsCompleteWithApprovalResponses(options) || lastAssistantMessageIsCompleteWithToolCalls(options);
}

function Conversation({ chatId, initialMessages, loadError, resume, onTurnEnd }) {
  const [chat] = useState(() => {
    const c = new Chat({
      id: chatId,
      messages: initialMessages,
      transport: new DefaultChatTransport({ api: '/api/chat', fetch: yieldingFetch }),
      sendAutomaticallyWhen,
      onToolCall: ({ toolCall }) => {
        if (toolCall.dynamic || toolCall.toolName !== LOCATION_TOOL) return;
        // Not awaited: awaiting addToolOutput inside onToolCall deadlocks
        // the chat's job queue.
        c.addToolOutput({ tool: LOCATION_TOOL, toolCallId: toolCall.toolCallId, output: getLocation() });
      },
      onFinish: () => onTurnEnd?.(),
    });
    return c;
  });
  // resume: a reply still being produced when the page loaded goes on
  // showing (GET /api/chat/{id}/stream; 204 when there is none).
  const { messages, status, error, sendMessage, stop, regenerate, addToolApprovalResponse, clearError, setMessages, resumeStream } = useChat({
    chat,
    resume,
    experimental_throttle: THROTTLE_MS,
  });
  // Leaving the chat (New chat, another chat, the protocol switch) stops
  // reading its reply; the reply itself goes on on the server.
  useEffect(
    () => () => {
      if (chat.status === 'submitted' || chat.status === 'streaming') chat.stop();
    },
    [chat],
  );
  const [actionError, setActionError] = useState(loadError);
  // The server refused this tab's message because a reply is being
  // produced in this chat from elsewhere (409 "busy"): show that reply
  // instead of the refusal. The stored conversation holds the other
  // tab's message; the reply then streams in (resume).
  useEffect(() => {
    if (!error || !isBusy(error.message)) return undefined;
    const ctl = new AbortController();
    loadConversation(chatId, ctl.signal)
      .then((stored) => {
        clearError();
        setMessages(stored);
        setActionError(BUSY_NOTICE);
        return resumeStream();
      })
      .catch((e) => {
        if (!ctl.signal.aborted) setActionError(errorText(e?.message ?? String(e)));
      });
    return () => ctl.abort();
  }, [error, chatId, clearError, setMessages, resumeStream]);
  const [editing, setEditing] = useState(null); // the id of the user message being edited
  const busy = status === 'submitted' || status === 'streaming';

  // The callbacks messages get stay the same objects, so a finished
  // message does not render again while the next one streams.
  const live = useRef({});
  live.current = { busy, sendMessage, regenerate, addToolApprovalResponse, setActionError, setEditing };
  const [actions] = useState(() => {
    const report = (p) => p.catch((e) => live.current.setActionError(errorText(e?.message ?? String(e))));
    return {
      report,
      answer: (approvalId, approved, reason) => report(live.current.addToolApprovalResponse({ id: approvalId, approved, reason })),
      edit: (id) => live.current.setEditing(id),
      cancelEdit: () => live.current.setEditing(null),
      // An edited message replaces the one with its id, and everything
      // after it is answered again (the server truncates its copy there).
      saveEdit: (id, text) => {
        live.current.setEditing(null);
        live.current.setActionError(null);
        report(live.current.sendMessage({ text, messageId: id }));
      },
      regenerate: () => {
        live.current.setActionError(null);
        report(live.current.regenerate());
      },
    };
  });
  // The run outlives its request: Stop asks the server to stop it, then
  // stops reading.
  const stopRun = async () => {
    await stopChat(chatId, '/api/chat');
    await stop();
  };

  const last = messages.at(-1);
  const contentKey = messages.length + ':' + partsLength(last) + ':' + status;
  const failedLive = status === 'error' && last?.role === 'assistant';
  return (
    <>
      <MessageList empty={messages.length === 0} contentKey={contentKey} pinKey={messages.filter((m) => m.role === 'user').length}>
        {messages.map((m, i) => (
          <VercelMessage
            key={m.id}
            message={m}
            isLast={i === messages.length - 1}
            busy={busy && i === messages.length - 1}
            anyBusy={busy}
            failed={(failedLive && i === messages.length - 1) || m.metadata?.finishReason === 'error'}
            editing={editing === m.id}
            actions={actions}
          />
        ))}
        {status === 'submitted' && last?.role !== 'assistant' && <Pending />}
      </MessageList>
      <ErrorBox
        message={error ? errorText(error.message) : actionError}
        onDismiss={() => {
          clearError();
          setActionError(null);
        }}
      />
      <Composer
        status={status}
        busy={busy}
        onSend={(text) => {
          setActionError(null);
          actions.report(sendMessage({ text }));
        }}
        onStop={() => actions.report(stopRun())}
      />
    </>
  );
}

function partsLength(m) {
  let n = 0;
  for (const p of m?.parts ?? []) n += (p.text?.length ?? 0) + 1;
  return n;
}

// visible tells whether a part shows anything (a reply stopped before its
// first word holds only a step-start).
function visible(part) {
  return part.type !== 'step-start' && !(part.type === 'text' && !part.text);
}

function textOf(m) {
  return m.parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('\n\n');
}

// VercelMessage is one message; it renders again only when its message,
// or whether it is the last or busy one, changes.
const VercelMessage = memo(function VercelMessage({ message: m, isLast, busy, anyBusy, failed, editing, actions }) {
  const streaming = busy && m.role === 'assistant';
  if (m.role === 'user') {
    return (
      <UserTurn id={m.id} text={textOf(m)} editing={editing} busy={anyBusy} actions={actions}>
        {m.parts.map((part, j) => (
          <Part key={j} part={part} role="user" busy={anyBusy} current={isLast} onAnswer={actions.answer} />
        ))}
      </UserTurn>
    );
  }
  const text = textOf(m);
  const done = !streaming;
  return (
    <Message
      role={m.role}
      id={m.id}
      streaming={streaming}
      failed={failed}
      actions={
        done && (
          <>
            {text && <CopyButton text={text} />}
            {isLast && (
              <button type="button" className="btn btn-small btn-quiet" data-testid="regenerate" disabled={anyBusy} onClick={actions.regenerate} title="Answer the last message again">
                Regenerate
              </button>
            )}
          </>
        )
      }
      footer={done && <Usage usage={m.metadata?.usage} model={m.metadata?.model} />}
    >
      {m.parts.map((part, j) => (
        <Part key={j} part={part} role={m.role} busy={anyBusy} streaming={streaming} current={isLast} onAnswer={actions.answer} />
      ))}
      {m.role === 'assistant' && done && !failed && !m.parts.some(visible) && (
        <p className="no-reply" data-testid="no-reply">
          No reply (stopped).
        </p>
      )}
    </Message>
  );
});

function Part({ part, role, busy, streaming, current, onAnswer }) {
  switch (part.type) {
    case 'text':
      if (!part.text) return null;
      return role === 'user' ? <UserText text={part.text} /> : <Markdown text={part.text} streaming={streaming && part.state === 'streaming'} />;
    case 'reasoning':
      return <Reasoning text={part.text} streaming={part.state === 'streaming'} />;
    case 'step-start':
      return null;
    case 'source-url':
      return (
        <a className="source" href={part.url} target="_blank" rel="noreferrer noopener">
          {part.title || part.url}
        </a>
      );
    case 'source-document':
      return <span className="source">{part.title}</span>;
    case 'file':
      return (
        <a className="source" href={part.url} download={part.filename} target="_blank" rel="noreferrer noopener">
          {part.filename || part.mediaType || 'file'}
        </a>
      );
    default:
      break;
  }
  if (part.type === 'dynamic-tool' || part.type.startsWith('tool-')) {
    const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
    // Only the last message's approvals can still be answered: a message
    // sent while one waited moved the conversation on without it.
    const stale = part.state === 'approval-requested' && !current;
    return (
      <ToolCard
        id={part.toolCallId}
        name={name}
        state={stale ? 'approval-expired' : part.state}
        input={part.input}
        output={part.output}
        preliminary={part.state === 'output-available' && part.preliminary}
        errorText={part.errorText}
        approval={part.approval}
        busy={busy}
        onApprove={() => onAnswer(part.approval.id, true)}
        onDeny={(reason) => onAnswer(part.approval.id, false, reason)}
      />
    );
  }
  if (part.type.startsWith('data-')) {
    return (
      <div className="data-part">
        <Json value={part.data} />
      </div>
    );
  }
  return null;
}
