package controller

import (
	"context"

	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
)

// ReadOperands turns on the background reads of every Monocle's Elasticsearch and API, and
// the Elasticsearch work syncs plan, with o (see package operand); ctx ends the reads under
// way. Call it before Run; without it, or with o.Interval 0, the status has no
// Elasticsearch health and no ElasticsearchHealthy, DiskPressure or APIHealthy condition.
func (c *Controller) ReadOperands(ctx context.Context, o operand.Options) {
	if o.Interval > 0 {
		c.operand = operand.New(ctx, o, c.queue.AddAfter)
		c.operatorNamespace = o.OperatorNamespace
	}
}
