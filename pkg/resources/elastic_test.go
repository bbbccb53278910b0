package resources

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// TestElasticInitConfigBoundsTheGCLog runs the init-config container's command with sh in a
// directory tree standing for the image's and the volumes' paths: the config directory gets
// the image's files, the realm's, and jvm.options.d/<elasticGCLogFile> holding
// elasticGCLogOptions one per line, as Elasticsearch reads a JVM options file.
func TestElasticInitConfigBoundsTheGCLog(t *testing.T) {
	s := NewElasticStatefulSet(minimalWith(func(*monoclev1alpha1.Monocle) {}), ElasticDataVolume, false, "")
	var init *corev1.Container
	for i, c := range s.Spec.Template.Spec.InitContainers {
		if c.Name == "init-config" {
			init = &s.Spec.Template.Spec.InitContainers[i]
		}
	}
	if init == nil || len(init.Command) != 3 || init.Command[0] != "sh" {
		t.Fatalf("init-config = %+v, want sh -c <script>", init)
	}
	root := t.TempDir()
	for _, dir := range []string{elasticHome + "/config", "/mnt/config", elasticRealmDir} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := append([]string{elasticHome + "/config/jvm.options"}, func() (out []string) {
		for _, f := range ElasticRealmFiles {
			out = append(out, elasticRealmDir+"/"+f)
		}
		return out
	}()...)
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(root, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := init.Command[2]
	script = strings.ReplaceAll(script, "/mnt/", root+"/mnt/")
	script = strings.ReplaceAll(script, elasticHome, root+elasticHome)
	if out, err := exec.Command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, out)
	}
	got, err := os.ReadFile(filepath.Join(root, "/mnt/config/jvm.options.d", elasticGCLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(elasticGCLogOptions, "\n") + "\n"; string(got) != want {
		t.Errorf("%s = %q, want %q", elasticGCLogFile, got, want)
	}
	for _, f := range append([]string{"jvm.options"}, ElasticRealmFiles...) {
		if _, err := os.Stat(filepath.Join(root, "/mnt/config", f)); err != nil {
			t.Errorf("the config directory lacks %s: %v", f, err)
		}
	}
}
