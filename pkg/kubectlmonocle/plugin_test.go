package kubectlmonocle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/generated/clientset/versioned/fake"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// testConfig has workspace demo with crawlers gh and gl.
const testConfig = `workspaces:
- name: demo
  crawlers:
  - {name: gh, update_since: "2024-01-01", provider: {github_organization: change-metrics}}
  - {name: gl, update_since: "2024-01-01", provider: {gitlab_organization: change-metrics}}
`

var testNow = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// monocle is Monocle "demo" in namespace "ns" with testConfig, changed by edit.
func monocle(edit func(*monoclev1alpha1.Monocle)) *monoclev1alpha1.Monocle {
	m := &monoclev1alpha1.Monocle{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", Namespace: "ns", ResourceVersion: "7"},
		Spec:       monoclev1alpha1.MonocleSpec{Config: testConfig},
	}
	if edit != nil {
		edit(m)
	}
	return m
}

// fixture holds the fake clientsets a command ran against and what it printed.
type fixture struct {
	monocles *fake.Clientset
	kube     *k8sfake.Clientset
	out      bytes.Buffer
	// namespace is the namespace the flags resolved to.
	namespace string
}

// run runs `kubectl monocle args...` against fakes seeded with objects (Monocles go to the
// Monocle clientset, the others to the Kubernetes one), in namespace ns unless -n says
// otherwise.
func run(t *testing.T, objects []runtime.Object, args ...string) (*fixture, error) {
	t.Helper()
	return runWith(t, objects, nil, args...)
}

// runWith is run with setup called on the fixture before the command runs.
func runWith(t *testing.T, objects []runtime.Object, setup func(*fixture), args ...string) (*fixture, error) {
	t.Helper()
	f := &fixture{}
	isMonocle := func(o runtime.Object) bool { _, ok := o.(*monoclev1alpha1.Monocle); return ok }
	f.monocles = fake.NewSimpleClientset(slices.DeleteFunc(slices.Clone(objects), func(o runtime.Object) bool { return !isMonocle(o) })...)
	f.kube = k8sfake.NewClientset(slices.DeleteFunc(slices.Clone(objects), isMonocle)...)
	if setup != nil {
		setup(f)
	}
	connect := func(flags *genericclioptions.ConfigFlags, out io.Writer) (*Plugin, error) {
		f.namespace = "ns"
		if *flags.Namespace != "" {
			f.namespace = *flags.Namespace
		}
		return &Plugin{Monocles: f.monocles, Kube: f.kube, Namespace: f.namespace, Out: out, Now: func() time.Time { return testNow }}, nil
	}
	cmd := NewCommand(genericiooptions.IOStreams{Out: &f.out, ErrOut: &f.out}, connect)
	cmd.SetArgs(args)
	return f, cmd.ExecuteContext(context.Background())
}

// writes are the create and patch actions on Monocles, as "verb name body".
func (f *fixture) writes() []string {
	var out []string
	for _, a := range f.monocles.Actions() {
		switch a := a.(type) {
		case k8stesting.PatchAction:
			out = append(out, "patch "+a.GetName()+" "+string(a.GetPatch()))
		case k8stesting.CreateAction:
			out = append(out, "create "+a.GetObject().(*monoclev1alpha1.Monocle).Name)
		}
	}
	return out
}

