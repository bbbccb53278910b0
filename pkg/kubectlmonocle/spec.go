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
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
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
// snapshot in from's backup repository (docs/backups.md#restores), which the new Monocle
// only reads (registered read-only), while it backs up into a repository of its own: an
// Elasticsearch snapshot repository has one writer ("only one cluster should have write
// access to the repository": Elasticsearch 7.17, Register a snapshot repository). What
// belongs to from alone is not copied: its restore, maintenance requests and hibernation,
// its public URL and exposure (a host serves one Monocle), and the location of its
// repository; the lines printed name them. A Monocle of elasticsearchRef or external, or
// whose repository is an existing one, is refused (restoreSpec). An existing into is
// refused by the API server (AlreadyExists), which is printed as it says it.
func (p *Plugin) Restore(ctx context.Context, snapshot, from, into string) error {
	src, err := p.get(ctx, from)
	if err != nil {
		return err
	}
	plan, err := restoreSpec(src, snapshot, into)
	if err != nil {
		return err
	}
	m := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: into, Namespace: p.Namespace}, Spec: plan.spec}
	if _, err := p.Monocles.MonocleV1alpha1().Monocles(p.Namespace).Create(ctx, m, metav1.CreateOptions{FieldManager: FieldManager}); err != nil {
		return err
	}
	if err := p.printf("%s created with spec.restore {snapshot: %s, repository: %s} and the spec of %s\n", kubectlName(into), snapshot, plan.source, kubectlName(from)); err != nil {
		return err
	}
	if err := p.printf("%s backs up into %s, a repository of its own: %s's is only read (one cluster writes a repository)\n", into, plan.own, from); err != nil {
		return err
	}
	if len(plan.dropped) > 0 {
		if err := p.printf("not copied from %s: %s\n", from, strings.Join(plan.dropped, ", ")); err != nil {
			return err
		}
	}
	return p.printf("kubectl monocle status %s follows the restore\n", into)
}

// restorePlan is the Monocle Restore creates.
type restorePlan struct {
	// spec is the new Monocle's spec.
	spec monoclev1alpha1.MonocleSpec
	// source is the repository it restores from and own the one it backs up into, described
	// as the plugin prints them.
	source, own string
	// dropped are the fields of the source's spec not copied ("spec.ingress").
	dropped []string
}

