package resources

// Stopped names components of a Monocle: the crawler, the API, the bundled Elasticsearch. A
// stopped component's workload is built with zero replicas (Inputs.Stopped), its volumes,
// Secrets and ConfigMap left as they are. The zero value names none.
type Stopped struct {
	// Crawler, API and Elastic stop the crawler Deployment, the API Deployment and the
	// bundled Elasticsearch StatefulSet.
	Crawler, API, Elastic bool
}

// Names returns the components s stops, in the order hibernation stops them: "crawler",
// "api", "elastic" (the component labels).
func (s Stopped) Names() []string {
	var out []string
	for _, c := range []struct {
		stopped bool
		name    string
	}{{s.Crawler, ComponentCrawler}, {s.API, ComponentAPI}, {s.Elastic, ComponentElastic}} {
		if c.stopped {
			out = append(out, c.name)
		}
	}
	return out
}

// elasticReplicas is the bundled Elasticsearch's replicas: one, or zero when stopped. The PVC
// stays: the StatefulSet retains it when scaled down (its persistentVolumeClaimRetentionPolicy).
func elasticReplicas(stopped bool) int32 {
	if stopped {
		return 0
	}
	return 1
}