func (f *fixture) monocle(t *testing.T, name string) *monoclev1alpha1.Monocle {
	t.Helper()
	m, err := f.monocles.MonocleV1alpha1().Monocles(f.namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// expectRefused checks err is a Refusal whose reason starts with reason, and nothing was
// written.
func expectRefused(t *testing.T, f *fixture, err error, reason string) {
	t.Helper()
	var r *Refusal
	if !errors.As(err, &r) || !strings.HasPrefix(r.Reason, reason) {
		t.Fatalf("error = %v, want a refusal %q", err, reason)
	}
	if w := f.writes(); len(w) != 0 {
		t.Errorf("a refused verb wrote %v", w)
	}
}

func TestBackup(t *testing.T) {
	withBackup := monocle(func(m *monoclev1alpha1.Monocle) { m.Spec.Backup = &monoclev1alpha1.BackupSpec{} })
	f, err := run(t, []runtime.Object{withBackup}, "backup", "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := "20261126T100000.000Z"
	if got := f.monocle(t, "demo").Annotations[monoclev1alpha1.BackupAnnotation]; got != want {
		t.Errorf("annotation %s = %q, want %q", monoclev1alpha1.BackupAnnotation, got, want)
	}
	if !strings.HasPrefix(f.out.String(), "monocle.monocle.monocle.change-metrics.io/demo annotated monocle.change-metrics.io/backup="+want+"\n") {
		t.Errorf("printed %q", f.out.String())
	}
	if !strings.Contains(f.out.String(), "the snapshot will be manual-") {
		t.Errorf("printed %q, without the snapshot's name", f.out.String())
	}

	f, err = run(t, []runtime.Object{monocle(nil)}, "backup", "demo")
	expectRefused(t, f, err, "spec.backup is unset: the Elasticsearch index is not backed up")
}

func TestHibernateAndWake(t *testing.T) {
	f, err := run(t, []runtime.Object{monocle(nil)}, "hibernate", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if !f.monocle(t, "demo").Spec.Hibernate || f.out.String() != "monocle.monocle.monocle.change-metrics.io/demo patched spec.hibernate=true\n" {
		t.Errorf("spec.hibernate = %t, printed %q", f.monocle(t, "demo").Spec.Hibernate, f.out.String())
	}

	hibernated := monocle(func(m *monoclev1alpha1.Monocle) { m.Spec.Hibernate = true })
	f, err = run(t, []runtime.Object{hibernated}, "wake", "demo")
	if err != nil {
		t.Fatal(err)
	}
	if f.monocle(t, "demo").Spec.Hibernate || f.out.String() != "monocle.monocle.monocle.change-metrics.io/demo patched spec.hibernate=false\n" {
		t.Errorf("spec.hibernate = %t, printed %q", f.monocle(t, "demo").Spec.Hibernate, f.out.String())
	}

	restoring := monocle(func(m *monoclev1alpha1.Monocle) {
		m.Spec.Restore = &monoclev1alpha1.RestoreSpec{Snapshot: "s1"}
		m.Status.Restore = &monoclev1alpha1.RestoreStatus{Snapshot: "s1", Phase: monoclev1alpha1.RestoreRestoring}
	})
	f, err = run(t, []runtime.Object{restoring}, "hibernate", "demo")
	expectRefused(t, f, err, "spec.hibernate waits for the restore of snapshot s1 (phase Restoring) to end: the Monocle hibernates then")

	upgrading := monocle(func(m *monoclev1alpha1.Monocle) {
		m.Status.Upgrade = &monoclev1alpha1.UpgradeStatus{From: "1.10.0", To: "1.11.2", Phase: monoclev1alpha1.UpgradeReplacingAPI}
	})
	f, err = run(t, []runtime.Object{upgrading}, "hibernate", "demo")
	expectRefused(t, f, err, "spec.hibernate waits for the upgrade from 1.10.0 to 1.11.2 (phase ReplacingAPI) to end: the Monocle hibernates then")

	// Waking is never refused: it only undoes the switch.
	f, err = run(t, []runtime.Object{upgrading}, "wake", "demo")
	if err != nil || len(f.writes()) != 1 {
		t.Errorf("wake during an upgrade: %v, writes %v", err, f.writes())
	}
}

func TestRecrawl(t *testing.T) {
	earlier := monoclev1alpha1.MaintenanceRequest{Name: "old", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gh"}
	withRequest := monocle(func(m *monoclev1alpha1.Monocle) { m.Spec.Maintenance = []monoclev1alpha1.MaintenanceRequest{earlier} })
	userConfig := monocle(func(m *monoclev1alpha1.Monocle) { m.Spec.Config = "" })
	configMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo-api", Namespace: "ns"},
		Data: map[string]string{resources.ConfigKey: "workspaces:\n- name: other\n  crawlers:\n  - name: gr\n    update_since: \"2024-01-01\"\n    provider:\n      gerrit_url: https://review.example.com\n      gerrit_repositories: [a]\n"}}
	tests := map[string]struct {
		objects []runtime.Object
		args    []string
		want    []monoclev1alpha1.MaintenanceRequest // appended after what the spec had
		refused string
	}{
		"every crawler of the workspace": {
			objects: []runtime.Object{withRequest}, args: []string{"demo", "demo"},
			want: []monoclev1alpha1.MaintenanceRequest{
				{Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gh"},
				{Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gl"},
			},
		},
		"one crawler, since a date": {
			objects: []runtime.Object{monocle(nil)}, args: []string{"demo", "demo", "--crawler", "gl", "--since", "2023-01-01"},
			want: []monoclev1alpha1.MaintenanceRequest{{Operation: monoclev1alpha1.SetCrawlerCommitDate, Workspace: "demo", Crawler: "gl", CommitDate: "2023-01-01"}},
		},
		"the config of the ConfigMap when spec.config is unset": {
			objects: []runtime.Object{userConfig, configMap}, args: []string{"demo", "other"},
			want: []monoclev1alpha1.MaintenanceRequest{{Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "other", Crawler: "gr"}},
		},
		"an unknown workspace":         {objects: []runtime.Object{monocle(nil)}, args: []string{"demo", "nope"}, refused: "config.yaml has no workspace nope (it has: [demo])"},
		"an unknown crawler":           {objects: []runtime.Object{monocle(nil)}, args: []string{"demo", "demo", "--crawler", "x"}, refused: "workspace demo has no crawler x (it has: [gh gl])"},
		"a date Monocle does not read": {objects: []runtime.Object{monocle(nil)}, args: []string{"demo", "demo", "--since", "yesterday"}, refused: `commitDate "yesterday": `},
		"no valid config":              {objects: []runtime.Object{userConfig}, args: []string{"demo", "demo"}, refused: "it has no valid config.yaml yet"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f, err := run(t, tc.objects, append([]string{"recrawl"}, tc.args...)...)
			if tc.refused != "" {
				expectRefused(t, f, err, tc.refused)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			before := len(tc.objects[0].(*monoclev1alpha1.Monocle).Spec.Maintenance)
			got := f.monocle(t, "demo").Spec.Maintenance
			if len(got) != before+len(tc.want) {
				t.Fatalf("spec.maintenance = %+v, want %d requests added", got, len(tc.want))
			}
			if before > 0 && got[0] != earlier {
				t.Errorf("the earlier request became %+v", got[0])
			}
			lines := strings.Split(strings.TrimSpace(f.out.String()), "\n")
			for i, w := range tc.want {
				g := got[before+i]
				if !strings.HasPrefix(g.Name, "recrawl-") || len(g.Name) != len("recrawl-")+8 {
					t.Errorf("request name %q, want recrawl-<8 hex>", g.Name)
				}
				w.Name = g.Name
				if g != w {
					t.Errorf("request %d = %+v, want %+v", i, g, w)
				}
				if i >= len(lines) || !strings.HasPrefix(lines[i], "monocle.monocle.monocle.change-metrics.io/demo patched spec.maintenance += {name: "+g.Name+", operation: "+string(g.Operation)) {
					t.Errorf("printed %q", f.out.String())
				}
			}
			// The whole list is written with the resourceVersion read, so a concurrent write
			// is a conflict rather than lost.
			if w := f.writes(); len(w) != 1 || !strings.Contains(w[0], `"resourceVersion":"7"`) {
				t.Errorf("writes %v, want one patch with the resourceVersion read", w)
			}
		})
	}
}

func TestRecrawlRetriesOnConflict(t *testing.T) {
	conflicts := 1
	f, err := runWithReactor(t, []runtime.Object{monocle(nil)}, func(a k8stesting.Action) (bool, runtime.Object, error) {
		if conflicts > 0 {
			conflicts--
			return true, nil, conflictError()
		}
		return false, nil, nil
	}, "recrawl", "demo", "demo", "--crawler", "gh")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.monocle(t, "demo").Spec.Maintenance); n != 1 {
		t.Errorf("%d requests after a conflict and a retry, want 1", n)
	}
}

func TestDeleteIndex(t *testing.T) {
	unused := monocle(func(m *monoclev1alpha1.Monocle) {
		m.Status.UnusedIndices = []monoclev1alpha1.UnusedIndex{{Workspace: "old", Index: "monocle.changes.1.old"}}
	})
	for _, target := range []string{"old", "monocle.changes.1.old"} {
		f, err := run(t, []runtime.Object{unused}, "delete-index", "demo", target)
		if err != nil {
			t.Fatal(err)
		}
		if got := f.monocle(t, "demo").Annotations[monoclev1alpha1.DeleteIndexAnnotation]; got != "old" {
			t.Errorf("delete-index %s: annotation = %q, want the workspace old", target, got)
		}
		if f.out.String() != "monocle.monocle.monocle.change-metrics.io/demo annotated monocle.change-metrics.io/delete-index=old\n" {
			t.Errorf("printed %q", f.out.String())
		}
	}
	f, err := run(t, []runtime.Object{unused}, "delete-index", "demo", "demo")
	expectRefused(t, f, err, "workspace demo is in config.yaml: only the index of a removed workspace is deleted")
	f, err = run(t, []runtime.Object{unused}, "delete-index", "demo", "Bad Name")
	expectRefused(t, f, err, `"Bad Name" is not a workspace name`)
	f, err = run(t, []runtime.Object{unused}, "delete-index", "demo", "gone")
	expectRefused(t, f, err, "status.unusedIndices does not list the index of workspace gone (it lists: [monocle.changes.1.old])")
}

func TestRestore(t *testing.T) {
	source := monocle(func(m *monoclev1alpha1.Monocle) {
		m.Spec.Backup = &monoclev1alpha1.BackupSpec{Schedule: "@daily"}
		m.Spec.SecretRef = &monoclev1alpha1.SecretReference{Name: "tokens"}
		m.Spec.Ingress = &monoclev1alpha1.IngressSpec{Host: "monocle.example.com"}
		m.Spec.Hibernate = true
		m.Spec.Maintenance = []monoclev1alpha1.MaintenanceRequest{{Name: "x", Operation: monoclev1alpha1.WipeCrawlerData, Workspace: "demo", Crawler: "gh"}}
	})
	f, err := run(t, []runtime.Object{source}, "restore", "scheduled-20261125-0000", "--from", "demo", "--into", "copy")
	if err != nil {
		t.Fatal(err)
	}
	got := f.monocle(t, "copy")
	wantRestore := monoclev1alpha1.RestoreSpec{Snapshot: "scheduled-20261125-0000",
		Repository: &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "demo-backup"}}}
	if got.Spec.Restore == nil || got.Spec.Restore.Snapshot != wantRestore.Snapshot || *got.Spec.Restore.Repository.Volume != *wantRestore.Repository.Volume {
		t.Errorf("spec.restore = %+v", got.Spec.Restore)
	}
	if got.Spec.Config != testConfig || got.Spec.SecretRef.Name != "tokens" || got.Spec.Backup.Schedule != "@daily" {
		t.Errorf("the spec was not copied: %+v", got.Spec)
	}
	if got.Spec.Ingress != nil || got.Spec.Hibernate || got.Spec.Maintenance != nil {
		t.Errorf("copied what belongs to the source alone: %+v", got.Spec)
	}
	out := f.out.String()
	for _, want := range []string{
		"monocle.monocle.monocle.change-metrics.io/copy created with spec.restore {snapshot: scheduled-20261125-0000, repository: volume claimName demo-backup} and the spec of monocle.monocle.monocle.change-metrics.io/demo\n",
		"copy backs up into volume claimName copy-backup, a repository of its own: demo's is only read (one cluster writes a repository)\n",
		"not copied from demo: spec.maintenance, spec.hibernate, spec.ingress\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printed %q, want %q", out, want)
		}
	}

	// An S3 repository of an explicit basePath: read there, the copy writes under its own.
	source.Spec.Backup.Repository = monoclev1alpha1.BackupRepository{S3: &monoclev1alpha1.S3Repository{Bucket: "backups",
		BasePath: "team-a/monocle", SecretRef: monoclev1alpha1.SecretReference{Name: "s3-keys"}}}
	f, err = run(t, []runtime.Object{source}, "restore", "scheduled-20261125-0000", "--from", "demo", "--into", "copy")
	if err != nil {
		t.Fatal(err)
	}
	got = f.monocle(t, "copy")
	if r := got.Spec.Restore.Repository; r == nil || r.S3 == nil || r.S3.Bucket != "backups" || r.S3.BasePath != "team-a/monocle" || r.S3.SecretRef.Name != "s3-keys" {
		t.Errorf("spec.restore.repository = %s, want the source's bucket and basePath", toJSON(t, r))
	}
	if b := got.Spec.Backup.Repository.S3; b == nil || b.Bucket != "backups" || b.BasePath != "" || resources.S3BasePath(got, b) != "ns/copy" {
		t.Errorf("spec.backup.repository = %s, want the bucket under the default basePath ns/copy", toJSON(t, got.Spec.Backup.Repository))
	}
	out = f.out.String()
	for _, want := range []string{
		"monocle.monocle.monocle.change-metrics.io/copy created with spec.restore {snapshot: scheduled-20261125-0000, repository: s3 bucket backups, basePath team-a/monocle}",
		"copy backs up into s3 bucket backups, basePath ns/copy, a repository of its own: demo's is only read (one cluster writes a repository)\n",
		"not copied from demo: spec.maintenance, spec.hibernate, spec.ingress, spec.backup.repository.s3.basePath\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("printed %q, want %q", out, want)
		}
	}

	// An existing target: the API server's AlreadyExists, as it words it.
	f, err = run(t, []runtime.Object{source, monocle(func(m *monoclev1alpha1.Monocle) { m.Name = "copy" })}, "restore", "s", "--from", "demo", "--into", "copy")
	if err == nil || !strings.Contains(err.Error(), `"copy" already exists`) {
		t.Errorf("restore into an existing Monocle: %v", err)
	}
	f, err = run(t, []runtime.Object{monocle(nil)}, "restore", "s", "--from", "demo", "--into", "copy")
	expectRefused(t, f, err, "spec.backup is unset")
	if _, err := run(t, nil, "restore", "s", "--into", "copy"); err == nil || !strings.Contains(err.Error(), `"from" not set`) {
		t.Errorf("restore without --from: %v", err)
	}
}

