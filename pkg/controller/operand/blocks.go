package operand

import (
	"context"

	"k8s.io/klog/v2"

	"github.com/change-metrics/monocle-operator/pkg/elastic"
)

// clearBlocks clears Elasticsearch's flood-stage block (index.blocks.read_only_allow_delete)
// from the indices blocked, which a read found, once disk, the disk use that read found, is
// under wm's high watermark: Elasticsearch lifts the block by itself only from 7.4. It
// returns the indices still blocked: all of them when the disk is over the high watermark,
// the watermarks are unknown (wm nil) or the request failed (logged), none once cleared.
func clearBlocks(ctx context.Context, logger klog.Logger, client elastic.Client, disk elastic.Disk, wm *elastic.Watermarks, blocked []string) []string {
	if len(blocked) == 0 || wm == nil || wm.High.Exceeded(disk) {
		return blocked
	}
	if err := client.ClearReadOnly(ctx, blocked...); err != nil {
		logger.V(2).Info("Clearing the read-only block failed", "indices", blocked, "err", err)
		return blocked
	}
	logger.Info("Cleared the flood-stage read-only block: the disk is under the high watermark", "indices", blocked, "high", wm.High.String())
	return nil
}
