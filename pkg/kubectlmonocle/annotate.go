package kubectlmonocle

import (
	"context"
	"slices"
	"strings"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// annotate sets annotation key to value on Monocle name, as `kubectl annotate --overwrite`.
func (p *Plugin) annotate(ctx context.Context, name, key, value string) error {
	patch := map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}}
	return p.mergePatch(ctx, name, patch, "annotated", key+"="+value)
}

// Backup asks for an on-demand snapshot of Monocle name: a new value of BackupAnnotation, the
// time of the request (docs/backups.md). Without spec.backup it refuses with the BackupReady
// message the operator gives.
func (p *Plugin) Backup(ctx context.Context, name string) error {
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	if r := day2.BackupStatus(m, nil, p.now()); r.Condition.Reason == reasons.NotBackedUp {
		return &Refusal{Monocle: name, Reason: r.Condition.Message}
	}
	value := p.now().UTC().Format(requestTime)
	if err := p.annotate(ctx, name, monoclev1alpha1.BackupAnnotation, value); err != nil {
		return err
	}
	return p.printf("the snapshot will be %s: kubectl monocle status %s shows it once taken\n", day2.ManualSnapshotName(value), name)
}

// DeleteIndex asks the operator to delete the index of a removed workspace of Monocle name:
// DeleteIndexAnnotation set to the workspace (docs/day2-operations.md). target is the
// workspace or its index. It refuses what the operator would (a workspace config.yaml has,
// with day2.PlanIndexDeletion's message) and any workspace status.unusedIndices does not list.
func (p *Plugin) DeleteIndex(ctx context.Context, name, target string) error {
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	workspace := strings.TrimPrefix(target, elastic.WorkspaceIndexPrefix)
	cfg, err := p.configInForce(ctx, m)
	if err != nil {
		return err
	}
	asked := m.DeepCopy()
	if asked.Annotations == nil {
		asked.Annotations = map[string]string{}
	}
	asked.Annotations[monoclev1alpha1.DeleteIndexAnnotation] = workspace
	asked.Status.IndexDeletion = nil
	if d := day2.PlanIndexDeletion(asked, cfg); d.Refused != "" {
		return &Refusal{Monocle: name, Reason: d.Refused}
	}
	if !slices.ContainsFunc(m.Status.UnusedIndices, func(u monoclev1alpha1.UnusedIndex) bool { return u.Workspace == workspace }) {
		var listed []string
		for _, u := range m.Status.UnusedIndices {
			listed = append(listed, u.Index)
		}
		return &Refusal{Monocle: name, Reason: "status.unusedIndices does not list the index of workspace " + workspace +
			" (it lists: [" + strings.Join(listed, " ") + "]): only an index the operator found unused is deleted"}
	}
	return p.annotate(ctx, name, monoclev1alpha1.DeleteIndexAnnotation, workspace)
}
