// Package turn decides what one chat turn does, with no I/O: it checks a
// decoded turn ([Check]), plans it on the stored conversation or on the
// client's own thread ([PlanStored], [PlanClient]) under one table of
// answer rules, sanitizes what a client sent ([Sanitize]) and signs the
// approval requests whose answers it later verifies ([Signer]). The
// handler (uiadapter) brings the store, the lock and the run; everything
// here is a function of its arguments, tested by tables.
package turn
