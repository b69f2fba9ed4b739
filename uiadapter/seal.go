package uiadapter

import "github.com/agentui/agentui/internal/wire"

// chatSeal is the sealing key of a request's chat, from the handler's
// secret (the approval signer's: one secret serves both).
func (h *Handler) chatSeal(req *request) *wire.ChatSeal {
	return wire.NewChatSeal(h.cfg.signer.Key(), h.proto.Name(), req.scope, req.turn.ChatID)
}
