package kubectlmonocle

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Hibernate sets spec.hibernate of Monocle name to on. Asking to hibernate while a restore
// or an upgrade is under way is refused with the message of the operator's Hibernated
// condition that would defer it (day2.HibernationDeferral).
func (p *Plugin) Hibernate(ctx context.Context, name string, on bool) error {
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	if on {
		if why := day2.HibernationDeferral(m); why != "" {
			return &Refusal{Monocle: name, Reason: why}
		}
	}
	return p.mergePatch(ctx, name, map[string]any{"spec": map[string]any{"hibernate": on}}, "patched", fmt.Sprintf("spec.hibernate=%t", on))
}

// configInForce is the config.yaml Monocle m's pods run, parsed: spec.config when Monocle
// accepts it, else the ConfigMap "<name>-api" (the user's when spec.config is unset, and
// the last valid spec.config otherwise), as the controller's ensureConfig decides. nil when
// neither parses: the operator then checks nothing either.
func (p *Plugin) configInForce(ctx context.Context, m *monoclev1alpha1.Monocle) (*monocleconfig.Config, error) {
	if m.Spec.Config != "" {
		if cfg, err := monocleconfig.Parse(m.Spec.Config); err == nil {
			return cfg, nil
		}
	}
	cm, err := p.Kube.CoreV1().ConfigMaps(m.Namespace).Get(ctx, resources.ConfigMapName(m), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading config.yaml of Monocle %s: %w", m.Name, err)
	}
	cfg, err := monocleconfig.Parse(cm.Data[resources.ConfigKey])
	if err != nil {
		return nil, nil
	}
	return cfg, nil
}

// Recrawl appends maintenance requests to Monocle name's spec.maintenance for each crawler
// of workspace (only crawler when given): WipeCrawlerData, or SetCrawlerCommitDate to since
// when given (docs/day2-operations.md#maintenance). Each request is checked as the operator
// checks it (day2.CheckMaintenanceRequest) and refused with its message. The list is
// written whole with the resourceVersion it was read at, so a concurrent change is a
// conflict, retried from a fresh read, never lost.
func (p *Plugin) Recrawl(ctx context.Context, name, workspace, crawler, since string) error {
	var added []monoclev1alpha1.MaintenanceRequest
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m, err := p.get(ctx, name)
		if err != nil {
			return err
		}
		cfg, err := p.configInForce(ctx, m)
		if err != nil {
			return err
		}
		added, err = p.recrawlRequests(m, cfg, workspace, crawler, since)
		if err != nil {
			return err
		}
		patch := map[string]any{
			"metadata": map[string]any{"resourceVersion": m.ResourceVersion},
			"spec":     map[string]any{"maintenance": append(m.Spec.Maintenance, added...)},
		}
		err = p.patch(ctx, name, patch)
		return err
	})
	if err != nil {
		return err
	}
	for _, r := range added {
		desc := fmt.Sprintf("{name: %s, operation: %s, workspace: %s, crawler: %s", r.Name, r.Operation, r.Workspace, r.Crawler)
		if r.CommitDate != "" {
			desc += ", commitDate: " + r.CommitDate
		}
		if err := p.printf("%s patched spec.maintenance += %s}\n", kubectlName(name), desc); err != nil {
			return err
		}
	}
	return nil
}

// recrawlRequests are the requests Recrawl adds, or the operator's refusal of one of them.
// Each is named "recrawl-<8 hex>" from its fields and the time: a request runs once per name.
func (p *Plugin) recrawlRequests(m *monoclev1alpha1.Monocle, cfg *monocleconfig.Config, workspace, crawler, since string) ([]monoclev1alpha1.MaintenanceRequest, error) {
	if cfg == nil {
		return nil, &Refusal{Monocle: m.Name, Reason: "it has no valid config.yaml yet (see its ConfigValid condition): the workspace and crawler cannot be checked"}
	}
	crawlers := []string{crawler}
	if crawler == "" {
		crawlers = nil
		for _, w := range cfg.Workspaces {
			if w.Name != workspace {
				continue
			}
			for _, c := range w.Crawlers {
				crawlers = append(crawlers, c.Name)
			}
			if len(crawlers) == 0 {
				return nil, &Refusal{Monocle: m.Name, Reason: "workspace " + workspace + " has no crawler"}
			}
		}
		if crawlers == nil {
			crawlers = []string{""} // checked below: the operator's message names the workspaces
		}
	}
	op := monoclev1alpha1.WipeCrawlerData
	if since != "" {
		op = monoclev1alpha1.SetCrawlerCommitDate
	}
	var out []monoclev1alpha1.MaintenanceRequest
	for _, c := range crawlers {
		r := monoclev1alpha1.MaintenanceRequest{Operation: op, Workspace: workspace, Crawler: c, CommitDate: since}
		if why := day2.CheckMaintenanceRequest(r, cfg); why != "" {
			return nil, &Refusal{Monocle: m.Name, Reason: why}
		}
		r.Name = "recrawl-" + resources.Hash([]string{string(op), workspace, c, since, p.now().UTC().Format(requestTime)})[:8]
		out = append(out, r)
	}
	return out, nil
}

