// Package agentui mounts agentui's HTTP API for one agent with one call:
// the Vercel AI SDK UI message stream (useChat) and AG-UI, reloading,
// resuming and stopping a reply, and listing, renaming and deleting chats.
//
//	api, err := agentui.New(loop, uiadapter.WithStore(store), uiadapter.WithScope(scope))
//	if err != nil {
//		log.Fatal(err)
//	}
//	api.Mount(mux, "/api")
//
// The options are package uiadapter's; both protocols get the same. The
// chat page is apart (webui.Handler()), and so is the binary's anonymous
// scope (cmd/agentui): an app derives scopes from its own authentication.
// To mount the handlers one by one instead, see docs/extending.md.
package agentui

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/agentui/agentui/agent"
	"github.com/agentui/agentui/protocols/agui"
	"github.com/agentui/agentui/protocols/vercelai"
	"github.com/agentui/agentui/uiadapter"
)

// API is the whole set of agentui's routes for one agent.
type API struct {
	chat, agui *uiadapter.Handler
}

// New builds the API for a: the useChat handler and the AG-UI handler,
// each with opts. A configuration that cannot work is an error that says
// which option to fix.
func New(a agent.Agent, opts ...uiadapter.Option) (*API, error) {
	chat, err := vercelai.Handler(a, opts...)
	if err != nil {
		return nil, err
	}
	aguiHandler, err := agui.Handler(a, opts...)
	if err != nil {
		return nil, err
	}
	return &API{chat: chat, agui: aguiHandler}, nil
}

// FromHandlers is the API over handlers built elsewhere: chat speaks the
// UI message stream (vercelai, with protocol options such as
// vercelai.WithAISDK7), aguiHandler AG-UI. They should share their store,
// scope and run log, as New's do.
func FromHandlers(chat, aguiHandler *uiadapter.Handler) *API {
	return &API{chat: chat, agui: aguiHandler}
}

// Route is one route of the API: its method, its path (ServeMux syntax:
// the chat id is the wildcard {id}, which the handler reads with
// r.PathValue("id")), and its handler.
type Route struct {
	Method, Path string
	Handler      http.Handler
}

// Pattern is the route as an http.ServeMux pattern: "POST /api/chat".
func (r Route) Pattern() string { return r.Method + " " + r.Path }

