package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// documentedFlags returns the rows of the "Operator flags" table of docs/installation.md: the
// flag names of each row (without dashes) and its default column.
func documentedFlags(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "installation.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Operator flags\n")
	if !ok {
		t.Fatal("docs/installation.md has no \"## Operator flags\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`--?([a-z0-9-]+)`")
	defaults := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[1], "`-") {
			continue
		}
		names := name.FindAllStringSubmatch(cells[1], -1)
		values := strings.Split(strings.TrimSpace(cells[2]), ", ")
		for i, n := range names {
			v := ""
			if len(values) == len(names) {
				v = strings.Trim(values[i], "`")
			}
			defaults[n[1]] = v
		}
	}
	return defaults
}

// TestFlagTableDocumented: the flag table of docs/installation.md lists every flag the binary
// defines, only those, each with the default the code has (where the table gives one per flag).
func TestFlagTableDocumented(t *testing.T) {
	fs := flag.NewFlagSet("monocle-operator", flag.ContinueOnError)
	bindFlags(fs, &options{})
	logging := flag.NewFlagSet("logging", flag.ContinueOnError)
	addLoggingFlags(logging)
	table := documentedFlags(t)

	fs.VisitAll(func(f *flag.Flag) {
		documented, ok := table[f.Name]
		switch {
		case !ok:
			t.Errorf("--%s is missing from the flag table of docs/installation.md", f.Name)
		case documented != "" && !sameDefault(documented, f.DefValue):
			t.Errorf("docs/installation.md gives --%s the default %q; the code has %q", f.Name, documented, f.DefValue)
		}
	})
	for n := range table {
		if fs.Lookup(n) == nil && logging.Lookup(n) == nil {
			t.Errorf("docs/installation.md documents --%s, which the binary does not define", n)
		}
	}
}

// sameDefault compares a default as the flag table writes it with the flag's: durations by
// value ("10h" and "10h0m0s"), the words the table uses for an empty default, and text as is.
func sameDefault(documented, code string) bool {
	if r, err := time.ParseDuration(documented); err == nil {
		c, err := time.ParseDuration(code)
		return err == nil && r == c
	}
	switch documented {
	case "all", "pod namespace":
		return code == ""
	}
	return documented == code
}

// TestFlagTableCheckFails: the check finds a wrong default and a missing flag.
func TestFlagTableCheckFails(t *testing.T) {
	if sameDefault("2", "4") || !sameDefault("10h", "10h0m0s") || sameDefault("1m", "30s") {
		t.Error("sameDefault compares wrongly")
	}
}
