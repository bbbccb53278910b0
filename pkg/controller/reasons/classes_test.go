package reasons

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tableRows returns the rows of the tables of section, by the first backticked word of their
// first column (rows without one are left out), each as its columns.
func tableRows(section string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cols := strings.Split(line, "|")[1:]
		if m := backticked.FindStringSubmatch(cols[0]); m != nil {
			rows[m[1]] = cols
		}
	}
	return rows
}

// words returns the backticked CamelCase words of s, sorted.
func words(s string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// TestClassesDocumented ties the classes of classes.go to docs/status.md: the Degraded row
// lists the Blocking reasons beside Degraded's own, the event row of conditions turning False
// lists those that Warns when False, each reason that always warns has a Warning row of its
// own, and the Ready row names the Hibernation reasons.
func TestClassesDocumented(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "status.md"))
	if err != nil {
		t.Fatal(err)
	}
	conditions, events, found := strings.Cut(statusSection(string(page)), "\n## Events\n")
	if !found {
		t.Fatal(`docs/status.md has no "## Events" section after "## Conditions"`)
	}
	condRows, eventRows := tableRows(conditions), tableRows(events)

	degraded := condRows["Degraded"]
	if len(degraded) < 3 {
		t.Fatal("docs/status.md has no Degraded row with its reasons")
	}
	var documented []string
	for _, w := range words(degraded[2]) {
		if w != NameConflict && w != FieldContested && w != SyncFailed {
			documented = append(documented, w)
		}
	}
	if want := slices.Sorted(maps.Keys(blocking)); !slices.Equal(documented, want) {
		t.Errorf("the Degraded row of docs/status.md lists %v besides Degraded's own reasons; Blocking has %v", documented, want)
	}

	var turnedFalse []string
	for _, cols := range eventRows {
		if len(cols) > 2 && strings.Contains(cols[2], "a condition turned False with this reason") {
			turnedFalse = words(cols[0])
		}
	}
	var warnWhenFalse []string
	for _, r := range append(slices.Collect(maps.Keys(blocking)), APINotServed) {
		if Warns(r, true) && !Warns(r, false) {
			warnWhenFalse = append(warnWhenFalse, r)
		}
	}
	if slices.Sort(warnWhenFalse); !slices.Equal(turnedFalse, warnWhenFalse) {
		t.Errorf("docs/status.md's event row of conditions turned False lists %v; Warns(reason, true) alone holds for %v", turnedFalse, warnWhenFalse)
	}
	for r := range alwaysWarns {
		if !Warns(r, false) {
			t.Errorf("Warns(%s, false) = false, want true", r)
		}
		if cols, ok := eventRows[r]; !ok || len(cols) < 2 || strings.TrimSpace(cols[1]) != "Warning" {
			t.Errorf("docs/status.md has no Warning event row for %s", r)
		}
	}
	if Warns(AllComponentsReady, true) || Warns(Starting, true) {
		t.Error("Warns holds for a reason that needs nobody")
	}

	ready := condRows["Ready"]
	if len(ready) < 4 {
		t.Fatal("docs/status.md has no Ready row with its reasons")
	}
	var hibernation []string
	for _, w := range words(ready[3]) {
		if Hibernation(w) {
			hibernation = append(hibernation, w)
		}
	}
	if want := []string{Hibernated, Hibernating, Waking}; !slices.Equal(hibernation, want) {
		t.Errorf("the Ready row of docs/status.md names the hibernation reasons %v, want %v", hibernation, want)
	}
}
