package day2

import (
	"fmt"
	"slices"
	"strings"
	"time"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

// Indices of removed workspaces. Monocle creates an index per workspace and leaves it in
// Elasticsearch when the workspace leaves config.yaml. With each read of Elasticsearch the
// operand worker lists the workspace indices (monocle.changes.1.*), and the status reports
// in status.unusedIndices those of workspaces the config in force no longer has. The worker
// deletes one only when asked, once per request, by the annotation DeleteIndexAnnotation
// naming the workspace, and a workspace the config has is refused.

// IndexDeletion is the deletion the annotation asks for, decided by a sync.
type IndexDeletion struct {
	// Request is the annotation's value; "" when there is nothing to do.
	Request string
	// Index is the index to delete (contract.Plan.DeleteIndex); Refused says why it is not.
	Index, Refused string
}

// PlanIndexDeletion returns the deletion m's annotation asks for, given the config in force
// (nil: not parsed, and nothing is done until it is).
func PlanIndexDeletion(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config) IndexDeletion {
	v := m.Annotations[monoclev1alpha1.DeleteIndexAnnotation]
	if v == "" || cfg == nil || (m.Status.IndexDeletion != nil && m.Status.IndexDeletion.Request == v) {
		return IndexDeletion{}
	}
	d := IndexDeletion{Request: v}
	switch {
	case slices.ContainsFunc(cfg.Workspaces, func(w monocleconfig.Workspace) bool { return w.Name == v }):
		d.Refused = fmt.Sprintf("workspace %s is in config.yaml: only the index of a removed workspace is deleted", v)
	case monocleconfig.ValidateWorkspaceName(v) != nil:
		d.Refused = fmt.Sprintf("%q is not a workspace name: %v", v, monocleconfig.ValidateWorkspaceName(v))
	default:
		d.Index = elastic.WorkspaceIndexPrefix + v
	}
	return d
}

// UnusedIndices are the indices of read (nil: not read, and m's status stays) whose workspace
// cfg no longer has.
func UnusedIndices(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config, read []elastic.Index) []monoclev1alpha1.UnusedIndex {
	if read == nil || cfg == nil {
		return m.Status.UnusedIndices
	}
	var out []monoclev1alpha1.UnusedIndex
	for _, ix := range read {
		ws, ok := strings.CutPrefix(ix.Name, elastic.WorkspaceIndexPrefix)
		if !ok || slices.ContainsFunc(cfg.Workspaces, func(w monocleconfig.Workspace) bool { return w.Name == ws }) {
			continue
		}
		out = append(out, monoclev1alpha1.UnusedIndex{Workspace: ws, Index: ix.Name, Docs: ix.DocsCount, Size: contract.Mebibytes(ix.StoreSizeBytes)})
	}
	return out
}

// DeletionStatus is status.indexDeletion after d, given what the last read deleted.
func DeletionStatus(m *monoclev1alpha1.Monocle, d IndexDeletion, deleted string, now time.Time) *monoclev1alpha1.IndexDeletion {
	switch {
	case d.Request == "":
	case d.Refused != "":
		return &monoclev1alpha1.IndexDeletion{Request: d.Request, Time: StatusTime(now), Refused: Truncate(d.Refused)}
	case deleted != "" && deleted == d.Index:
		return &monoclev1alpha1.IndexDeletion{Request: d.Request, Index: d.Index, Time: StatusTime(now)}
	}
	return m.Status.IndexDeletion
}
