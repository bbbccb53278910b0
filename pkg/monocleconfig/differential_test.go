package monocleconfig

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oracleVariable names the environment variable holding the path of the built oracle,
// test/differential/Oracle.hs.
const oracleVariable = "MONOCLE_ORACLE"

// TestDifferentialAgainstLibraries compares the operator's verdict on thousands of inputs
// (differentialInputs) with the verdict of the Haskell libraries Monocle 1.11.2 builds with,
// which the oracle (test/differential/Oracle.hs, built by `make test-differential` with
// Debian's GHC) computes by calling them as Monocle calls them:
//   - update_since: validateUpdateSince against parseDateValue of src/Monocle/Prelude.hs;
//   - alias_date: Parse of a config whose search alias is from:"<date>" against
//     parseDateValue of src/Monocle/Search/Query.hs and its 1970 rule;
//   - yaml_scalar: decodeYAML of "v: <scalar>" against HsYAML-aeson's decode1Strict;
//   - natural: decodeYAML and optNatural against dhall-json's rule for a Natural.
//
// It prints how many inputs it compared and every disagreement, and fails on any
// disagreement knownDifferences does not list.
func TestDifferentialAgainstLibraries(t *testing.T) {
	oracle := os.Getenv(oracleVariable)
	if oracle == "" {
		t.Skip(oracleVariable + " is not set: `make test-differential` builds the Haskell oracle (test/differential/Oracle.hs) and runs this test with it")
	}
	var compared []differentialInput
	keptOut := map[string]int{}
	for _, in := range differentialInputs() {
		if why := outsideOracle(in); why != "" {
			keptOut[in.kind+": "+why]++
			continue
		}
		compared = append(compared, in)
	}
	library := runOracle(t, oracle, compared)

	perKind := map[string]int{}
	libraryAnswers := map[string]map[string]int{} // kind -> the library's answer -> inputs
	var known, unknown []string
	for i, in := range compared {
		perKind[in.kind]++
		if libraryAnswers[in.kind] == nil {
			libraryAnswers[in.kind] = map[string]int{}
		}
		libraryAnswers[in.kind][answer(library[i])]++
		op := operatorVerdict(in)
		if agree(in.kind, op, library[i]) {
			continue
		}
		line := fmt.Sprintf("%s %s: operator %s; library %s", in.kind, strconv.Quote(in.input), readable(op), readable(library[i]))
		if k := knownDifferenceOf(in.kind, op); k != nil {
			known = append(known, line+" (known: "+k.doc+")")
		} else {
			unknown = append(unknown, line)
		}
	}
	t.Logf("compared %d inputs (%s), %d disagreements (%d known, %d not)",
		len(compared), counts(perKind), len(known)+len(unknown), len(known), len(unknown))
	for _, kind := range slices.Sorted(maps.Keys(libraryAnswers)) {
		t.Logf("the library's answers to the %s inputs: %s", kind, counts(libraryAnswers[kind]))
	}
	if len(keptOut) > 0 {
		t.Logf("kept out of the comparison: %s", counts(keptOut))
	}
	for _, l := range known {
		t.Log(l)
	}
	for _, l := range unknown {
		t.Error(l)
	}
	// A broken oracle answering the same to everything must not pass for agreement.
	for _, kind := range []string{kindUpdateSince, kindAliasDate, kindYAMLScalar, kindNatural} {
		if len(libraryAnswers[kind]) < 2 {
			t.Errorf("the library gave %v to every %s input: the oracle or the inputs are broken", slices.Sorted(maps.Keys(libraryAnswers[kind])), kind)
		}
	}
}

// knownDifference is a disagreement the operator keeps on purpose.
type knownDifference struct {
	kinds []string
	// doc is where the difference is documented.
	doc string
	// matches reports whether the operator's verdict is this difference.
	matches func(operator string) bool
}

// knownDifferences are the disagreements TestDifferentialAgainstLibraries accepts.
var knownDifferences = []knownDifference{{
	kinds: []string{kindYAMLScalar, kindNatural},
	doc:   "docs/monocle-resource.md, Tested against Monocle's libraries: duplicate keys are refused, where HsYAML-aeson keeps the last",
	matches: func(op string) bool {
		return answer(op) == "error" && strings.Contains(op, "twice in one mapping")
	},
}, {
	kinds: []string{kindYAMLScalar, kindNatural},
	doc:   "docs/monocle-resource.md, stricter on purpose: U+0085, U+2028 and U+2029 written raw are refused, which yaml.v3 reads as line breaks and HsYAML does not",
	matches: func(op string) bool {
		return answer(op) == "error" && strings.Contains(op, "YAML 1.1 readers take it for a line break")
	},
}}

func knownDifferenceOf(kind, operator string) *knownDifference {
	for i, k := range knownDifferences {
		if slices.Contains(k.kinds, kind) && k.matches(operator) {
			return &knownDifferences[i]
		}
	}
	return nil
}

// outsideOracle says why an input is not compared, or "" when it is:
//   - a date starting with "-": time 1.12.2 (Monocle 1.11.2's build) reads "%Y" with an
//     optional minus sign (allowNegative in lib/Data/Time/Format/Parse/Class.hs), time 1.9.3
//     (Debian 12's GHC, the oracle's) without, so the oracle's verdict is not Monocle's;
//   - an alias date that is empty or has a double quote or a character below U+0020: no
//     search literal can hold it (literal in Monocle's src/Monocle/Search/Lexer.hs takes one
//     or more characters, neither of these in a quoted literal, nor white space in a bare
//     one).
func outsideOracle(in differentialInput) string {
	if (in.kind == kindUpdateSince || in.kind == kindAliasDate) && strings.HasPrefix(in.input, "-") {
		return "negative year (time 1.9.3)"
	}
	if in.kind == kindAliasDate && (in.input == "" || strings.ContainsFunc(in.input, func(r rune) bool { return r < 0x20 || r == '"' })) {
		return "not writable in a search literal"
	}
	return ""
}

