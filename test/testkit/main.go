package testkit

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// Main is the TestMain of a suite that needs the local control plane. With -short it only
// runs the tests, which skip themselves without a cluster. Otherwise it calls setUp, which
// starts what the suite needs, runs m and returns m's exit code; Main exits with that code,
// or prints "<suite> set-up failed: <error>" and exits with 1.
func Main(m *testing.M, suite string, setUp func(*testing.M) (int, error)) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run())
	}
	code, err := setUp(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, suite+" set-up failed:", err)
		os.Exit(1)
	}
	os.Exit(code)
}
