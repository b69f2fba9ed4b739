package history

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/agentui/agentui/cmf"
	"github.com/agentui/agentui/internal/ids"
)

// Branches. A conversation is a tree of messages, each following its
// parent; the active branch runs from the root to the newest message and
// is what Load returns and what the model sees. An edit or a regeneration
// (Brancher.Branch) leaves the messages it cuts as another branch rather
// than deleting them, in a store that keeps branches: the person can go
// back to them. The active branch stays a plain list, so a
// turn costs what it cost before branches; the others are read only when
// asked for.

// Node is a message off the active branch.
type Node struct {
	Message cmf.Message
	// Parent is the id of the message it follows; "" for a first
	// message.
	Parent string
	// Born is when the message first left the active branch (an edit or
	// a regeneration replaced it, or a switch to another branch): its
	// versions (the messages with its parent) are numbered by it, and a
	// message that never left the branch comes after those that did.
	Born int64

	size int64 // its JSON size, where a store knows it
}

// Tree is what a Brancher keeps beside a conversation's active branch.
type Tree struct {
	// Nodes are the messages off the active branch, by Born.
	Nodes []Node
	// Born is, for a message on the active branch that was off it once
	// (a switch brought it back), its Node.Born: a message keeps its
	// place among its versions.
	Born map[string]int64
}

// Brancher is a Store that keeps branches: what an edit or a
// regeneration cuts stays, off the active branch.
type Brancher interface {
	// Branch is Write for an edit or a regeneration: what it cuts stays
	// off the active branch, each message after its parent (see
	// [CutNodes]).
	Branch(ctx context.Context, key Key, expect Version, keep int, msgs ...cmf.Message) (Version, error)
	// Branches returns what the conversation keeps beside its active
	// branch.
	Branches(ctx context.Context, key Key) (Tree, error)
	// Switch makes the branch through the off-branch message id the
	// active one, if the version is expect: the root to id's parent (on
	// the active branch now), id, then each message's newest version
	// down to a leaf. What it replaces is kept off the branch.
	// ErrNoBranch when no message off the branch has this id;
	// ErrConflict when the version moved.
	Switch(ctx context.Context, key Key, expect Version, id string) (Version, error)
}

// WriteBranch is s.Branch when s is a Brancher, else s.Write: the write
// of a turn that edits or regenerates.
func WriteBranch(ctx context.Context, s Store, key Key, expect Version, keep int, msgs ...cmf.Message) (Version, error) {
	if b, ok := s.(Brancher); ok {
		return b.Branch(ctx, key, expect, keep, msgs...)
	}
	return s.Write(ctx, key, expect, keep, msgs...)
}

// MaxBranchMessages bounds the messages a conversation keeps off its
// active branch: past it, those that left it first go (with what follows
// them there).
const MaxBranchMessages = 500

// ErrNoBranch: Switch names no message off the active branch.
var ErrNoBranch = errors.New("history: no such branch")

// CutNodes is the tree after a write that keeps keep of active and adds
// adding, where t was (for a [Brancher]'s Branch): active[keep:] leave the
// branch, each after the one before it, born at seq unless they were off
// it before. A cut message whose id an added one takes (an edit under the
// same id) leaves under a fresh id, and what follows it there, in t too,
// follows the fresh id.
func CutNodes(active []cmf.Message, keep int, adding []cmf.Message, t Tree, seq int64) Tree {
	if keep >= len(active) {
		return t
	}
	taken := make(map[string]bool, len(adding))
	for _, m := range adding {
		taken[m.ID()] = true
	}
	parent := ""
	if keep > 0 {
		parent = active[keep-1].ID()
	}
	born := maps.Clone(t.Born)
	renamed := map[string]string{}
	out := slices.Grow(slices.Clone(t.Nodes), len(active)-keep)
	for i, m := range active[keep:] {
		b, ok := born[m.ID()]
		if !ok {
			b = seq<<20 + int64(i) // by the write, then along the branch
		}
		delete(born, m.ID())
		if taken[m.ID()] {
			fresh := ids.New()
			renamed[m.ID()] = fresh
			m = m.Clone()
			m.SetID(fresh)
		}
		out = append(out, Node{Message: m, Parent: parent, Born: b})
		parent = m.ID()
	}
	for i := range out[:len(t.Nodes)] {
		if to, ok := renamed[out[i].Parent]; ok {
			out[i].Parent = to
		}
	}
	return Tree{Nodes: out, Born: born}
}

// SwitchPlan is what Switch to id does to a conversation whose active
// branch is active and whose tree is t: keep of active, add after them,
// and the tree then (the old branch's messages leave it at seq).
func SwitchPlan(active []cmf.Message, t Tree, id string, seq int64) (keep int, add []cmf.Message, after Tree, err error) {
	nodes := t.Nodes
	byID := make(map[string]int, len(nodes))
	for i, n := range nodes {
		byID[n.Message.ID()] = i
	}
	at, ok := byID[id]
	if !ok {
		return 0, nil, Tree{}, ErrNoBranch
	}
	// Up from id to the active branch: the fork.
	chain := []int{at}
	onActive := make(map[string]int, len(active))
	for i, m := range active {
		onActive[m.ID()] = i
	}
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
			return 0, nil, Tree{}, ErrNoBranch // an orphan: its parent went
		}
		chain = append(chain, j)
		p = nodes[j].Parent
	}
	slices.Reverse(chain)
	// Down from id: each message's newest version.
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
			if nodes[k].Born >= nodes[newest].Born {
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
	born := maps.Clone(t.Born)
	if born == nil {
		born = map[string]int64{}
	}
	for _, i := range chain {
		add = append(add, nodes[i].Message)
		born[nodes[i].Message.ID()] = nodes[i].Born
		taken[i] = true
	}
	var left []Node
	for i, n := range nodes {
		if !taken[i] {
			left = append(left, n)
		}
	}
	return keep, add, CutNodes(active, keep, nil, Tree{Nodes: left, Born: born}, seq), nil
}

// Prune is what a Brancher keeps of t beside the active branch active:
// at most MaxBranchMessages nodes, dropping those that left the active
// branch first, only those [Reachable] from it, and births of messages on
// it.
func Prune(active []cmf.Message, t Tree) Tree {
	nodes := t.Nodes
	if len(nodes) > MaxBranchMessages {
		nodes = slices.Clone(nodes)
		slices.SortStableFunc(nodes, func(a, b Node) int { return cmp.Compare(b.Born, a.Born) })
		nodes = nodes[:MaxBranchMessages]
		slices.SortStableFunc(nodes, func(a, b Node) int { return cmp.Compare(a.Born, b.Born) })
	}
	out := Tree{Nodes: Reachable(active, nodes)}
	if len(t.Born) == 0 {
		return out
	}
	for _, m := range active {
		if b, ok := t.Born[m.ID()]; ok {
			if out.Born == nil {
				out.Born = map[string]int64{}
			}
			out.Born[m.ID()] = b
		}
	}
	return out
}

// Reachable is nodes without those the active branch cannot reach: a
// node whose parent is on neither branch (its branch was dropped), and
// one whose id a message on the active branch has (one id, one
// message), with what follows them.
func Reachable(active []cmf.Message, nodes []Node) []Node {
	if len(nodes) == 0 {
		return nodes
	}
	// Only the ids the nodes name are looked for on the active branch:
	// the branch may be thousands of messages long, the nodes few.
	on := make(map[string]bool, 2*len(nodes))
	for _, n := range nodes {
		on[n.Message.ID()], on[n.Parent] = false, false
	}
	for _, m := range active {
		if _, named := on[m.ID()]; named {
			on[m.ID()] = true
		}
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
