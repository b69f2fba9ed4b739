// Package wire is the seam between agentui's handler (uiadapter) and the
// wire protocols it speaks (protocols/vercelai, protocols/agui): what a
// decoder makes of a request ([Turn]), what an encoder writes a run as
// ([Encoder] over an [SSEWriter]), the refusals both send ([Error]), the
// id rules ([CheckID]) and the sealing of provider values a client carries
// ([Sealer], [ChatSeal]). It is internal so that the seam can change with
// the protocols it serves; users plug protocols in, they do not write them.
package wire
