package controller

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/operand"
	"github.com/change-metrics/monocle-operator/pkg/controller/reasons"
)

// planHibernation is the phase of spec.hibernate (day2.PlanHibernation): from the workloads
// and Jobs as the sync observed them (st.observed), it decides which components hibernation
// stops (Stopped) and whether the operand reads, backups, Jobs and auto-pilot are held
// (Stopping), both of which the workloads phase makes part of what the sync stops
// (workloads.holds), and whether an upgrade or a restore waits (Active). The
// bundled Elasticsearch waits for the Jobs and for the snapshots status.backup.running names,
// these only while the operator reads Elasticsearch (the only way to see them end). It sets
// status.hibernation and the Hibernated condition.
func (c *Controller) planHibernation(st *syncState) day2.HibernationStep {
	m := st.m
	o := day2.HibernationObserved{JobsRunning: st.observed.jobsRunning, API: st.observed.api, Crawler: st.observed.crawler,
		Elastic: st.observed.elastic}
	if b := m.Status.Backup; b != nil && c.readsOperands() {
		o.SnapshotsRunning = b.Running
	}
	step := day2.PlanHibernation(m, o, st.now)
	st.status.Hibernation = step.Status
	cond := step.Condition
	if cond == nil {
		st.removeCondition(monoclev1alpha1.ConditionHibernated)
		return step
	}
	st.setCondition(*cond)
	if was := apimeta.FindStatusCondition(m.Status.Conditions, cond.Type); cond.Reason == reasons.HibernationDeferred && (was == nil || was.Reason != cond.Reason) {
		st.event(corev1.EventTypeNormal, reasons.HibernationDeferred, cond.Message)
	}
	return step
}

// readsOperands reports whether the operator reads the operands (Options.Operands with an
// interval): operand.Off is the worker of one that does not.
func (c *Controller) readsOperands() bool {
	return c.operand != operand.Off()
}

// runningAPI is the API Deployment the Jobs phase decides on whether update-idents may start
// (st.api), or nil while hibernation stops the Monocle (holds.Hibernating): no Job starts
// then, and a config change's update-idents runs once the Monocle wakes and its API runs the
// new config.
func (st *syncState) runningAPI(holds day2.Holds) *appsv1.Deployment {
	if holds.Hibernating {
		return nil
	}
	return st.api
}

// recordHibernationTransition records an event for each hibernation phase a Monocle enters.
// The end of waking is the Ready event.
func (c *Controller) recordHibernationTransition(m *monoclev1alpha1.Monocle, was, is *monoclev1alpha1.HibernationStatus) {
	if is == nil || (was != nil && was.Phase == is.Phase) {
		return
	}
	c.recorder.Event(m, corev1.EventTypeNormal, day2.HibernationReason(is.Phase), is.Message)
}
