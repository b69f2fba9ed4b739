// assistant-ui against agentui, wired as docs/frontends.md says: its AI SDK
// runtime (useChatRuntime + AssistantChatTransport) on POST /api/chat, a
// frontend tool from a toolkit, approvals through the tool's renderer.
//
// Without ?history the page has no scope credential, so agentui keeps
// nothing: the page's messages are the conversation. With ?history=1 it
// first gets agentui's scope cookie (POST /api/token), so agentui keeps
// the conversation; the thread list is then agentui's (GET /api/chats),
// the thread id is in ?thread=, and a reload restores the thread (GET
// /api/chat/{id}). With ?history=auto it asks for nothing first: served by
// a dev server that proxies /api (dev.mjs), its first API request gets the
// cookie.
import { useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import {
  ActionBarPrimitive,
  BranchPickerPrimitive,
  AssistantRuntimeProvider,
  AuiConfig,
  ComposerPrimitive,
  MessagePrimitive,
  ThreadPrimitive,
  Tools,
  defineToolkit,
  useAui,
  useAuiState,
  useRemoteThreadListRuntime,
} from '@assistant-ui/react';
import { AssistantChatTransport, createResumableSessionStorage, useChatRuntime } from '@assistant-ui/react-ai-sdk';
import { lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { z } from 'zod';

const params = new URLSearchParams(location.search);
const HISTORY = params.has('history');
const ASK_TOKEN = HISTORY && params.get('history') !== 'auto';

// get_location runs in the page; delete_file runs on the server once the
// user approves it here.
const toolkit = defineToolkit({
  get_location: {
    type: 'frontend',
    description: "The user's current city.",
    parameters: z.object({}),
    execute: async () => ({ city: 'Paris' }),
  },
  delete_file: { type: 'backend', render: DeleteFile },
});
const config = AuiConfig({ tools: Tools({ toolkit }) });

function DeleteFile({ args, approval, respondToApproval, result }) {
  if (approval && approval.approved === undefined) {
    return (
      <div data-testid="approval">
        Delete {args?.path}?{' '}
        <button data-testid="approve" onClick={() => respondToApproval({ approved: true })}>
          Approve
        </button>
        <button data-testid="deny" onClick={() => respondToApproval({ approved: false, reason: 'no' })}>
          Deny
        </button>
      </div>
    );
  }
  return <div data-testid="tool-delete_file">delete_file: {approval?.approved === false ? 'denied' : result ? 'done' : 'running'}</div>;
}

const chatOptions = {
  // wholeBranch: the messages are all the page shows (an edit of the
  // first message comes alone, under a new id).
  transport: new AssistantChatTransport({ api: '/api/chat', body: { wholeBranch: true } }),
  // A client tool's output and an approval answer go back by themselves.
  sendAutomaticallyWhen: (o) => lastAssistantMessageIsCompleteWithToolCalls(o) || lastAssistantMessageIsCompleteWithApprovalResponses(o),
};

// ---- with history: agentui's stored chats as assistant-ui's thread list

const chatURL = (id) => '/api/chat/' + encodeURIComponent(id);

// useAgentuiHistory loads a thread's stored messages, every branch of
// them, when assistant-ui opens it: GET /api/chat/{id}/tree answers in
// the shape withFormat's load returns. agentui stores every turn itself,
// so append does nothing.
function useAgentuiHistory() {
  const aui = useAui();
  return useMemo(
    () => ({
      history: {
        load: async () => ({ messages: [] }), // the AI SDK runtime reads withFormat's
        append: async () => {},
        withFormat: () => ({
          async load() {
            const { remoteId } = aui.threadListItem().getState();
            const res = await fetch(chatURL(remoteId) + '/tree');
            if (res.status === 404) return { messages: [] };
            if (!res.ok) throw new Error(`GET ${chatURL(remoteId)}/tree: ${res.status}`);
            return res.json(); // {headId, messages: [{parentId, message}]}
          },
          append: async () => {},
        }),
      },
    }),
    [aui],
  );
}

// agentuiAttachments uploads each attached file to agentui's file route
// as the message is sent (assistant-ui's AttachmentAdapter): the message
// carries the URL the server answered with, which it maps back to the
// file it keeps, not the bytes. (The URL is made absolute: the AI SDK
// runtime takes anything else for base64.)
const agentuiAttachments = {
  accept: 'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain',
  async add({ file }) {
    const type = file.type.startsWith('image/') ? 'image' : 'file';
    return { id: crypto.randomUUID(), type, name: file.name, file, contentType: file.type, content: [], status: { type: 'requires-action', reason: 'composer-send' } };
  },
  async send(a) {
    const form = new FormData();
    form.append('file', a.file, a.name);
    const res = await fetch('/api/files', { method: 'POST', body: form });
    const up = await res.json();
    if (!res.ok) throw new Error(up.error);
    const url = new URL(up.url, location.href).href;
    const content = a.type === 'image' ? [{ type: 'image', image: url, filename: a.name }] : [{ type: 'file', mimeType: up.mediaType, filename: a.name, data: url }];
    return { ...a, status: { type: 'complete' }, content };
  },
  async remove() {},
};

const agentuiThreads = {
  async list() {
    const res = await fetch('/api/chats');
    if (!res.ok) return { threads: [] };
    const { chats } = await res.json();
    return { threads: chats.map((c) => ({ status: 'regular', remoteId: c.id, title: c.title || undefined })) };
  },
  initialize: async () => ({ remoteId: crypto.randomUUID() }),
  fetch: async (remoteId) => ({ status: 'regular', remoteId }),
  rename: async (remoteId, title) => {
    await fetch(chatURL(remoteId), { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title }) });
  },
  delete: async (remoteId) => {
    await fetch(chatURL(remoteId), { method: 'DELETE' });
  },
  archive: async () => {
    throw new Error('agentui has no archive');
  },
  generateTitle: async () => new ReadableStream({ start: (c) => c.close() }), // agentui titles chats itself
  unstable_useAdapters: useAgentuiHistory,
};