// Restore creates Monocle into with the spec of Monocle from and spec.restore naming
// snapshot in from's backup repository (docs/backups.md#restores). What belongs to from
// alone is not copied: its restore, maintenance requests and hibernation, and its public
// URL and exposure (a host serves one Monocle); the lines printed name them. An existing
// into is refused by the API server (AlreadyExists), which is printed as it says it.
func (p *Plugin) Restore(ctx context.Context, snapshot, from, into string) error {
	src, err := p.get(ctx, from)
	if err != nil {
		return err
	}
	spec, repo, dropped, err := restoreSpec(src, snapshot)
	if err != nil {
		return err
	}
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: into, Namespace: p.Namespace}, Spec: spec}
	if _, err := p.Monocles.MonocleV1alpha1().Monocles(p.Namespace).Create(ctx, m, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		return err
	}
	if err := p.printf("%s created with spec.restore {snapshot: %s, repository: %s} and the spec of %s\n", kubectlName(into), snapshot, repo, kubectlName(from)); err != nil {
		return err
	}
	if len(dropped) > 0 {
		if err := p.printf("not copied from %s: %s\n", from, strings.Join(dropped, ", ")); err != nil {
			return err
		}
	}
	return p.printf("kubectl monocle status %s follows the restore\n", into)
}

// restoreSpec is the spec of a new Monocle restoring snapshot from src's backup repository,
// that repository as the operator reads it (described), and the fields of src not copied.
// A volume repository is named by its claim (src's "<name>-backup" by default), an S3 one
// keeps src's basePath (by default src's "<namespace>/<name>"), an existing one its name.
func restoreSpec(src *monoclev1alpha1.Monocle, snapshot string) (monoclev1alpha1.MonocleSpec, string, []string, error) {
	if src.Spec.Backup == nil {
		return monoclev1alpha1.MonocleSpec{}, "", nil, &Refusal{Monocle: src.Name, Reason: "spec.backup is unset: it has no backup repository to restore from"}
	}
	spec := *src.Spec.DeepCopy()
	var dropped []string
	for _, f := range []struct {
		name  string
		isSet bool
		clear func()
	}{
		{"restore", spec.Restore != nil, func() { spec.Restore = nil }},
		{"maintenance", spec.Maintenance != nil, func() { spec.Maintenance = nil }},
		{"hibernate", spec.Hibernate, func() { spec.Hibernate = false }},
		{"publicURL", spec.PublicURL != "", func() { spec.PublicURL = "" }},
		{"ingress", spec.Ingress != nil, func() { spec.Ingress = nil }},
		{"httpRoute", spec.HTTPRoute != nil, func() { spec.HTTPRoute = nil }},
		{"route", spec.Route != nil, func() { spec.Route = nil }},
	} {
		if f.isSet {
			dropped = append(dropped, "spec."+f.name)
			f.clear()
		}
	}
	repo := src.Spec.Backup.Repository.DeepCopy()
	var described string
	switch {
	case repo.S3 != nil:
		repo.S3.BasePath = resources.S3BasePath(src, repo.S3)
		described = fmt.Sprintf("s3 bucket %s, basePath %s", repo.S3.Bucket, repo.S3.BasePath)
	case repo.Existing != "":
		// The operator restores from spec.backup's existing repository when
		// spec.restore.repository is unset (day2.restoreSourceOf).
		repo, described = nil, "existing "+src.Spec.Backup.Repository.Existing
	default:
		repo = &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: resources.BackupClaimName(src)}}
		described = "volume claimName " + repo.Volume.ClaimName
		// The new Monocle backs up into a volume of its own, not into src's claim.
		if v := spec.Backup.Repository.Volume; v != nil && v.ClaimName != "" {
			v.ClaimName = ""
			dropped = append(dropped, "spec.backup.repository.volume.claimName")
		}
	}
	spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: snapshot, Repository: repo}
	return spec, described, dropped, nil
}
