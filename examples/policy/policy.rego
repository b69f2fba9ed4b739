# The example's policy, evaluated once per view (one part of a message) at
# each point. input is cmf.View.ToOPAInput's document (kind, role, name,
# args, content, extensions, ...) with "point" added: input, pre_tool,
# post_tool or output.
package agentui

# A payment card number: 13 to 19 digits, grouped or not.
card := `\b(?:\d[ -]?){12,18}\d\b`

# delete_file only under /tmp: anywhere else it is denied before any
# approval is asked, and the reply says it was the policy.
deny contains "files may be deleted only under /tmp" if {
	input.point == "pre_tool"
	input.name == "delete_file"
	not under_tmp(object.get(input, ["args", "path"], null))
}

# The path is judged cleaned: "/tmp/../etc" is /etc. A path that is missing or not a string is not under /tmp. (The
# arguments of a call under "not" are evaluated before the "not": a
# missing path there, or clean of a number, leaves the whole rule
# undefined, and nothing is denied. Hence object.get and this rule.)
under_tmp(p) if startswith(clean(p), "/tmp/")

# clean(p) is the shortest path naming what p names, as Go's path.Clean
# reads it: no empty or "." elements, each ".." removes
# the element before it, and ".." at the root of an absolute path stays
# at the root. Rego has no loop with state, so instead of a stack it keeps
# the stack's depth after each element: an element stays when the depth
# never falls below its own later on.
clean(p) := p if {
	# Most paths are clean already: absolute, no empty, "." or ".."
	# element, no trailing slash. They skip the work below.
	regex.match(`^(/[^/]+)+$`, p)
	not regex.match(`(^|/)\.\.?(/|$)`, p)
} else := joined(startswith(p, "/"), kept_elements(p))

joined(true, []) := "/"

joined(false, []) := "."

joined(true, elements) := concat("/", array.concat([""], elements)) if count(elements) > 0

joined(false, elements) := concat("/", elements) if count(elements) > 0

kept_elements(p) := [elements[i] | some i in numbers.range(0, n - 1); kept(elements, depth, rooted, i)] if {
	elements := [e | some e in split(p, "/"); not e in {"", "."}]
	n := count(elements)
	n > 0
	# level[k]: the stack's height after k elements if ".." could take
	# it below the start; depth[k]: its real height, never below zero.
	level := [l | some k in numbers.range(0, n); l := sum([step(e) | some e in array.slice(elements, 0, k)])]
	depth := [d | some k in numbers.range(0, n); d := level[k] - min(array.slice(level, 0, k + 1))]
	rooted := startswith(p, "/")
} else := []

step("..") := -1

step(e) := 1 if e != ".."

# A name stays unless a later ".." removes it.
kept(elements, depth, _, i) if {
	elements[i] != ".."
	depth[i + 1] <= min(array.slice(depth, i + 1, count(depth)))
}

# A ".." stays in a relative path when there is nothing before it to
# remove; at the root of an absolute path it goes.
kept(elements, depth, rooted, i) if {
	elements[i] == ".."
	not rooted
	depth[i] == 0
}

# Card numbers in the user's text are redacted before the model sees
# them, and the message is labelled PII.
default redacted := ""

redacted := regex.replace(input.content, card, "[card number]") if card_in_user_text

labels contains "PII" if card_in_user_text

card_in_user_text if {
	input.point == "input"
	input.kind == "text"
	regex.match(card, input.content)
}

# What get_weather returns comes from outside.
labels contains "external" if {
	input.point == "post_tool"
	input.name == "get_weather"
}
