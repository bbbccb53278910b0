package operand

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"

	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand/contract"
	"github.com/change-metrics/monocle-operator/pkg/elastic"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// The reads of a Monocle's operands. None of them writes: what the worker changes in
// Elasticsearch is in blocks.go, deletion.go, snapshots.go and restores.go.

// apiHealthURL is the URL of the health endpoint of Monocle m's API, through its Service.
func apiHealthURL(m *monoclev1alpha1.Monocle) string {
	return fmt.Sprintf("http://%s.%s.svc:%d/health", resources.APIName(m), m.Namespace, resources.APIPort)
}

// readHealth reads the cluster health, the disk use and the disk watermarks of the
// Elasticsearch client talks to.
//
// When the disk is past any watermark in force (elastic.Watermarks.AnyExceeded: a byte
// flood stage blocks indices well under 85% used), or blocks says the last read found some,
// it also reads the indices Elasticsearch made read-only at its flood-stage watermark:
// Monocle ignores the failed writes and drops what it crawls. When the watermarks cannot be
// read, more than DiskPressurePercent used stands for them. A failure of these requests is
// logged, never a failed read. disk is what the health's disk use was read from; wm the
// watermarks, nil when they could not be read; dataNodes the health's number_of_data_nodes.
func readHealth(ctx context.Context, logger klog.Logger, client elastic.Client, blocks bool) (_ *monoclev1alpha1.ElasticsearchHealth, disk elastic.Disk, wm *elastic.Watermarks, dataNodes int, _ error) {
	health, err := client.Health(ctx)
	if err != nil {
		return nil, disk, nil, 0, err
	}
	disk, err = client.DiskUsage(ctx)
	if err != nil {
		return nil, disk, nil, 0, err
	}
	out := &monoclev1alpha1.ElasticsearchHealth{
		Status:          string(health.Status),
		DiskUsedPercent: ptr.To(int32(disk.PercentUsed())),
		DiskSize:        contract.Mebibytes(disk.TotalBytes),
		IndicesSize:     contract.Mebibytes(disk.IndicesBytes),
	}
	pressed := disk.PercentUsed() > monoclev1alpha1.DiskPressurePercent
	if w, err := client.Watermarks(ctx); err != nil {
		logger.V(2).Info("Reading the disk watermarks failed", "err", err)
	} else {
		wm, pressed = &w, w.AnyExceeded(disk)
	}
	if blocks || pressed {
		blocked, err := client.ReadOnlyIndices(ctx)
		if err != nil {
			logger.V(2).Info("Reading the read-only indices failed", "err", err)
		} else if len(blocked) > 0 {
			out.ReadOnlyIndices = blocked
		}
	}
	return out, disk, wm, health.NumberOfDataNodes, nil
}

// readCrawlers reads the crawler progress and errors Monocle keeps in the indices of
// workspaces (elastic.CrawlersProgress, elastic.CrawlersErrors) with client, by
// contract.CrawlerKey. A workspace whose index does not exist yet (the API creates it when it
// starts) has neither; a read that fails otherwise gives nil, and the status keeps what an
// earlier read found.
func readCrawlers(ctx context.Context, logger klog.Logger, client elastic.Client, workspaces []string) (map[string]elastic.CrawlerProgress, map[string]elastic.CrawlerErrors) {
	progress, errs := map[string]elastic.CrawlerProgress{}, map[string]elastic.CrawlerErrors{}
	for _, ws := range workspaces {
		index := elastic.WorkspaceIndexPrefix + ws
		ps, err := client.CrawlersProgress(ctx, index)
		if elastic.IsNotFound(err) {
			continue
		}
		var es []elastic.CrawlerErrors
		if err == nil {
			es, err = client.CrawlersErrors(ctx, index)
		}
		if err != nil {
			logger.V(4).Info("Reading crawler progress failed", "workspace", ws, "err", err)
			return nil, nil
		}
		for _, p := range ps {
			progress[contract.CrawlerKey(ws, p.Crawler)] = p
		}
		for _, e := range es {
			errs[contract.CrawlerKey(ws, e.Crawler)] = e
		}
	}
	return progress, errs
}

// sameProgress reports whether a and b are the same progress (equality.Semantic cannot
// compare time.Time, whose fields are unexported, and panics).
func sameProgress(a, b elastic.CrawlerProgress) bool {
	return a.Crawler == b.Crawler && slices.EqualFunc(a.Entities, b.Entities, func(x, y elastic.CrawlerEntity) bool {
		return x.Type == y.Type && x.Value == y.Value && x.LastCommitAt.Equal(y.LastCommitAt)
	})
}

// sameErrors reports whether a and b sum up the same errors.
func sameErrors(a, b elastic.CrawlerErrors) bool {
	return a.Crawler == b.Crawler && a.Total == b.Total && a.LastDay == b.LastDay && a.LastTime.Equal(b.LastTime) &&
		a.LastMessage == b.LastMessage && a.LastEntity == b.LastEntity
}

// listIndices lists the workspace indices (elastic.WorkspaceIndexPrefix) of the
// Elasticsearch client talks to; a failed listing is logged and gives nil.
func listIndices(ctx context.Context, logger klog.Logger, client elastic.Client) []elastic.Index {
	indices, err := client.Indices(ctx, elastic.WorkspaceIndexPrefix+"*")
	if err != nil {
		logger.V(2).Info("Listing the workspace indices failed", "err", err)
		return nil
	}
	return indices
}

// readAPI asks the Monocle API at url for its health with client (GET /health, which
// Monocle 1.11.2 answers 200 once it serves) and returns why it failed, or "".
func readAPI(ctx context.Context, client *http.Client, url string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err.Error()
	}
	resp, err := client.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("GET %s: %s", url, resp.Status)
	}
	return ""
}