// Routes lists the API's routes under prefix ("/api", or "" for the
// root), for routers other than http.ServeMux. Such a router names the
// chat id its own way (gin: ":id"): it copies it into the request with
// r.SetPathValue("id", …) before the handler runs (examples/gin).
//
//	POST   {prefix}/chat               useChat
//	GET    {prefix}/chat               useChat over a WebSocket (AI SDK 7's WebSocketChatTransport)
//	GET    {prefix}/chat/{id}          the stored chat, as UI messages (reload)
//	GET    {prefix}/chat/{id}/stream   resume the chat's reply (useChat's resume)
//	POST   {prefix}/chat/{id}/stop     stop it
//	PATCH  {prefix}/chat/{id}          rename the chat: {"title": "…"}
//	DELETE {prefix}/chat/{id}          delete it
//	GET    {prefix}/chat/{id}/tree     its messages on every branch (edits, regenerations)
//	POST   {prefix}/chat/{id}/branch   make one branch the active one: {"id": "<message id>"}
//	GET    {prefix}/chat/{id}/queue    the messages queued behind its reply
//	DELETE {prefix}/chat/{id}/queue/{message}  remove one of them
//	GET    {prefix}/chats              the scope's chats, newest first
//	POST   {prefix}/agui               AG-UI (HttpAgent, CopilotKit)
//	POST   {prefix}/agui/connect       AG-UI reconnect: the thread and its running reply
//	POST   {prefix}/agui/{id}/stop     stop an AG-UI reply
//	GET    {prefix}/agui/{id}/tree     the thread's messages on every branch, as AG-UI messages
//	POST   {prefix}/agui/{id}/branch   make one branch the active one: {"id": "<message id>"}
//
// With files (uiadapter.WithFiles, its files.WithPrefix at {prefix}/files):
//
//	POST   {prefix}/files              upload a file (multipart/form-data)
//	POST   {prefix}/files/presign      sign an upload straight to the store (an S3 bucket)
//	POST   {prefix}/files/finalize     keep what such an upload put
//	GET    {prefix}/files/{id}         read one, through a URL signed for the scope
//	DELETE {prefix}/files/{id}         delete one
//
// Without history (no uiadapter.WithStore) the routes over stored chats
// answer 404 with {"error": …}. Routes panics when prefix does not start
// with "/" (or is not ""), as a bad ServeMux pattern does.
func (a *API) Routes(prefix string) []Route {
	p := cleanPrefix(prefix)
	routes := []Route{
		{http.MethodPost, p + "/chat", a.chat},
		{http.MethodGet, p + "/chat", a.chat.WebSocketHandler()},
		{http.MethodGet, p + "/chat/{id}", vercelai.ConversationHandler(a.chat, nil)},
		{http.MethodGet, p + "/chat/{id}/stream", a.chat.ResumeHandler(nil)},
		{http.MethodPost, p + "/chat/{id}/stop", a.chat.StopHandler(nil)},
		{http.MethodPatch, p + "/chat/{id}", a.chat.RenameHandler(nil)},
		{http.MethodDelete, p + "/chat/{id}", a.chat.DeleteHandler(nil)},
		{http.MethodGet, p + "/chat/{id}/tree", vercelai.TreeHandler(a.chat, nil)},
		{http.MethodPost, p + "/chat/{id}/branch", a.chat.BranchHandler(nil)},
		{http.MethodGet, p + "/chat/{id}/queue", a.chat.QueueHandler(nil)},
		{http.MethodDelete, p + "/chat/{id}/queue/{message}", a.chat.QueueHandler(nil)},
		{http.MethodGet, p + "/chats", a.chat.ChatsHandler()},
		{http.MethodGet, p + "/models", a.chat.ModelsHandler()},
		{http.MethodPost, p + "/agui", a.agui},
		{http.MethodPost, p + "/agui/connect", a.agui.ConnectHandler()},
		{http.MethodPost, p + "/agui/{id}/stop", a.agui.StopHandler(nil)},
		{http.MethodGet, p + "/agui/{id}/tree", agui.TreeHandler(a.agui, nil)},
		{http.MethodPost, p + "/agui/{id}/branch", a.agui.BranchHandler(nil)},
	}
	if fh := a.chat.Files(); fh != nil {
		routes = append(routes,
			Route{http.MethodPost, p + "/files", fh.UploadHandler()},
			Route{http.MethodPost, p + "/files/presign", fh.PresignHandler()},
			Route{http.MethodPost, p + "/files/finalize", fh.FinalizeHandler()},
			Route{http.MethodGet, p + "/files/{id}", fh.ServeHandler()},
			Route{http.MethodDelete, p + "/files/{id}", fh.DeleteHandler()})
	}
	return routes
}

// Mount registers every route under prefix on mux (see Routes).
func (a *API) Mount(mux *http.ServeMux, prefix string) {
	for _, r := range a.Routes(prefix) {
		mux.Handle(r.Pattern(), r.Handler)
	}
}

// Shutdown stops both handlers taking requests and waits for the replies
// they serve; when ctx ends first, it cuts them: each stream ends with its
// protocol's error event, what the reply produced is stored and its chat
// unlocked (uiadapter.Handler.Shutdown). Call it alongside
// http.Server.Shutdown.
func (a *API) Shutdown(ctx context.Context) error {
	errs := make(chan error, 2)
	for _, h := range []*uiadapter.Handler{a.chat, a.agui} {
		go func() { errs <- h.Shutdown(ctx) }()
	}
	return errors.Join(<-errs, <-errs)
}

// cleanPrefix checks prefix and drops a trailing slash.
func cleanPrefix(prefix string) string {
	p := strings.TrimSuffix(prefix, "/")
	if p != "" && (p[0] != '/' || strings.ContainsAny(p, "{} \t")) {
		panic("agentui: route prefix " + `"` + prefix + `"` + ` must be "" or start with "/" (like "/api")`)
	}
	return p
}
