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
	not startswith(input.args.path, "/tmp/")
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
