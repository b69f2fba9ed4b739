package history

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// Branches. A conversation is a tree of messages, each following its
// parent; the active branch runs from the root to the newest message and
// is what Load returns and what the model sees. A write that cuts
// messages (an edit, a regeneration) leaves them as another branch rather
// than deleting them, in a store that keeps branches ([Brancher]): the
// person can go back to them. The active branch stays a plain list, so a
// turn costs what it cost before branches; the others are read only when
// asked for.

// Node is a message off the active branch.
type Node struct {
	Message cmf.Message
	// Parent is the id of the message it follows; "" for a first
	// message.
	Parent string
	// Seq orders nodes by when they left the active branch.
	Seq int64

	size int64 // its JSON size, where a store knows it
}

// Brancher is a Store that keeps the branches its writes cut.
type Brancher interface {
	// Branches returns the conversation's messages off the active
	// branch, in the order they left it.
	Branches(ctx context.Context, key Key) ([]Node, error)
	// Switch makes the branch through the off-branch message id the
	// active one, if the version is expect: the root to id's parent (on
	// the active branch now), id, then each message's newest child down
	// to a leaf. What it replaces is kept off the branch. ErrNotFound
	// when no message off the branch has this id; ErrConflict when the
	// version moved.
	Switch(ctx context.Context, key Key, expect Version, id string) (Version, error)
}

// MaxBranchMessages bounds the messages a conversation keeps off its
// active branch: past it, those that left it first go (with what follows
// them there).
const MaxBranchMessages = 500

// ErrNoBranch: Switch names no message off the active branch.
var ErrNoBranch = errors.New("history: no such branch")

// CutNodes is the messages off the branch after a write that keeps keep
// of active and adds adding, where nodes were (for a [Brancher]'s
// Write): nodes, then active[keep:], each after the one before it. A cut
// message whose id an added one takes (an edit under the same id) leaves
// under a fresh id, and what follows it there, in nodes too, follows the
// fresh id.
func CutNodes(active []cmf.Message, keep int, adding []cmf.Message, nodes []Node, seq int64) []Node {
	if keep >= len(active) {
		return nodes
	}
	taken := make(map[string]bool, len(adding))
	for _, m := range adding {
		taken[m.ID()] = true
	}
	parent := ""
	if keep > 0 {
		parent = active[keep-1].ID()
	}
	renamed := map[string]string{}
	out := make([]Node, 0, len(nodes)+len(active)-keep)
	for i, m := range active[keep:] {
		if taken[m.ID()] {
			fresh := ids.New()
			renamed[m.ID()] = fresh
			m = m.Clone()
			m.SetID(fresh)
		}
		// Ordered by the write, then along the branch.
		out = append(out, Node{Message: m, Parent: parent, Seq: seq<<20 + int64(i)})
		parent = m.ID()
	}
	for _, n := range nodes {
		if to, ok := renamed[n.Parent]; ok {
			n.Parent = to
		}
		out = append(out, n)
	}
	// nodes first: the order they left the branch in.
	return append(out[len(active)-keep:], out[:len(active)-keep]...)
}

// SwitchPlan is what Switch to id does to a conversation whose active
// branch is active and whose other messages are nodes: keep of active,
// add after them, and the nodes that are left (what add took out, plus
// what the cut left, at seq).
func SwitchPlan(active []cmf.Message, nodes []Node, id string, seq int64) (keep int, add []cmf.Message, left []Node, err error) {
	byID := make(map[string]int, len(nodes))
	for i, n := range nodes {
		byID[n.Message.ID()] = i
	}
	at, ok := byID[id]
	if !ok {
		return 0, nil, nil, ErrNoBranch
	}
	// Up from id to the active branch: the fork.
	chain := []int{at}
	onActive := make(map[string]int, len(active))
	for i, m := range active {
		onActive[m.ID()] = i
	}
	keep = -1
	for p := nodes[at].Parent; ; {
		if p == "" {
			keep = 0
			break
		}
		if i, ok := onActive[p]; ok {
			keep = i + 1
			break
		}
		j, ok := byID[p]
		if !ok || slices.Contains(chain, j) {
			return 0, nil, nil, ErrNoBranch // an orphan: its parent went
		}
		chain = append(chain, j)
		p = nodes[j].Parent
	}
	slices.Reverse(chain)
	// Down from id: each message's newest child.
	children := map[string][]int{}
	for i, n := range nodes {
		children[n.Parent] = append(children[n.Parent], i)
	}
	for last := at; ; {
		kids := children[nodes[last].Message.ID()]
		if len(kids) == 0 {
			break
		}
		newest := kids[0]
		for _, k := range kids[1:] {
			if nodes[k].Seq >= nodes[newest].Seq {
				newest = k
			}
		}
		if slices.Contains(chain, newest) {
			break
		}
		chain = append(chain, newest)
		last = newest
	}
	taken := make(map[int]bool, len(chain))
	for _, i := range chain {
		add = append(add, nodes[i].Message)
		taken[i] = true
	}
	for i, n := range nodes {
		if !taken[i] {
			left = append(left, n)
		}
	}
	left = CutNodes(active, keep, nil, left, seq)
	return keep, add, left, nil
}

// Prune is what a Brancher keeps of nodes beside the active branch
// active: at most MaxBranchMessages, dropping those that left the active
// branch first, and only those [Reachable] from it.
func Prune(active []cmf.Message, nodes []Node) []Node {
	if len(nodes) > MaxBranchMessages {
		nodes = slices.Clone(nodes)
		slices.SortStableFunc(nodes, func(a, b Node) int { return cmp.Compare(b.Seq, a.Seq) })
		nodes = nodes[:MaxBranchMessages]
		slices.SortStableFunc(nodes, func(a, b Node) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	return Reachable(active, nodes)
}

// Reachable is nodes without those the active branch cannot reach: a
// node whose parent is on neither branch (its branch was dropped), and
// one whose id a message on the active branch has (one id, one
// message), with what follows them.
func Reachable(active []cmf.Message, nodes []Node) []Node {
	on := make(map[string]bool, len(active))
	for _, m := range active {
		on[m.ID()] = true
	}
	byID := make(map[string]int, len(nodes))
	for i, n := range nodes {
		byID[n.Message.ID()] = i
	}
	state := make([]int8, len(nodes)) // 0 unknown, 1 reachable, -1 not, 2 being looked at
	var reach func(i int) bool
	reach = func(i int) bool {
		switch state[i] {
		case 1:
			return true
		case -1, 2:
			return false // a cycle is not reachable either
		}
		state[i] = 2
		n := nodes[i]
		ok := !on[n.Message.ID()]
		if ok && n.Parent != "" && !on[n.Parent] {
			j, known := byID[n.Parent]
			ok = known && reach(j)
		}
		state[i] = -1
		if ok {
			state[i] = 1
		}
		return ok
	}
	out := nodes[:0:0]
	for i := range nodes {
		if reach(i) {
			out = append(out, nodes[i])
		}
	}
	return out
}
