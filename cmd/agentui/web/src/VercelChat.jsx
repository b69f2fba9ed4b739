// The chat over the Vercel AI SDK UI message stream: useChat from
// @ai-sdk/react against POST /api/chat (the default transport's path).
import { useEffect, useState } from 'react';
import { Chat, useChat } from '@ai-sdk/react';
import {
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
} from 'ai';
import { Composer, ErrorBox, Json, Message, MessageList, Pending, Reasoning, Text, ToolCard } from './ui.jsx';
import { getLocation, LOCATION_TOOL } from './location.js';

// VercelChat loads the stored conversation (a reload, or a shared link),
// then starts the chat with it. A chat id the page just made has nothing
// stored, so it is not fetched.
export function VercelChat({ chatId, fresh }) {
  const [initial, setInitial] = useState(fresh ? [] : null);
  const [loadError, setLoadError] = useState(null);
  useEffect(() => {
    if (fresh) return undefined;
    const ctl = new AbortController();
    fetch('/api/chat/' + encodeURIComponent(chatId), { headers: { accept: 'application/json' }, signal: ctl.signal })
      .then(async (res) => {
        if (res.status === 404) return [];
        if (!res.ok) throw new Error(`Could not load this conversation (HTTP ${res.status}).`);
        const messages = await res.json();
        if (!Array.isArray(messages)) throw new Error('Could not load this conversation (unexpected response).');
        return messages;
      })
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
  return <Conversation chatId={chatId} initialMessages={initial} loadError={loadError} resume={!fresh} />;
}

// Both kinds of continuation send themselves: answered approvals and
// client tool outputs.
function sendAutomaticallyWhen(options) {
  return lastAssistantMessageIsCompleteWithApprovalResponses(options) || lastAssistantMessageIsCompleteWithToolCalls(options);
}

function Conversation({ chatId, initialMessages, loadError, resume }) {
  const [chat] = useState(() => {
    const c = new Chat({
      id: chatId,
      messages: initialMessages,
      transport: new DefaultChatTransport({ api: '/api/chat' }),
      sendAutomaticallyWhen,
      onToolCall: ({ toolCall }) => {
        if (toolCall.dynamic || toolCall.toolName !== LOCATION_TOOL) return;
        // Not awaited: awaiting addToolOutput inside onToolCall deadlocks
        // the chat's job queue.
        c.addToolOutput({ tool: LOCATION_TOOL, toolCallId: toolCall.toolCallId, output: getLocation() });
      },
    });
    return c;
  });
  // resume: a reply still being produced when the page loaded goes on
  // showing (GET /api/chat/{id}/stream; 204 when there is none).
  const { messages, status, error, sendMessage, stop, regenerate, addToolApprovalResponse, clearError } = useChat({ chat, resume });
  // The run outlives its request: Stop asks the server to stop it, then
  // stops reading.
  const stopRun = async () => {
    await fetch('/api/chat/' + encodeURIComponent(chatId) + '/stop', { method: 'POST' }).catch(() => {});
    await stop();
  };
  // Leaving the chat (New chat, the protocol switch) stops its reply.
  useEffect(
    () => () => {
      if (chat.status === 'submitted' || chat.status === 'streaming') chat.stop();
    },
    [chat],
  );
  const [actionError, setActionError] = useState(loadError);
  const busy = status === 'submitted' || status === 'streaming';
  const report = (p) => p.catch((e) => setActionError(e?.message ?? String(e)));
  const answer = (approvalId, approved) => report(addToolApprovalResponse({ id: approvalId, approved }));

  const last = messages.at(-1);
  const contentKey = messages.length + ':' + (last ? JSON.stringify(last.parts).length : 0) + ':' + status;
  return (
    <>
      <MessageList empty={messages.length === 0} contentKey={contentKey}>
        {messages.map((m, i) => (
          <Message key={m.id} role={m.role} id={m.id} streaming={busy && i === messages.length - 1 && m.role === 'assistant'}>
            {m.parts.map((part, j) => (
              <Part key={j} part={part} busy={busy} current={i === messages.length - 1} onAnswer={answer} />
            ))}
            {m.role === 'assistant' && !(busy && i === messages.length - 1) && !m.parts.some(visible) && (
              <p className="no-reply" data-testid="no-reply">
                No reply (stopped).
              </p>
            )}
          </Message>
        ))}
        {status === 'submitted' && last?.role !== 'assistant' && (
          <Pending />
        )}
      </MessageList>
      <ErrorBox
        message={error?.message ?? actionError}
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
          report(sendMessage({ text }));
        }}
        onStop={() => report(stopRun())}
        onRegenerate={() => {
          setActionError(null);
          report(regenerate());
        }}
        canRegenerate={messages.length > 0}
      />
    </>
  );
}

// visible tells whether a part shows anything (a reply stopped before its
// first word holds only a step-start).
function visible(part) {
  return part.type !== 'step-start' && !(part.type === 'text' && !part.text);
}

function Part({ part, busy, current, onAnswer }) {
  switch (part.type) {
    case 'text':
      return part.text ? <Text text={part.text} /> : null;
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
      return part.mediaType?.startsWith('image/') ? (
        <img className="file-image" src={part.url} alt={part.filename || 'image'} />
      ) : (
        <a className="source" href={part.url} download={part.filename}>
          {part.filename || 'file'}
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
        errorText={part.errorText}
        approval={part.approval}
        busy={busy}
        onApprove={() => onAnswer(part.approval.id, true)}
        onDeny={() => onAnswer(part.approval.id, false)}
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
