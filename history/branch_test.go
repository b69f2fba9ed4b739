package history

import (
	"fmt"
	"testing"

	"github.com/agentui/agentui/cmf"
)

func node(id, parent string, seq int64) Node {
	m := cmf.Message{SchemaVersion: cmf.SchemaVersion, Role: cmf.RoleUser, Content: []cmf.Part{cmf.Text{Text: id}}}
	m.SetID(id)
	return Node{Message: m, Parent: parent, Born: seq}
}

// A chat regenerated without end keeps its newest branches, and none
// whose parent went with the oldest.
func TestPruneKeepsTheNewestReachableBranches(t *testing.T) {
	active := []cmf.Message{node("u1", "", 0).Message}
	var nodes []Node
	for i := range MaxBranchMessages + 10 {
		// each regeneration: a reply to u1, and a follow-up to it
		r := fmt.Sprint("r", i)
		nodes = append(nodes, node(r, "u1", int64(2*i)), node(r+"f", r, int64(2*i+1)))
	}
	got := Prune(active, Tree{Nodes: nodes}).Nodes
	if len(got) > MaxBranchMessages {
		t.Fatalf("%d nodes kept, want at most %d", len(got), MaxBranchMessages)
	}
	if last := got[len(got)-1].Message.ID(); last != fmt.Sprint("r", MaxBranchMessages+9, "f") {
		t.Fatalf("the newest node %s was dropped", last)
	}
	kept := map[string]bool{"u1": true}
	for _, n := range got {
		kept[n.Message.ID()] = true
	}
	for _, n := range got {
		if !kept[n.Parent] {
			t.Fatalf("%s kept without its parent %s", n.Message.ID(), n.Parent)
		}
	}
}

// Nodes that name each other as parents (a corrupt store) are not
// reachable, and do not hang the walk.
func TestReachableSurvivesACycle(t *testing.T) {
	got := Reachable(nil, []Node{node("a", "b", 1), node("b", "a", 2), node("c", "", 3)})
	if len(got) != 1 || got[0].Message.ID() != "c" {
		t.Fatalf("reachable: %v", got)
	}
}
