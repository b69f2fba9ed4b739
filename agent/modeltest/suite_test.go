package modeltest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// bugVar names the way TestExampleProvider's model is broken, in the
// process TestSuiteFails starts.
const bugVar = "MODELTEST_EXAMPLE_BUG"

// The suite fails a model that breaks the contract, each way in the
// subtest that checks it, saying what is wrong. Each broken model runs in
// a process of its own (this test binary, running TestExampleProvider),
// so that its failures are this test's findings rather than its own.
func TestSuiteFails(t *testing.T) {
	for _, tc := range []struct {
		bug     string
		subtest string
		says    string
	}{
		{"sends foreign values", "values_of_other_models_are_not_sent/after_a_switch_between_turns", "the request carries the value on"},
		{"tags values with the provider only", "own_values_come_back", `is tagged provider "acme", model ""; want "acme", "acme-large"`},
		{"counts the total as the output", "usage/as_billed", "total is not input + output"},
		{"ends a filtered reply as a whole one", "stop_reasons/content_filter", `stop reason "end", want "refusal"`},
		{"retries once more", "retries_are_bounded/1_retries", "WithMaxRetries(1) sent the request 3 times, want 2"},
		{"errors carry the API's words", "faults_mean_the_agent_errors/bad_key", "the error carries"},
		{"ignores cancellation", "cancellation/while_the_reply_streams", "want the context's error"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestExampleProvider$", "-test.v")
			cmd.Env = append(os.Environ(), bugVar+"="+tc.bug)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the suite passed a model that %s:\n%s", tc.bug, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestExampleProvider/"+tc.subtest+" ") || !strings.Contains(string(out), tc.says) {
				t.Fatalf("the suite did not fail %s saying %q:\n%s", tc.subtest, tc.says, out)
			}
		})
	}
}

// A capability the harness says is absent skips the subtests that need
// it, each reported as skipped with the harness's reason, not as passed.
func TestAbsentCapabilitiesAreSkippedSayingWhy(t *testing.T) {
	out, err := exec.Command(os.Args[0], "-test.run=^TestExampleProvider$", "-test.v").CombinedOutput()
	if err != nil {
		t.Fatalf("the example provider failed:\n%s", out)
	}
	for _, want := range []string{
		"--- SKIP: TestExampleProvider/usage/as_billed_with_cache_writes ",
		"needs cache writes, which the harness says are absent: the acme API does not report cache writes",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(string(out), "--- SKIP"); n != 1 {
		t.Errorf("%d subtests skipped, want the one that needs cache writes:\n%s", n, out)
	}
}

// The example docs/extending.md shows is this package's: each function of
// its snippet stands in provider_example_test.go as it is shown.
func TestDocsShowTheExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("provider_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## A model of your own, held to the contract")
	_, snippet, ok := strings.Cut(section, "```go\n")
	snippet, _, ok2 := strings.Cut(snippet, "```")
	if !ok || !ok2 {
		t.Fatal("docs/extending.md has no Go snippet in its section on the contract suite")
	}
	for _, fn := range strings.Split(strings.TrimSpace(snippet), "\n\n") {
		if !strings.Contains(string(src), fn) {
			t.Errorf("docs/extending.md shows code that provider_example_test.go does not have:\n%s", fn)
		}
	}
}