// runOracle runs the oracle once over the inputs and returns its verdicts, one per input.
func runOracle(t *testing.T, oracle string, inputs []differentialInput) []string {
	t.Helper()
	var stdin bytes.Buffer
	for _, in := range inputs {
		fmt.Fprintf(&stdin, "%s\t%s\n", in.kind, hex.EncodeToString([]byte(in.input)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, oracle)
	cmd.Stdin = &stdin
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle %s: %v: %s", oracle, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("oracle %s answered %d lines to %d inputs", oracle, len(lines), len(inputs))
	}
	return lines
}

// operatorVerdict is the operator's verdict on an input, in the oracle's words (see
// test/differential/Oracle.hs), its reason after the answer.
func operatorVerdict(in differentialInput) string {
	switch in.kind {
	case kindUpdateSince:
		if err := validateUpdateSince(in.input); err != nil {
			return "refused " + err.Error()
		}
		return "ok"
	case kindAliasDate:
		return operatorAliasDate(in.input)
	case kindYAMLScalar:
		v, err := decodeScalar(in.input)
		if err != nil {
			return "error " + err.Message
		}
		return scalarVerdict(v)
	case kindNatural:
		v, err := decodeScalar(in.input)
		if err != nil {
			return "error " + err.Message
		}
		if err := (object{m: map[string]any{"v": v}}).optNatural("v"); err != nil {
			return "refused " + err.Message
		}
		return "ok"
	}
	panic("unknown kind " + in.kind)
}

// operatorAliasDate parses a config with one workspace whose one search alias is
// from:"<date>", and sorts the result by Monocle's messages (mkRangeValue in
// src/Monocle/Search/Query.hs).
func operatorAliasDate(date string) string {
	alias := yamlQuoted(`from:"` + date + `"`)
	_, err := Parse("workspaces:\n- name: w\n  crawlers: []\n  search_aliases:\n  - name: a\n    alias: " + alias + "\n")
	switch {
	case err == nil:
		return "ok"
	case strings.Contains(err.Error(), "Date is too old: "):
		return "too-old " + err.Error()
	case strings.Contains(err.Error(), "Invalid date: "):
		return "unparsable " + err.Error()
	}
	return "error " + err.Error()
}

// yamlQuoted writes s as a YAML double-quoted scalar with every character outside printable
// ASCII escaped, so that the YAML reader gives back s itself (a YAML 1.1 reader folds a raw
// NEL or LINE SEPARATOR into a space).
func yamlQuoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			b.WriteRune(r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// decodeScalar returns the value of v in the YAML document "v: <scalar>"; nil when there
// is none.
func decodeScalar(scalar string) (any, *Error) {
	doc, err := decodeYAML("v: " + scalar)
	if err != nil {
		return nil, err
	}
	m, _ := doc.(map[string]any)
	return m["v"], nil
}

// scalarVerdict writes a decoded value as the oracle writes a JSON value.
func scalarVerdict(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool " + strconv.FormatBool(v)
	case json.Number:
		return "number " + canonicalNumber(v)
	case string:
		return "string " + hex.EncodeToString([]byte(v))
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("unknown %T", v)
}

var integerLiteral = regexp.MustCompile(`^[-+]?[0-9]+$`)

// canonicalNumber writes n as the oracle writes a Scientific: <coefficient>e<exponent>, with
// no trailing zero in the coefficient. An integer literal is exact; any other is read as the
// float64 it rounds to, as the operator reads it (optNatural) and as the YAML library's
// Double is; the exact value of that float64 is written. What no float64 reads ("+Inf",
// "1e400") is written as it is.
func canonicalNumber(n json.Number) string {
	s := string(n)
	c, e := new(big.Int), 0
	if integerLiteral.MatchString(s) {
		c.SetString(strings.TrimPrefix(s, "+"), 10)
	} else {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return s
		}
		r := new(big.Rat).SetFloat64(f)
		k := r.Denom().BitLen() - 1 // the denominator is 2^k: p/2^k = p*5^k / 10^k
		c.Mul(r.Num(), new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(k)), nil))
		e = -k
	}
	if c.Sign() == 0 {
		return "0e0"
	}
	ten, q, m := big.NewInt(10), new(big.Int), new(big.Int)
	for {
		q.QuoRem(c, ten, m)
		if m.Sign() != 0 {
			break
		}
		c.Set(q)
		e++
	}
	return fmt.Sprintf("%se%d", c, e)
}

// answer is the first word of a verdict.
func answer(verdict string) string {
	a, _, _ := strings.Cut(verdict, " ")
	return a
}

// agree reports whether two verdicts on an input of kind agree: same answer and, for a YAML
// value, the same value.
func agree(kind, operator, library string) bool {
	if kind == kindYAMLScalar && answer(library) != "error" {
		return operator == library
	}
	return answer(operator) == answer(library)
}

// readable writes a verdict's hex string as a quoted one, and its numbers of more than 30
// digits by their first 20 and how many there are.
func readable(verdict string) string {
	if h, ok := strings.CutPrefix(verdict, "string "); ok {
		if b, err := hex.DecodeString(h); err == nil {
			return "string " + strconv.Quote(string(b))
		}
	}
	return longNumber.ReplaceAllStringFunc(verdict, func(n string) string {
		return fmt.Sprintf("%s...(%d digits)", n[:20], len(n))
	})
}

var longNumber = regexp.MustCompile(`[0-9]{31,}`)

func counts(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}
