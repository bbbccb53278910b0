package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

// Indices of removed workspaces. Monocle creates an index per workspace and leaves
// it in Elasticsearch when the workspace leaves config.yaml. With each read of Elasticsearch
// the operator lists the workspace indices (monocle.changes.1.*) and reports in
// status.unusedIndices those of workspaces the config in force no longer has. It deletes one
// only when asked, once per request, by the annotation DeleteIndexAnnotation naming the
// workspace, and refuses a workspace the config has.

// indexDeletion is the deletion the annotation asks for, decided by a sync.
type indexDeletion struct {
	// request is the annotation's value; "" when there is nothing to do.
	request string
	// index is the index to delete; refused says why it is not.
	index, refused string
}

// planIndexDeletion returns the deletion m's annotation asks for, given the config in force
// (nil: not parsed, and nothing is done until it is).
func planIndexDeletion(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config) indexDeletion {
	v := m.Annotations[monoclev1alpha1.DeleteIndexAnnotation]
	if v == "" || cfg == nil || (m.Status.IndexDeletion != nil && m.Status.IndexDeletion.Request == v) {
		return indexDeletion{}
	}
	d := indexDeletion{request: v}
	switch {
	case slices.ContainsFunc(cfg.Workspaces, func(w monocleconfig.Workspace) bool { return w.Name == v }):
		d.refused = fmt.Sprintf("workspace %s is in config.yaml: only the index of a removed workspace is deleted", v)
	case monocleconfig.ValidateWorkspaceName(v) != nil:
		d.refused = fmt.Sprintf("%q is not a workspace name: %v", v, monocleconfig.ValidateWorkspaceName(v))
	default:
		d.index = elastic.WorkspaceIndexPrefix + v
	}
	return d
}

// readIndices deletes index when set, then lists the workspace indices of the Elasticsearch
// client talks to. deleted is the index deleted (or found gone); a failed listing gives nil.
func readIndices(ctx context.Context, logger klog.Logger, client elastic.Client, index string) (indices []elastic.Index, deleted string) {
	if index != "" {
		if err := client.DeleteIndex(ctx, index); err != nil {
			logger.Info("Deleting the index of a removed workspace failed", "index", index, "err", err)
		} else {
			deleted = index
			logger.Info("Deleted the index of a removed workspace", "index", index)
		}
	}
	indices, err := client.Indices(ctx, elastic.WorkspaceIndexPrefix+"*")
	if err != nil {
		logger.V(2).Info("Listing the workspace indices failed", "err", err)
		return nil, deleted
	}
	return indices, deleted
}

// unusedIndices are the indices of read (nil: not read, and m's status stays) whose workspace
// cfg no longer has.
func unusedIndices(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config, read []elastic.Index) []monoclev1alpha1.UnusedIndex {
	if read == nil || cfg == nil {
		return m.Status.UnusedIndices
	}
	var out []monoclev1alpha1.UnusedIndex
	for _, ix := range read {
		ws, ok := strings.CutPrefix(ix.Name, elastic.WorkspaceIndexPrefix)
		if !ok || slices.ContainsFunc(cfg.Workspaces, func(w monocleconfig.Workspace) bool { return w.Name == ws }) {
			continue
		}
		out = append(out, monoclev1alpha1.UnusedIndex{Workspace: ws, Index: ix.Name, Docs: ix.DocsCount, Size: mebibytes(ix.StoreSizeBytes)})
	}
	return out
}

// deletionStatus is status.indexDeletion after d, given what the last read deleted.
func deletionStatus(m *monoclev1alpha1.Monocle, d indexDeletion, deleted string, now time.Time) *monoclev1alpha1.IndexDeletion {
	switch {
	case d.request == "":
	case d.refused != "":
		return &monoclev1alpha1.IndexDeletion{Request: d.request, Time: statusTime(now), Refused: truncate(d.refused)}
	case deleted != "" && deleted == d.index:
		return &monoclev1alpha1.IndexDeletion{Request: d.request, Index: d.index, Time: statusTime(now)}
	}
	return m.Status.IndexDeletion
}

// recordIndexDeletion emits the event of a deletion this sync recorded.
func (c *Controller) recordIndexDeletion(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.IndexDeletion) {
	if is == nil || (was != nil && was.Request == is.Request) {
		return
	}
	if is.Refused != "" {
		c.recorder.Eventf(m, corev1.EventTypeWarning, reasons.IndexDeletionRefused, "Not deleting the index of %s: %s", is.Request, is.Refused)
		return
	}
	c.recorder.Eventf(m, corev1.EventTypeNormal, reasons.IndexDeleted, "Deleted index %s of the removed workspace %s", is.Index, is.Request)
}