// TestRestoreSpecRepositories: the new Monocle restores from the source's repository, read
// where the source writes it, and backs up into one of its own: its own claim, or its own
// basePath in the same bucket, even when the source's basePath was given explicitly.
func TestRestoreSpecRepositories(t *testing.T) {
	s3 := func(basePath string) *monoclev1alpha1.S3Repository {
		return &monoclev1alpha1.S3Repository{Bucket: "b", BasePath: basePath, Endpoint: "minio.storage.svc:9000", SecretRef: monoclev1alpha1.SecretReference{Name: "k"}}
	}
	tests := map[string]struct {
		repo      monoclev1alpha1.BackupRepository
		want      *monoclev1alpha1.BackupRepository
		described string
		backup    monoclev1alpha1.BackupRepository // the new Monocle's own spec.backup.repository
		own       string
		dropped   []string
	}{
		"an S3 bucket by its default basePath": {
			repo:      monoclev1alpha1.BackupRepository{S3: s3("")},
			want:      &monoclev1alpha1.BackupRepository{S3: s3("ns/demo")},
			described: "s3 bucket b, basePath ns/demo",
			backup:    monoclev1alpha1.BackupRepository{S3: s3("")},
			own:       "s3 bucket b, basePath ns/copy",
		},
		"an S3 bucket by an explicit basePath: the new Monocle gets its own": {
			repo:      monoclev1alpha1.BackupRepository{S3: s3("backups/team-a")},
			want:      &monoclev1alpha1.BackupRepository{S3: s3("backups/team-a")},
			described: "s3 bucket b, basePath backups/team-a",
			backup:    monoclev1alpha1.BackupRepository{S3: s3("")},
			own:       "s3 bucket b, basePath ns/copy",
			dropped:   []string{"spec.backup.repository.s3.basePath"},
		},
		"an S3 basePath that only starts like the new one's": {
			repo:      monoclev1alpha1.BackupRepository{S3: s3("ns/copy-old")},
			want:      &monoclev1alpha1.BackupRepository{S3: s3("ns/copy-old")},
			described: "s3 bucket b, basePath ns/copy-old",
			backup:    monoclev1alpha1.BackupRepository{S3: s3("")},
			own:       "s3 bucket b, basePath ns/copy",
			dropped:   []string{"spec.backup.repository.s3.basePath"},
		},
		"the default claim": {
			repo:      monoclev1alpha1.BackupRepository{},
			want:      &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "demo-backup"}},
			described: "volume claimName demo-backup",
			backup:    monoclev1alpha1.BackupRepository{},
			own:       "volume claimName copy-backup",
		},
		"a claim of the user's": {
			repo:      monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "mine"}},
			want:      &monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "mine"}},
			described: "volume claimName mine",
			backup:    monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{}},
			own:       "volume claimName copy-backup",
			dropped:   []string{"spec.backup.repository.volume.claimName"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := monocle(func(m *monoclev1alpha1.Monocle) { m.Spec.Backup = &monoclev1alpha1.BackupSpec{Repository: tc.repo} })
			before := toJSON(t, src)
			plan, err := restoreSpec(src, "s", "copy")
			if err != nil {
				t.Fatal(err)
			}
			if plan.source != tc.described || plan.own != tc.own {
				t.Errorf("restores from %q into %q, want from %q into %q", plan.source, plan.own, tc.described, tc.own)
			}
			if !equalJSON(t, plan.spec.Restore.Repository, tc.want) || !equalJSON(t, plan.spec.Backup.Repository, tc.backup) {
				t.Errorf("restore.repository %s, backup.repository %s", toJSON(t, plan.spec.Restore.Repository), toJSON(t, plan.spec.Backup.Repository))
			}
			if !slices.Equal(plan.dropped, tc.dropped) {
				t.Errorf("not copied %v, want %v", plan.dropped, tc.dropped)
			}
			if toJSON(t, src) != before {
				t.Error("the source's spec was changed")
			}
		})
	}
}

