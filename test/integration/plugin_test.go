package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/test/testkit"
)

// kubectlMonocle runs `kubectl monocle args... -n ns` as a user would, kubectl finding the
// plugin on $PATH, and returns what it printed.
func kubectlMonocle(t *testing.T, ns string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := env.Kubectl.Run(ctx, append(append([]string{"monocle"}, args...), "-n", ns)...)
	t.Logf("kubectl monocle %s\n%s", strings.Join(args, " "), out)
	return out, err
}

// mustPlugin runs kubectlMonocle and fails the test unless it succeeds and prints want.
func mustPlugin(t *testing.T, ns string, want *regexp.Regexp, args ...string) []string {
	t.Helper()
	out, err := kubectlMonocle(t, ns, args...)
	if err != nil {
		t.Fatalf("kubectl monocle %s: %v", strings.Join(args, " "), err)
	}
	got := want.FindStringSubmatch(out)
	if got == nil {
		t.Fatalf("kubectl monocle %s printed %q, want %s", strings.Join(args, " "), out, want)
	}
	return got
}

// refusedPlugin runs kubectlMonocle and fails the test unless it fails printing message.
func refusedPlugin(t *testing.T, ns, message string, args ...string) {
	t.Helper()
	out, err := kubectlMonocle(t, ns, args...)
	if err == nil || !strings.Contains(out, message) {
		t.Errorf("kubectl monocle %s: %v, printed %q, want a refusal with %q", strings.Join(args, " "), err, out, message)
	}
}

