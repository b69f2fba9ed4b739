package einoagent

import (
	"context"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
)

func init() {
	// Interrupt infos and resume data travel in Eino's gob checkpoints.
	schema.RegisterName[*Decision]("agentui.einoagent.Decision")
	schema.RegisterName[*ApprovalRequest]("agentui.einoagent.ApprovalRequest")
}

// Decision is the person's answer to an interrupted tool call, as a tool
// receives it on resume (tool.GetResumeContext[*Decision]).
type Decision struct {
	Approved bool
	// Reason is why it was denied, when the person said.
	Reason string
	// EditedArguments, when set, are the arguments the person approved
	// instead of the model's (JSON).
	EditedArguments string
}

// ApprovalRequest is the interrupt info of a tool that NeedsApproval
// wraps: its arguments.
type ApprovalRequest struct {
	Arguments string
}

// NeedsApproval wraps t so that every call asks the person first: the
// call interrupts the run, which agentui shows as an approval request;
// approved, t runs (with the person's edited arguments, if any); denied,
// the model is told so, in agentui's words for a denial.
func NeedsApproval(t tool.InvokableTool) tool.InvokableTool { return approvalTool{t} }

type approvalTool struct{ tool.InvokableTool }

func (a approvalTool) InvokableRun(ctx context.Context, args string, opts ...tool.Option) (string, error) {
	if was, _, _ := tool.GetInterruptState[string](ctx); !was {
		return "", tool.StatefulInterrupt(ctx, &ApprovalRequest{Arguments: args}, args)
	}
	target, has, d := tool.GetResumeContext[*Decision](ctx)
	if !target || !has || d == nil {
		// Not this call's answer: ask again.
		return "", tool.StatefulInterrupt(ctx, &ApprovalRequest{Arguments: args}, args)
	}
	if !d.Approved {
		return denied(d.Reason), nil
	}
	if d.EditedArguments != "" {
		args = d.EditedArguments
	}
	return a.InvokableTool.InvokableRun(ctx, args, opts...)
}

// deniedText starts what the model is told of a denied call: the agent
// loop's words.
const deniedText = "The user denied this tool call."

// denied is what the model is told of a denied call.
func denied(reason string) string {
	text := deniedText
	if reason != "" {
		text += " Reason: " + reason
	}
	return text
}
