package resources

import (
	batchv1 "k8s.io/api/batch/v1"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
)

// ComponentMaintenance labels the Jobs of spec.maintenance requests and their pods.
const ComponentMaintenance = "maintenance"

// MaintenanceJobName is the Job of maintenance request name: "<name>-maintenance-<request>".
// A Job name must fit the 63 characters of its pods' job-name label: for Monocle names above
// 30 characters with long request names, the Monocle name is cut (the request name stays
// whole, and is unique within the Monocle).
func MaintenanceJobName(m *monoclev1alpha1.Monocle, request string) string {
	prefix := m.Name + "-" + ComponentMaintenance + "-"
	if over := len(prefix) + len(request) - 63; over > 0 {
		prefix = m.Name[:len(m.Name)-over] + "-" + ComponentMaintenance + "-"
	}
	return prefix + request
}

// JanitorCommand is the `monocle janitor` command line of request r against the
// Elasticsearch at elasticURL (src/CLI.hs at 1.11.2: wipe-crawler-data and
// set-crawler-commit-date take --config, --elastic, --workspace and --crawler-name; the
// latter also --commit-date).
func JanitorCommand(r monoclev1alpha1.MaintenanceRequest, elasticURL string) []string {
	cmd := []string{"monocle", "janitor"}
	switch r.Operation {
	case monoclev1alpha1.WipeCrawlerData:
		cmd = append(cmd, "wipe-crawler-data")
	case monoclev1alpha1.SetCrawlerCommitDate:
		cmd = append(cmd, "set-crawler-commit-date")
	}
	cmd = append(cmd, "--elastic", elasticURL, "--config", ConfigPath, "--workspace", r.Workspace, "--crawler-name", r.Crawler)
	if r.Operation == monoclev1alpha1.SetCrawlerCommitDate {
		cmd = append(cmd, "--commit-date", r.CommitDate)
	}
	return cmd
}

// NewMaintenanceJob builds the Job of maintenance request r: the pod of the update-idents Job
// (NewUpdateIdentsJob: the Monocle's image and config, no secret, the same limits, the proxy
// sidecar when e needs it, spec.jobs's placement) running JanitorCommand instead, named by MaintenanceJobName and
// labelled ComponentMaintenance.
func NewMaintenanceJob(m *monoclev1alpha1.Monocle, r monoclev1alpha1.MaintenanceRequest, configHash string, e ElasticAccess) *batchv1.Job {
	job := NewUpdateIdentsJob(m, configHash, e)
	job.ObjectMeta = objectMeta(m, MaintenanceJobName(m, r.Name), ComponentMaintenance)
	// Only the component changes: the template keeps spec.jobs's podLabels.
	job.Spec.Template.Labels[ComponentLabel] = ComponentMaintenance
	c := &job.Spec.Template.Spec.Containers[0]
	c.Name = ComponentMaintenance
	c.Command = JanitorCommand(r, e.Target.PodURL())
	return job
}