// TestKubectlPlugin: the plugin, built from the working tree and run as `kubectl monocle` with
// the admin's kubeconfig, makes each change it prints on a real Monocle (annotations and
// spec fields the operator then acts on), and refuses with the operator's messages, or the
// API server's, writing nothing.
func TestKubectlPlugin(t *testing.T) {
	testkit.NeedCluster(t, env.Env != nil)
	dir := filepath.Join(env.WorkDir, "plugin-bin")
	if err := testkit.BuildCommand(context.Background(), env.Root, "./cmd/kubectl-monocle", filepath.Join(dir, "kubectl-monocle")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	ns := "kubectl-plugin"
	startDay2(t, ns)
	env.Elastic.SetIndices(ns, "m", "monocle.config", "monocle.changes.1.demo", "monocle.changes.1.old")

	t.Run("status", func(t *testing.T) {
		mustPlugin(t, ns, regexp.MustCompile(`(?s)Monocle `+ns+`/m, version .*CONDITIONS.*Ready\s+True\s+AllComponentsReady.*CRAWLERS.*demo\s+gh`), "status", "m")
	})

	t.Run("backup", func(t *testing.T) {
		refusedPlugin(t, ns, "refused for Monocle m: spec.backup is unset: the Elasticsearch index is not backed up", "backup", "m")
		if _, ok := getMonocle(t, ns, "m").Annotations[monoclev1alpha1.BackupAnnotation]; ok {
			t.Fatal("a refused backup wrote the annotation")
		}
		patchMonocle(t, ns, `{"spec":{"backup":{}}}`)
		waitCondition(t, ns, "m", "BackupReady", metav1.ConditionTrue, "NoBackupYet")
		got := mustPlugin(t, ns, regexp.MustCompile(`monocle\.monocle\.monocle\.change-metrics\.io/m annotated monocle\.change-metrics\.io/backup=(\S+)\nthe snapshot will be (manual-[0-9a-f]{8})`), "backup", "m")
		value, snapshot := got[1], got[2]
		waitBackup(t, ns, "the snapshot the plugin asked for", 60*time.Second, func(st *monoclev1alpha1.BackupStatus) error {
			if st.LastRequest != value || st.LastSuccessful == nil || st.LastSuccessful.Name != snapshot {
				return fmt.Errorf("status.backup = %+v", st)
			}
			return nil
		})
		mustPlugin(t, ns, regexp.MustCompile(`last successful\s+`+snapshot), "status", "m")

		t.Run("restore", func(t *testing.T) {
			mustPlugin(t, ns, regexp.MustCompile(`monocle\.monocle\.monocle\.change-metrics\.io/copy created with spec\.restore \{snapshot: `+snapshot+`, repository: volume claimName m-backup\}.*\n`+
				`copy backs up into volume claimName copy-backup, a repository of its own: m's is only read`),
				"restore", snapshot, "--from", "m", "--into", "copy")
			testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the operator restoring into the new Monocle", func() error {
				c := getMonocle(t, ns, "copy")
				if c.Spec.Config != getMonocle(t, ns, "m").Spec.Config || c.Spec.SecretRef == nil || c.Spec.SecretRef.Name != "tokens" {
					return fmt.Errorf("the spec of m was not copied: %+v", c.Spec)
				}
				if c.Status.Restore == nil || c.Status.Restore.Snapshot != snapshot {
					return fmt.Errorf("status.restore = %+v", c.Status.Restore)
				}
				return nil
			})
			refusedPlugin(t, ns, `monocles.monocle.monocle.change-metrics.io "copy" already exists`, "restore", snapshot, "--from", "m", "--into", "copy")
			// The CRD's CEL rule on the name, as the API server words it.
			refusedPlugin(t, ns, "metadata.name must be at most 40 characters", "restore", snapshot, "--from", "m", "--into", "a-copy-whose-name-is-longer-than-forty-characters")
			env.Kubectl.Must(t, "delete", "-n", ns, "monocle/copy", "--wait=false")
		})

		t.Run("restore keeps one writer per repository and one Monocle per cluster", func(t *testing.T) {
			restoreRepositories(t, ns)
		})
	})

	t.Run("recrawl", func(t *testing.T) {
		refusedPlugin(t, ns, "refused for Monocle m: config.yaml has no workspace nope (it has: [demo])", "recrawl", "m", "nope")
		refusedPlugin(t, ns, "refused for Monocle m: workspace demo has no crawler gl (it has: [gh])", "recrawl", "m", "demo", "--crawler", "gl")
		if r := getMonocle(t, ns, "m").Spec.Maintenance; len(r) != 0 {
			t.Fatalf("a refused recrawl wrote spec.maintenance %+v", r)
		}
		got := mustPlugin(t, ns, regexp.MustCompile(`monocle\.monocle\.monocle\.change-metrics\.io/m patched spec\.maintenance \+= \{name: (recrawl-[0-9a-f]{8}), operation: SetCrawlerCommitDate, workspace: demo, crawler: gh, commitDate: 2023-01-01\}`),
			"recrawl", "m", "demo", "--since", "2023-01-01")
		testkit.Eventually(t, 250*time.Millisecond, 60*time.Second, "the request run by the operator", func() error {
			for _, s := range getMonocle(t, ns, "m").Status.Maintenance {
				if s.Request == got[1] && s.Phase == monoclev1alpha1.JobSucceeded {
					return nil
				}
			}
			return fmt.Errorf("status.maintenance = %+v", getMonocle(t, ns, "m").Status.Maintenance)
		})
	})

	t.Run("delete-index", func(t *testing.T) {
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "status.unusedIndices", func() error {
			if u := getMonocle(t, ns, "m").Status.UnusedIndices; len(u) != 1 || u[0].Workspace != "old" {
				return fmt.Errorf("status.unusedIndices = %+v", u)
			}
			return nil
		})
		refusedPlugin(t, ns, "refused for Monocle m: workspace demo is in config.yaml: only the index of a removed workspace is deleted", "delete-index", "m", "demo")
		mustPlugin(t, ns, regexp.MustCompile(`monocle\.monocle\.monocle\.change-metrics\.io/m annotated monocle\.change-metrics\.io/delete-index=old\n`), "delete-index", "m", "monocle.changes.1.old")
		testkit.Eventually(t, 200*time.Millisecond, 30*time.Second, "the index deleted", func() error {
			if d := getMonocle(t, ns, "m").Status.IndexDeletion; d == nil || d.Index != "monocle.changes.1.old" {
				return fmt.Errorf("status.indexDeletion = %+v", d)
			}
			return nil
		})
	})

	t.Run("logs", func(t *testing.T) {
		// kwok runs no container, so the API server cannot fetch logs from the node; the
		// error it returns names the pod and container the plugin asked for.
		out, err := kubectlMonocle(t, ns, "logs", "m", "api")
		if err == nil || !regexp.MustCompile(`pod m-api-[a-z0-9]+-[a-z0-9]+`).MatchString(out) {
			t.Errorf("logs of the API: %v, printed %q", err, out)
		}
		refusedPlugin(t, ns, `unknown component "web"`, "logs", "m", "web")
	})

	t.Run("hibernate", func(t *testing.T) {
		mustPlugin(t, ns, regexp.MustCompile(`monocle\.monocle\.monocle\.change-metrics\.io/m patched spec\.hibernate=true\n`), "hibernate", "m")
		if !getMonocle(t, ns, "m").Spec.Hibernate {
			t.Error("spec.hibernate is not true")
		}
		mustPlugin(t, ns, regexp.MustCompile(`HIBERNATION\n`), "status", "m")
		mustPlugin(t, ns, regexp.MustCompile(`monocle\.monocle\.monocle\.change-metrics\.io/m patched spec\.hibernate=false\n`), "wake", "m")
		if getMonocle(t, ns, "m").Spec.Hibernate {
			t.Error("spec.hibernate is still true")
		}

		// A restore under way: a paused Monocle (the operator leaves it alone) whose status
		// says so.
		const restoring = `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: restoring
  annotations:
    monocle.change-metrics.io/paused: "true"
spec:
  backup: {}
  restore: {snapshot: s1}
`
		if out, err := env.Kubectl.RunStdin(context.Background(), restoring, "apply", "-n", ns, "-f", "-"); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		waitCondition(t, ns, "restoring", "Paused", metav1.ConditionTrue, "Paused")
		env.Kubectl.Must(t, "patch", "-n", ns, "monocle/restoring", "--subresource=status", "--type=merge",
			"-p", `{"status":{"restore":{"snapshot":"s1","phase":"Restoring","indices":["monocle.changes.1.demo"]}}}`)
		refusedPlugin(t, ns, "refused for Monocle restoring: spec.hibernate waits for the restore of snapshot s1 (phase Restoring) to end: the Monocle hibernates then",
			"hibernate", "restoring")
		if getMonocle(t, ns, "restoring").Spec.Hibernate {
			t.Error("a refused hibernate wrote spec.hibernate")
		}
	})
}