// restoreSpec plans Monocle into, in src's namespace, restoring snapshot from src's backup
// repository. A volume repository is named by its claim (src's "<name>-backup" by default)
// and an S3 one by its bucket and src's basePath (by default src's "<namespace>/<name>");
// the new Monocle backs up into a claim of its own ("<into>-backup") or, in the same bucket,
// under a basePath of its own (the default, "<namespace>/<into>"). Refused, with why and
// what to do instead:
//   - src without spec.backup;
//   - src of elasticsearchRef or external: one cluster serves one Monocle (Monocle's index
//     names are fixed), so a copy using src's cluster would be held (ElasticsearchInUse)
//     while src exists, and the cluster a copy should use instead, with its credentials and
//     CA, is not the plugin's to choose or check;
//   - an existing repository: it is registered in src's Elasticsearch alone, and
//     spec.restore.repository cannot name one (only an S3 bucket or a volume);
//   - a new repository that would be src's or overlap it: the claim "<into>-backup" when
//     src's claim has that name, or a basePath "<namespace>/<into>" that is src's, lies
//     within it or holds it, in the same bucket of the same endpoint.
func restoreSpec(src *monoclev1alpha1.Monocle, snapshot, into string) (restorePlan, error) {
	refuse := func(format string, args ...any) (restorePlan, error) {
		return restorePlan{}, &Refusal{Monocle: src.Name, Reason: fmt.Sprintf(format, args...)}
	}
	if src.Spec.Backup == nil {
		return refuse("spec.backup is unset: it has no backup repository to restore from")
	}
	if target := ownCluster(src); target != "" {
		return refuse("it uses %s, and one cluster serves one Monocle: a copy on that cluster would be held (%s) while %s exists. "+
			"Write the new Monocle yourself with a cluster of its own and spec.restore naming a repository that holds the snapshot, "+
			"or restore into %s itself with spec.restore (its indices are replaced)",
			target, reasons.ElasticsearchInUse, src.Name, src.Name)
	}
	if name := src.Spec.Backup.Repository.Existing; name != "" {
		return refuse("its backup repository is existing %s, registered in its own Elasticsearch only: the new Monocle's would not have it, "+
			"and spec.restore.repository names only an S3 bucket or a volume. Write the new Monocle yourself with spec.restore.repository "+
			"naming the storage behind %s, or restore into %s itself with spec.restore (its indices are replaced)", name, name, src.Name)
	}
	plan := restorePlan{spec: *src.Spec.DeepCopy()}
	spec := &plan.spec
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
			plan.dropped = append(plan.dropped, "spec."+f.name)
			f.clear()
		}
	}
	copied := &monoclev1alpha1.Monocle{ObjectMeta: metav1.ObjectMeta{Name: into, Namespace: src.Namespace}, Spec: plan.spec}
	from := src.Spec.Backup.Repository.DeepCopy()
	if s3 := from.S3; s3 != nil {
		s3.BasePath = resources.S3BasePath(src, s3)
		plan.source = fmt.Sprintf("s3 bucket %s, basePath %s", s3.Bucket, s3.BasePath)
		own := spec.Backup.Repository.S3
		if own.BasePath != "" {
			own.BasePath = ""
			plan.dropped = append(plan.dropped, "spec.backup.repository.s3.basePath")
		}
		ownPath := resources.S3BasePath(copied, own)
		plan.own = fmt.Sprintf("s3 bucket %s, basePath %s", own.Bucket, ownPath)
		if how := overlap(ownPath, s3.BasePath); how != "" {
			return refuse("the new Monocle would back up into basePath %s (\"<namespace>/<name>\") of bucket %s, which %s its repository's basePath %s: "+
				"a repository has one writer. Choose another name than %s", ownPath, s3.Bucket, how, s3.BasePath, into)
		}
	} else {
		from = &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: resources.BackupClaimName(src)}}
		plan.source = "volume claimName " + from.Volume.ClaimName
		if v := spec.Backup.Repository.Volume; v != nil && v.ClaimName != "" {
			v.ClaimName = ""
			plan.dropped = append(plan.dropped, "spec.backup.repository.volume.claimName")
		}
		ownClaim := resources.BackupClaimName(copied)
		plan.own = "volume claimName " + ownClaim
		if ownClaim == from.Volume.ClaimName {
			return refuse("the new Monocle would back up into claim %s (\"<name>-backup\"), which is its backup repository: a repository has one writer. "+
				"Choose another name than %s", ownClaim, into)
		}
	}
	spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: snapshot, Repository: from}
	return plan, nil
}

// ownCluster describes the Elasticsearch m uses when it is not the bundled one, as the
// refusal of Restore names it, or is "".
func ownCluster(m *monoclev1alpha1.Monocle) string {
	es := m.Spec.Elasticsearch
	switch {
	case es.ElasticsearchRef != nil:
		return fmt.Sprintf("the ECK Elasticsearch %s/%s (spec.elasticsearch.elasticsearchRef)",
			resources.ECKNamespace(m), es.ElasticsearchRef.Name)
	case es.External != nil:
		return fmt.Sprintf("the Elasticsearch %s (spec.elasticsearch.external)", es.External.URL)
	}
	return ""
}

// overlap says how S3 key prefix a relates to b when the repository under one would hold
// the other's objects ("is", "lies within", "holds"), or is "" when they are apart. Both
// are compared without their leading and trailing slashes, by whole path segments.
func overlap(a, b string) string {
	a, b = strings.Trim(a, "/"), strings.Trim(b, "/")
	switch {
	case a == b:
		return "is"
	case strings.HasPrefix(b, a+"/"):
		return "holds"
	case strings.HasPrefix(a, b+"/"):
		return "lies within"
	}
	return ""
}