// TestRestoreRefusals: a copy that would share the source's cluster or write into its
// repository is refused, saying why and what to do instead.
func TestRestoreRefusals(t *testing.T) {
	s3 := func(basePath string) monoclev1alpha1.BackupRepository {
		return monoclev1alpha1.BackupRepository{S3: &monoclev1alpha1.S3Repository{Bucket: "b", BasePath: basePath, SecretRef: monoclev1alpha1.SecretReference{Name: "k"}}}
	}
	tests := map[string]struct {
		edit func(*monoclev1alpha1.Monocle)
		want string
	}{
		"an ECK Elasticsearch": {
			edit: func(m *monoclev1alpha1.Monocle) {
				m.Spec.Elasticsearch.ElasticsearchRef = &monoclev1alpha1.ElasticsearchReference{Name: "es", Namespace: "search"}
				m.Spec.Backup.Repository = monoclev1alpha1.BackupRepository{Existing: "cluster-backups"}
			},
			want: "it uses the ECK Elasticsearch search/es (spec.elasticsearch.elasticsearchRef), and one cluster serves one Monocle: " +
				"a copy on that cluster would be held (ElasticsearchInUse) while demo exists. Write the new Monocle yourself with a cluster of its own",
		},
		"an ECK Elasticsearch of the Monocle's namespace": {
			edit: func(m *monoclev1alpha1.Monocle) {
				m.Spec.Elasticsearch.ElasticsearchRef = &monoclev1alpha1.ElasticsearchReference{Name: "es"}
			},
			want: "it uses the ECK Elasticsearch ns/es (spec.elasticsearch.elasticsearchRef)",
		},
		"an external Elasticsearch": {
			edit: func(m *monoclev1alpha1.Monocle) {
				m.Spec.Elasticsearch.External = &monoclev1alpha1.ExternalElasticsearch{URL: "https://es.example.com:9243"}
				m.Spec.Backup.Repository = s3("")
			},
			want: "it uses the Elasticsearch https://es.example.com:9243 (spec.elasticsearch.external), and one cluster serves one Monocle",
		},
		"an existing repository": {
			edit: func(m *monoclev1alpha1.Monocle) {
				m.Spec.Backup.Repository = monoclev1alpha1.BackupRepository{Existing: "shared"}
			},
			want: "its backup repository is existing shared, registered in its own Elasticsearch only",
		},
		"the source's basePath is the new Monocle's": {
			edit: func(m *monoclev1alpha1.Monocle) { m.Spec.Backup.Repository = s3("ns/copy/") },
			want: `the new Monocle would back up into basePath ns/copy ("<namespace>/<name>") of bucket b, which is its repository's basePath ns/copy/: a repository has one writer. Choose another name than copy`,
		},
		"the source's basePath holds the new Monocle's": {
			edit: func(m *monoclev1alpha1.Monocle) { m.Spec.Backup.Repository = s3("ns") },
			want: `the new Monocle would back up into basePath ns/copy ("<namespace>/<name>") of bucket b, which lies within its repository's basePath ns`,
		},
		"the new Monocle's basePath would hold the source's": {
			edit: func(m *monoclev1alpha1.Monocle) { m.Spec.Backup.Repository = s3("ns/copy/old") },
			want: `the new Monocle would back up into basePath ns/copy ("<namespace>/<name>") of bucket b, which holds its repository's basePath ns/copy/old`,
		},
		"the source's claim is the new Monocle's": {
			edit: func(m *monoclev1alpha1.Monocle) {
				m.Spec.Backup.Repository = monoclev1alpha1.BackupRepository{Volume: &monoclev1alpha1.BackupVolume{ClaimName: "copy-backup"}}
			},
			want: `the new Monocle would back up into claim copy-backup ("<name>-backup"), which is its backup repository: a repository has one writer. Choose another name than copy`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			src := monocle(func(m *monoclev1alpha1.Monocle) {
				m.Spec.Backup = &monoclev1alpha1.BackupSpec{}
				tc.edit(m)
			})
			f, err := run(t, []runtime.Object{src}, "restore", "s", "--from", "demo", "--into", "copy")
			expectRefused(t, f, err, tc.want)
		})
	}
}

