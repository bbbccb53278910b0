package day2

import (
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// Holds is what a sync stops of a Monocle, and why: the components built with zero replicas,
// and each reason that stops some. A sync decides it once (PlanHolds) and the builders and
// the later phases read it. The zero value stops and holds nothing.
type Holds struct {
	// Stopped are the components built with zero replicas: each one a reason below stops.
	Stopped resources.Stopped
	// Restore is set while a restore has not succeeded (RestoreResult.UnderWay): it stops
	// the API and the crawler, and no Job runs.
	Restore bool
	// Hibernation are the components the hibernation step stops (HibernationStep.Stopped),
	// while the Monocle hibernates and, for those not started yet, while it wakes.
	Hibernation resources.Stopped
	// Hibernating is set while the Monocle hibernates or is hibernated, not while it wakes
	// (HibernationStep.Stopping): no Job starts, and nothing is read or done in the operands
	// but the listing of the backup repository that follows HibernationStep.AwaitedSnapshots.
	Hibernating bool
	// Maintenance is set while a maintenance request that runs with the crawler stopped (a
	// WipeCrawlerData request, an automatic SetCrawlerCommitDate one) has not finished: it
	// stops the crawler.
	Maintenance bool
	// Upgrade is set while the upgrade step stops the crawler (UpgradeStep.StopCrawler).
	Upgrade bool
}

// PlanHolds returns the holds of a sync from what it planned before: h, the hibernation step
// (PlanHibernation); restore, the restore result (RestoreStatusAfter, HoldRestore while
// hibernation is active); up, the upgrade step (PlanUpgrade, HoldUpgrade while hibernation is
// active); and maintenance, whether a maintenance request needs the crawler stopped. A
// restore stops the API and the crawler; maintenance and an upgrade stop the crawler;
// hibernation stops the components of h.Stopped, the bundled Elasticsearch among them.
func PlanHolds(h HibernationStep, restore RestoreResult, up UpgradeStep, maintenance bool) Holds {
	hs := Holds{
		Restore:     restore.UnderWay(),
		Hibernation: h.Stopped,
		Hibernating: h.Stopping(),
		Maintenance: maintenance,
		Upgrade:     up.StopCrawler,
	}
	hs.Stopped = resources.Stopped{
		Crawler: hs.Restore || hs.Hibernation.Crawler || hs.Maintenance || hs.Upgrade,
		API:     hs.Restore || hs.Hibernation.API,
		Elastic: hs.Hibernation.Elastic,
	}
	return hs
}
