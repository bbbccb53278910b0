package main

import (
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != defaultGCPercent {
		t.Errorf("without GOGC the GC percent is %d, want %d", got, defaultGCPercent)
	}
	t.Setenv("GOGC", "200")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GOGC=200 set: setGCPercent changed the GC percent to %d", got)
	}
}