func TestLogs(t *testing.T) {
	pod := func(name, component string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns",
			Labels: resources.SelectorLabels(monocle(nil), component)}}
	}
	other := pod("other-api-1", resources.ComponentAPI)
	other.Labels[resources.InstanceLabel] = "other"
	objects := []runtime.Object{monocle(nil), pod("demo-api-1", "api"), pod("demo-api-2", "api"), pod("demo-elastic-0", "elastic"), other}

	f, err := run(t, objects, "logs", "demo", "elasticsearch")
	if err != nil {
		t.Fatal(err)
	}
	// The fake clientset answers every log request with "fake logs".
	if f.out.String() != "fake logs\n" {
		t.Errorf("printed %q", f.out.String())
	}
	expectLogRequests(t, f, "elastic")

	f, err = run(t, objects, "logs", "demo", "api", "-f")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[pod/demo-api-1] fake logs\n", "[pod/demo-api-2] fake logs\n"} {
		if !strings.Contains(f.out.String(), want) {
			t.Errorf("printed %q, want %q", f.out.String(), want)
		}
	}
	expectLogRequests(t, f, "api", "api")

	if _, err := run(t, objects, "logs", "demo", "crawler"); err == nil || !strings.Contains(err.Error(), "Monocle demo has no crawler pod") {
		t.Errorf("logs of a component without pods: %v", err)
	}
	if _, err := run(t, objects, "logs", "demo", "web"); err == nil || !strings.Contains(err.Error(), `unknown component "web"`) {
		t.Errorf("logs of an unknown component: %v", err)
	}
}