// restoreRepositories: a Monocle author (a tenant with edit in ns) restores a Monocle whose
// S3 repository has an explicit basePath: the copy reads the snapshot there and backs up
// under a basePath of its own. Restoring a Monocle of an ECK Elasticsearch is refused,
// creating nothing. The sources are paused: the operator leaves them alone.
func restoreRepositories(t *testing.T, ns string) {
	ctx := context.Background()
	tenant, err := testkit.Tenant(ctx, env.Kubectl, ns)
	if err != nil {
		t.Fatal(err)
	}
	// kubectl passes no flag given before a plugin's name: --as goes after the verb.
	asTenant := "--as=" + tenant.As
	const sources = `apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: on-s3
  annotations:
    monocle.change-metrics.io/paused: "true"
spec:
  backup:
    repository:
      s3: {bucket: backups, basePath: team-a/monocle, secretRef: {name: s3-keys}}
---
apiVersion: monocle.monocle.change-metrics.io/v1alpha1
kind: Monocle
metadata:
  name: on-eck
  annotations:
    monocle.change-metrics.io/paused: "true"
spec:
  elasticsearch:
    elasticsearchRef: {name: es}
  backup:
    repository: {existing: cluster-backups}
`
	// kube-controller-manager aggregates the rules into "edit" shortly after they exist.
	testkit.Eventually(t, 250*time.Millisecond, 30*time.Second, "the tenant creating Monocles", func() error {
		if out, err := tenant.RunStdin(ctx, sources, "apply", "-n", ns, "-f", "-"); err != nil {
			return fmt.Errorf("%v: %s", err, out)
		}
		return nil
	})
	defer env.Kubectl.Must(t, "delete", "-n", ns, "monocle/on-s3", "monocle/on-eck", "--wait=false")

	mustPlugin(t, ns, regexp.MustCompile(`copy-s3 backs up into s3 bucket backups, basePath `+ns+`/copy-s3, a repository of its own: on-s3's is only read \(one cluster writes a repository\)\n`+
		`not copied from on-s3: spec\.backup\.repository\.s3\.basePath\n`),
		"restore", "s1", "--from", "on-s3", "--into", "copy-s3", asTenant)
	c := getMonocle(t, ns, "copy-s3")
	if r := c.Spec.Restore; r == nil || r.Repository == nil || r.Repository.S3 == nil || r.Repository.S3.BasePath != "team-a/monocle" {
		t.Errorf("spec.restore = %+v, want on-s3's repository, basePath team-a/monocle", r)
	}
	if b := c.Spec.Backup; b == nil || b.Repository.S3 == nil || b.Repository.S3.Bucket != "backups" || b.Repository.S3.BasePath != "" {
		t.Errorf("spec.backup = %+v, want bucket backups under the default basePath", b)
	}
	env.Kubectl.Must(t, "delete", "-n", ns, "monocle/copy-s3", "--wait=false")

	refusedPlugin(t, ns, "refused for Monocle on-eck: it uses the ECK Elasticsearch "+ns+"/es (spec.elasticsearch.elasticsearchRef), and one cluster serves one Monocle",
		"restore", "s1", "--from", "on-eck", "--into", "copy-eck", asTenant)
	if out, err := env.Kubectl.Run(ctx, "get", "-n", ns, "monocle/copy-eck"); err == nil || !strings.Contains(out, "NotFound") {
		t.Errorf("a refused restore created monocle/copy-eck: %v: %s", err, out)
	}
}
