// CopilotKit (its v2 React API) against agentui through the CopilotKit
// runtime in server.mjs, wired as docs/frontends.md says: <CopilotChat>, a
// frontend tool (useFrontendTool) and approvals as AG-UI interrupts
// (useInterrupt).
//
// Without ?history the page sends no credential, so agentui keeps
// nothing: the thread the runtime sends is the conversation. With
// ?history=1 it gets a bearer token from agentui (POST /api/token; the
// scope cookie pins it to this browser across reloads) and sends it as
// Authorization, which the runtime forwards. ?thread=ID names the thread
// (CopilotChat then connects to it on mount: a reload restores it).
import { useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { CopilotChat, CopilotKit, useAgent, useCopilotKit, useFrontendTool, useInterrupt } from '@copilotkit/react-core/v2';
import '@copilotkit/react-core/v2/styles.css';
import { z } from 'zod';

const params = new URLSearchParams(location.search);
const HISTORY = params.has('history');
const threadId = params.get('thread') || undefined;

function Tools() {
  useFrontendTool({
    name: 'get_location',
    description: "The user's current city.",
    parameters: z.object({}),
    handler: async () => ({ city: 'Paris' }),
  });
  // An approval-required tool arrives as an interrupt; without this hook
  // the chat waits on it.
  useInterrupt({
    render: ({ interrupt, resolve }) => (
      <div data-testid="approval">
        <p>{interrupt?.message}</p>
        <button data-testid="approve" onClick={() => resolve({ approved: true })}>
          Approve
        </button>
        <button data-testid="deny" onClick={() => resolve({ approved: false, reason: 'not now' })}>
          Deny
        </button>
      </div>
    ),
  });
  return null;
}

// CopilotChat shows an edit button only when the app passes onEditMessage
// and does the edit: the thread up to the message, the new text under the
// same id, and a run (agentui replaces its copy of that message and drops
// what followed).
function Chat() {
  const { agent } = useAgent();
  const { copilotkit } = useCopilotKit();
  const onEditMessage = ({ message }) => {
    const text = window.prompt('Edit your message', message.content);
    if (!text) return;
    const i = agent.messages.findIndex((m) => m.id === message.id);
    agent.setMessages([...agent.messages.slice(0, i), { ...message, content: text }]);
    copilotkit.runAgent({ agent });
  };
  return <CopilotChat threadId={threadId} messageView={{ userMessage: { onEditMessage } }} />;
}

function App() {
  const [token, setToken] = useState(HISTORY ? null : '');
  useEffect(() => {
    if (!HISTORY) return;
    fetch('/api/token', { method: 'POST' })
      .then((r) => r.json())
      .then((j) => setToken(j.token));
  }, []);
  if (token === null) return null;
  return (
    <CopilotKit runtimeUrl="/api/copilotkit" useSingleEndpoint={false} agent="default" threadId={threadId} headers={token ? { Authorization: `Bearer ${token}` } : {}}>
      <Tools />
      <div style={{ height: '100vh' }}>
        <Chat />
      </div>
    </CopilotKit>
  );
}

createRoot(document.getElementById('root')).render(<App />);
