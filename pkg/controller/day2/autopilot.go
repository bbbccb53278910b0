package day2

import (
	"slices"
	"strings"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// autoPilotParts are the parts of the auto-pilot AutoPilotOffAnnotation can turn off.
var autoPilotParts = []string{
	monoclev1alpha1.AutoPilotUpgradePhases, monoclev1alpha1.AutoPilotBlockClearing,
	monoclev1alpha1.AutoPilotAPIRestart, monoclev1alpha1.AutoPilotElasticsearchFirst,
}

// autoPilotOff returns the names AutoPilotOffAnnotation lists on m, trimmed, empty ones
// dropped.
func autoPilotOff(m *monoclev1alpha1.Monocle) []string {
	var names []string
	for _, n := range strings.Split(m.Annotations[monoclev1alpha1.AutoPilotOffAnnotation], ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// AutoPilotIsOff reports whether AutoPilotOffAnnotation turns part off on m.
func AutoPilotIsOff(m *monoclev1alpha1.Monocle, part string) bool {
	return slices.Contains(autoPilotOff(m), part)
}

// AutoPilotMessage is what the Paused condition says of AutoPilotOffAnnotation: the parts
// it turns off and the names it ignores, or "" when it is unset.
func AutoPilotMessage(m *monoclev1alpha1.Monocle) string {
	var off, unknown []string
	for _, n := range autoPilotOff(m) {
		if slices.Contains(autoPilotParts, n) {
			off = append(off, n)
		} else {
			unknown = append(unknown, n)
		}
	}
	var msg string
	if len(off) > 0 {
		msg = "; auto-pilot off: " + strings.Join(off, ", ")
	}
	if len(unknown) > 0 {
		msg += "; " + monoclev1alpha1.AutoPilotOffAnnotation + " names no part " + strings.Join(unknown, ", ") +
			" (ignored; the parts are " + strings.Join(autoPilotParts, ", ") + ")"
	}
	return msg
}
