package day2

import (
	"fmt"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/monocleconfig"
)

// CheckMaintenanceRequest returns why maintenance request r cannot run with the config in
// force cfg, or "" when it can (also when cfg is nil: nothing is known yet). A request names
// a workspace of config.yaml and a crawler of that workspace; a SetCrawlerCommitDate request
// has a date Monocle reads (monocleconfig.ValidateDate). The controller fails a request with
// this message, and the kubectl plugin refuses one with it before writing.
func CheckMaintenanceRequest(r monoclev1alpha1.MaintenanceRequest, cfg *monocleconfig.Config) string {
	if cfg == nil {
		return ""
	}
	var workspaces []string
	for _, w := range cfg.Workspaces {
		workspaces = append(workspaces, w.Name)
		if w.Name != r.Workspace {
			continue
		}
		var crawlers []string
		for _, c := range w.Crawlers {
			if c.Name == r.Crawler {
				if r.Operation == monoclev1alpha1.SetCrawlerCommitDate {
					if err := monocleconfig.ValidateDate(r.CommitDate); err != nil {
						return fmt.Sprintf("commitDate %q: %v", r.CommitDate, err)
					}
				}
				return ""
			}
			crawlers = append(crawlers, c.Name)
		}
		return fmt.Sprintf("workspace %s has no crawler %s (it has: %v)", r.Workspace, r.Crawler, crawlers)
	}
	return fmt.Sprintf("config.yaml has no workspace %s (it has: %v)", r.Workspace, workspaces)
}