function setThreadParam(id) {
  const url = new URL(location.href);
  if (id) url.searchParams.set('thread', id);
  else url.searchParams.delete('thread');
  history.replaceState(null, '', url);
}

function StatelessApp() {
  const runtime = useChatRuntime(chatOptions);
  return (
    <AssistantRuntimeProvider runtime={runtime} config={config}>
      <Thread />
    </AssistantRuntimeProvider>
  );
}

// useResumableThread is a thread's runtime whose reply, interrupted by a
// reload, resumes: agentui names every stream it keeps in its
// X-Resumable-Stream-Id header (the chat's id), which the transport keeps
// in sessionStorage, one key per thread, until the reply finishes; a
// page that finds one asks GET /api/chat/{id}/stream for the rest.
//
// A message sent while another tab's reply runs in the chat is refused
// (409, code busy): the thread then shows the stored chat, says why, and
// follows that reply as a reload would.
function useResumableThread() {
  const aui = useAui();
  const [refused, setRefused] = useState(0);
  const { transport, storage } = useMemo(() => {
    const storage = createResumableSessionStorage({
      key: () => {
        const id = aui.threadListItem().getState().remoteId;
        return id && 'agentui-stream:' + id;
      },
    });
    const transport = new AssistantChatTransport({
      api: '/api/chat',
      body: { wholeBranch: true },
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (res.status === 409 && (await res.clone().text()).includes('"code":"busy"')) setRefused((n) => n + 1);
        return res;
      },
      resumable: { storage, resumeApi: (id) => chatURL(id) + '/stream' },
    });
    return { transport, storage };
  }, [aui]);
  const runtime = useChatRuntime({ ...chatOptions, transport, adapters: { attachments: agentuiAttachments } });
  useEffect(() => {
    if (!refused) return;
    const id = aui.threadListItem().getState().remoteId;
    window.dispatchEvent(new CustomEvent('agentui-notice', { detail: 'A reply from another tab is running: it shows here.' }));
    (async () => {
      const res = await fetch(chatURL(id));
      const msgs = res.ok ? await res.json() : [];
      runtime.thread.importExternalState({ headId: msgs.at(-1)?.id ?? null, messages: msgs.map((message, i) => ({ parentId: i ? msgs[i - 1].id : null, message })) });
      storage.setStreamId(id);
    })();
  }, [refused, aui, runtime, storage]);
  return runtime;
}

