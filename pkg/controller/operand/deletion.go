package operand

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// deleteIndex deletes index, the index of a removed workspace a sync asked to delete, and
// returns it once deleted (or found gone); "" when index is "" or the deletion failed
// (logged).
func deleteIndex(ctx context.Context, logger klog.Logger, client elastic.Client, index string) string {
	if index == "" {
		return ""
	}
	if err := client.DeleteIndex(ctx, index); err != nil {
		logger.Info("Deleting the index of a removed workspace failed", "index", index, "err", err)
		return ""
	}
	logger.Info("Deleted the index of a removed workspace", "index", index)
	return index
}

// deleteThenList deletes index when set (deleteIndex), then lists the workspace indices
// (listIndices), so that the listing reflects the deletion.
func deleteThenList(ctx context.Context, logger klog.Logger, client elastic.Client, index string) (indices []elastic.Index, deleted string) {
	deleted = deleteIndex(ctx, logger, client, index)
	return listIndices(ctx, logger, client), deleted
}
