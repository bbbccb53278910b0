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

// readmeFlags returns the rows of the README's "Operator flags" table: the flag names of each
// row (without dashes) and its default column.
func readmeFlags(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Operator flags\n")
	if !ok {
		t.Fatal("README.md has no \"## Operator flags\" section")
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

// TestREADMEFlagTable: the README's flag table lists every flag the binary defines, only
// those, each with the default the code has (where the table gives one per flag).
func TestREADMEFlagTable(t *testing.T) {
	fs := flag.NewFlagSet("monocle-operator", flag.ContinueOnError)
	bindFlags(fs, &options{})
	logging := flag.NewFlagSet("logging", flag.ContinueOnError)
	addLoggingFlags(logging)
	table := readmeFlags(t)

	fs.VisitAll(func(f *flag.Flag) {
		documented, ok := table[f.Name]
		switch {
		case !ok:
			t.Errorf("--%s is missing from the README's flag table", f.Name)
		case documented != "" && !sameDefault(documented, f.DefValue):
			t.Errorf("the README gives --%s the default %q; the code has %q", f.Name, documented, f.DefValue)
		}
	})
	for n := range table {
		if fs.Lookup(n) == nil && logging.Lookup(n) == nil {
			t.Errorf("the README documents --%s, which the binary does not define", n)
		}
	}
}

// sameDefault compares a default as the README writes it with the flag's: durations by value
// ("10h" and "10h0m0s"), the words the README uses for an empty default, and text as is.
func sameDefault(readme, code string) bool {
	if r, err := time.ParseDuration(readme); err == nil {
		c, err := time.ParseDuration(code)
		return err == nil && r == c
	}
	switch readme {
	case "all", "pod namespace":
		return code == ""
	}
	return readme == code
}

// TestFlagTableCheckFails: the check finds a wrong default and a missing flag.
func TestFlagTableCheckFails(t *testing.T) {
	if sameDefault("2", "4") || !sameDefault("10h", "10h0m0s") || sameDefault("1m", "30s") {
		t.Error("sameDefault compares wrongly")
	}
}