// useNotice is the last notice the thread's runtime gave, '' until one.
function useNotice() {
  const [notice, setNotice] = useState('');
  useEffect(() => {
    const show = (e) => setNotice(e.detail);
    window.addEventListener('agentui-notice', show);
    return () => window.removeEventListener('agentui-notice', show);
  }, []);
  return notice;
}

function HistoryApp() {
  const runtime = useRemoteThreadListRuntime({
    runtimeHook: useResumableThread,
    adapter: agentuiThreads,
    threadId: params.get('thread') ?? undefined,
    onThreadIdChange: setThreadParam,
  });
  return (
    <AssistantRuntimeProvider runtime={runtime} config={config}>
      <Thread />
    </AssistantRuntimeProvider>
  );
}

// ---- the thread, from assistant-ui's primitives

function Thread() {
  const running = useAuiState((s) => s.thread.isRunning);
  const loading = useAuiState((s) => s.thread.isLoading);
  const notice = useNotice();
  return (
    <ThreadPrimitive.Root data-testid="thread" data-running={String(running)} data-loading={String(loading)}>
      <ThreadPrimitive.Viewport>
        <ThreadPrimitive.Messages>
          {({ message }) => (message.composer.isEditing ? <EditComposer /> : message.role === 'user' ? <UserMessage /> : <AssistantMessage />)}
        </ThreadPrimitive.Messages>
      </ThreadPrimitive.Viewport>
      {notice && <p data-testid="notice">{notice}</p>}
      <ComposerPrimitive.Root>
        <ComposerPrimitive.Attachments components={{ Attachment: () => <span data-testid="attachment">attached</span> }} />
        <ComposerPrimitive.AddAttachment data-testid="attach">Attach</ComposerPrimitive.AddAttachment>
        <ComposerPrimitive.Input data-testid="composer" placeholder="Message" />
        <ComposerPrimitive.Send data-testid="send">Send</ComposerPrimitive.Send>
        <ComposerPrimitive.Cancel data-testid="stop">Stop</ComposerPrimitive.Cancel>
      </ComposerPrimitive.Root>
    </ThreadPrimitive.Root>
  );
}

// BranchPicker is assistant-ui's "‹ 1/2 ›" on a message that has
// versions (an edit, a regeneration).
function BranchPicker() {
  return (
    <BranchPickerPrimitive.Root hideWhenSingleBranch data-testid="branches">
      <BranchPickerPrimitive.Previous data-testid="branch-previous">‹</BranchPickerPrimitive.Previous>
      <span data-testid="branch-number">
        <BranchPickerPrimitive.Number />/<BranchPickerPrimitive.Count />
      </span>
      <BranchPickerPrimitive.Next data-testid="branch-next">›</BranchPickerPrimitive.Next>
    </BranchPickerPrimitive.Root>
  );
}

function UserMessage() {
  return (
    <MessagePrimitive.Root data-role="user">
      <div className="parts">
        <MessagePrimitive.Parts />
      </div>
      <ActionBarPrimitive.Root>
        <ActionBarPrimitive.Edit data-testid="edit">Edit</ActionBarPrimitive.Edit>
      </ActionBarPrimitive.Root>
      <BranchPicker />
    </MessagePrimitive.Root>
  );
}

function AssistantMessage() {
  return (
    <MessagePrimitive.Root data-role="assistant">
      <div className="parts">
        <MessagePrimitive.Parts />
      </div>
      <ActionBarPrimitive.Root>
        <ActionBarPrimitive.Reload data-testid="regenerate">Regenerate</ActionBarPrimitive.Reload>
      </ActionBarPrimitive.Root>
      <BranchPicker />
    </MessagePrimitive.Root>
  );
}

function EditComposer() {
  return (
    <ComposerPrimitive.Root data-testid="edit-composer">
      <ComposerPrimitive.Input data-testid="edit-input" />
      <ComposerPrimitive.Cancel>Cancel</ComposerPrimitive.Cancel>
      <ComposerPrimitive.Send data-testid="edit-save">Save</ComposerPrimitive.Send>
    </ComposerPrimitive.Root>
  );
}

async function main() {
  // Without a credential, POST /api/token issues a scope as a cookie too:
  // from then on every request of this browser has history.
  if (ASK_TOKEN) await (await fetch('/api/token', { method: 'POST' })).text();
  createRoot(document.getElementById('root')).render(HISTORY ? <HistoryApp /> : <StatelessApp />);
}
main();
