package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestOperandWorkerNotLinked checks, with `go list -deps`, that the plugin does not link the
// operand worker (pkg/controller/operand, with its metrics and informer caches): the
// planners it checks requests with (pkg/controller/day2) read the worker's plans and results
// from pkg/controller/operand/contract alone.
func TestOperandWorkerNotLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on $PATH")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const module = "github.com/change-metrics/monocle-operator/"
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"pkg/controller/day2") {
		t.Fatalf("pkg/controller/day2 is not among the dependencies listed: the check would find nothing\n%s", out)
	}
	if slices.Contains(deps, module+"pkg/controller/operand") {
		t.Error("the plugin links the operand worker, pkg/controller/operand")
	}
}