// expectLogRequests checks the log requests asked for the containers want, one per pod
// (the fake clientset does not record the pod's name; the lines printed carry it).
func expectLogRequests(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	var got []string
	for _, a := range f.kube.Actions() {
		if g, ok := a.(k8stesting.GenericAction); ok && a.GetSubresource() == "log" {
			got = append(got, g.GetValue().(*corev1.PodLogOptions).Container)
		}
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("log requests for containers %v, want %v", got, want)
	}
}

// runWithReactor is run with reactor first in line for the Monocle clientset's patches.
func runWithReactor(t *testing.T, objects []runtime.Object, reactor k8stesting.ReactionFunc, args ...string) (*fixture, error) {
	t.Helper()
	return runWith(t, objects, func(f *fixture) { f.monocles.PrependReactor("patch", "monocles", reactor) }, args...)
}

func conflictError() error {
	return apierrors.NewConflict(monoclev1alpha1.SchemeGroupVersion.WithResource("monocles").GroupResource(), "demo", errors.New("the object has been modified"))
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equalJSON(t *testing.T, a, b any) bool { return toJSON(t, a) == toJSON(t, b) }

func TestNamespaceFlag(t *testing.T) {
	m := monocle(func(m *monoclev1alpha1.Monocle) { m.Namespace = "elsewhere" })
	f, err := run(t, []runtime.Object{m}, "-n", "elsewhere", "hibernate", "demo")
	if err != nil || f.namespace != "elsewhere" || !f.monocle(t, "demo").Spec.Hibernate {
		t.Errorf("-n elsewhere: %v, namespace %q", err, f.namespace)
	}
	if _, err := run(t, []runtime.Object{m}, "hibernate", "demo"); err == nil || !strings.Contains(err.Error(), `"demo" not found`) {
		t.Errorf("a Monocle of another namespace: %v", err)
	}
}
