package kubectlmonocle

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/tools/cache"
	deploymentutil "k8s.io/kubectl/pkg/util/deployment"

	monoclev1alpha1 "github.com/change-metrics/monocle-operator/pkg/apis/monocle/v1alpha1"
	"github.com/change-metrics/monocle-operator/pkg/controller/day2"
	"github.com/change-metrics/monocle-operator/pkg/controller/rollout"
	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// RolloutStatusOptions are the flags of `kubectl monocle rollout status`.
type RolloutStatusOptions struct {
	// AllNamespaces reads the Monocles of every namespace (-A) instead of Plugin.Namespace.
	AllNamespaces bool
	// Revision is the operator release whose rollout is shown; "" for RolloutRevision's.
	Revision string
	// Policy is the operator's rollout policy (its --rollout-* flags): the deadline tells
	// when a roll is overdue, the soak time and the wave sizes what the next wave waits for.
	Policy rollout.Policy
}

// rolloutCommand is `kubectl monocle rollout` with its verbs status, resume and undo.
func rolloutCommand(run runner) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollout status|resume|undo",
		Short: "Follow, resume or undo the fleet rollout of the operator's own changes (status.rollout)",
	}
	o := RolloutStatusOptions{Policy: rollout.DefaultPolicy}
	status := &cobra.Command{
		Use:   "status [-A] [--revision <release>]",
		Short: "Print the fleet rollout as the operator sees it, from the Monocles' status.rollout, conditions and annotations",
		Args:  cobra.NoArgs,
		RunE:  run(func(ctx context.Context, p *Plugin, _ []string) error { return p.RolloutStatus(ctx, o) }),
	}
	status.Flags().BoolVarP(&o.AllNamespaces, "all-namespaces", "A", false, "the Monocles of every namespace")
	status.Flags().StringVar(&o.Revision, "revision", "", "the operator release whose rollout to show (default: the revision of the roll started last)")
	status.Flags().StringVar(&o.Policy.Strategy, "rollout-strategy", o.Policy.Strategy, "the operator's --rollout-strategy")
	status.Flags().IntVar(&o.Policy.MaxWave, "rollout-max-wave", o.Policy.MaxWave, "the operator's --rollout-max-wave")
	status.Flags().DurationVar(&o.Policy.Soak, "rollout-soak", o.Policy.Soak, "the operator's --rollout-soak")
	status.Flags().DurationVar(&o.Policy.Deadline, "rollout-deadline", o.Policy.Deadline, "the operator's --rollout-deadline")

	var all, allNamespaces bool
	resume := &cobra.Command{
		Use:   "resume <name> | --all [-A]",
		Short: "Resume the fleet rollout after a failed roll (annotation " + monoclev1alpha1.RolloutResumeAnnotation + ")",
		Args: func(_ *cobra.Command, args []string) error {
			switch {
			case all == (len(args) == 1) || len(args) > 1:
				return errors.New("give one Monocle's name or --all")
			case allNamespaces && !all:
				return errors.New("-A goes with --all")
			}
			return nil
		},
		RunE: run(func(ctx context.Context, p *Plugin, a []string) error {
			if all {
				return p.RolloutResumeAll(ctx, allNamespaces)
			}
			return p.RolloutResume(ctx, a[0])
		}),
	}
	resume.Flags().BoolVar(&all, "all", false, "every Monocle whose roll is Failed")
	resume.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", false, "with --all, the Monocles of every namespace")

	var force bool
	undo := &cobra.Command{
		Use:   "undo <name> [--force]",
		Short: "Roll a failed Monocle's Deployments and StatefulSet back to their previous templates, as kubectl rollout undo does",
		Args:  cobra.ExactArgs(1),
		RunE:  run(func(ctx context.Context, p *Plugin, a []string) error { return p.RolloutUndo(ctx, a[0], force) }),
	}
	undo.Flags().BoolVar(&force, "force", false, "roll back even when the Monocle's roll is not Failed (the operator then writes its templates again)")
	cmd.AddCommand(status, resume, undo)
	return cmd
}

// namespaceOf is the namespace a verb lists: every one with all, else p.Namespace.
func (p *Plugin) namespaceOf(all bool) string {
	if all {
		return metav1.NamespaceAll
	}
	return p.Namespace
}

// RolloutStatus prints the fleet rollout over the Monocles of the namespace, or of every
// namespace with o.AllNamespaces (FormatRollout), with the revisions of their workloads'
// templates. Without the right to list Deployments and StatefulSets, it says so in place of
// those revisions.
func (p *Plugin) RolloutStatus(ctx context.Context, o RolloutStatusOptions) error {
	if err := o.Policy.Validate(); err != nil {
		return err
	}
	ns := p.namespaceOf(o.AllNamespaces)
	list, err := p.Monocles.MonocleV1alpha1().Monocles(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	v := RolloutView{Namespace: ns, Monocles: list.Items}
	v.Deployments, v.StatefulSets, err = p.workloads(ctx, ns)
	if apierrors.IsForbidden(err) {
		v.WorkloadsErr = err
	} else if err != nil {
		return err
	}
	return FormatRollout(p.Out, v, o, p.now())
}

// workloads lists the Deployments and StatefulSets the operator created in namespace ns
// (every namespace when "").
func (p *Plugin) workloads(ctx context.Context, ns string) ([]appsv1.Deployment, []appsv1.StatefulSet, error) {
	opts := metav1.ListOptions{LabelSelector: resources.ManagedByLabel + "=" + resources.ManagedByValue}
	deployments, err := p.Kube.AppsV1().Deployments(ns).List(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	sets, err := p.Kube.AppsV1().StatefulSets(ns).List(ctx, opts)
	if err != nil {
		return nil, nil, err
	}
	return deployments.Items, sets.Items, nil
}

// RolloutView is what `kubectl monocle rollout status` reads.
type RolloutView struct {
	// Namespace is the namespace listed, "" for every one.
	Namespace string
	// Monocles are the Monocles listed.
	Monocles []monoclev1alpha1.Monocle
	// Deployments and StatefulSets are the operator's workloads of the same namespaces;
	// WorkloadsErr is why they could not be listed, if so.
	Deployments  []appsv1.Deployment
	StatefulSets []appsv1.StatefulSet
	WorkloadsErr error
}

// RolloutRevision is the revision whose rollout the Monocles show: the one recorded by the
// roll that started last (status.rollout.startTime; the greater revision on a tie). Every
// roll records the release of the operator that wrote it, so this is the release of the
// operator that wrote workloads last, also after a downgrade. "" when no Monocle records
// one.
func RolloutRevision(monocles []monoclev1alpha1.Monocle) string {
	var last *monoclev1alpha1.RolloutStatus
	for i := range monocles {
		r := monocles[i].Status.Rollout
		if r == nil || r.Revision == "" || r.StartTime == nil {
			continue
		}
		if last == nil || r.StartTime.After(last.StartTime.Time) || (r.StartTime.Equal(last.StartTime) && r.Revision > last.Revision) {
			last = r
		}
	}
	if last == nil {
		return ""
	}
	return last.Revision
}

// FormatRollout writes the fleet rollout of v's Monocles at now, as the operator's planner
// (package rollout) derives it from their status.rollout, conditions and annotations with
// policy o.Policy: the revision (o.Revision, else RolloutRevision), the last wave started,
// whether a failed roll halts it and which, the count of Monocles in each state and what the
// next wave waits for; then a row per Monocle (its status.rollout, its state, its class of
// annotation monocle.change-metrics.io/rollout, the age of its roll, and the message of its
// RolloutHeld condition, else of its roll); then the revisions of its workloads' templates:
// each Deployment's annotation deployment.kubernetes.io/revision, "(rolling out)" while its
// pods do not all run it, and the StatefulSet's ControllerRevision (the hash that ends its
// name), "current→update" while its pods roll.
func FormatRollout(out io.Writer, v RolloutView, o RolloutStatusOptions, now time.Time) error {
	if len(v.Monocles) == 0 {
		if v.Namespace == "" {
			_, err := io.WriteString(out, "No Monocles found.\n")
			return err
		}
		_, err := fmt.Fprintf(out, "No Monocles found in namespace %s.\n", v.Namespace)
		return err
	}
	var buf bytes.Buffer
	w := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	monocles := slices.Clone(v.Monocles)
	slices.SortFunc(monocles, func(a, b monoclev1alpha1.Monocle) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	members := make([]rollout.Member, len(monocles))
	for i := range monocles {
		members[i] = rollout.MemberOf(&monocles[i])
	}
	revision, which := o.Revision, "--revision"
	if revision == "" {
		revision, which = RolloutRevision(monocles), "the revision of the roll started last"
	}
	if revision == "" {
		fmt.Fprintf(w, "No Monocle records a rollout revision (status.rollout): the operator has not synced them since fleet rollouts came\n")
	} else {
		plan := o.Policy.NewPlan(revision, members, now)
		wave, halted := "no wave started yet", "not halted"
		if plan.Wave > 0 {
			wave = fmt.Sprintf("wave %d started last", plan.Wave)
		}
		if plan.Halted {
			halted = "HALTED by " + keyNames(plan.Failed)
		}
		fmt.Fprintf(w, "Rollout of %s (%s): %s, %s\n", revision, which, wave, halted)
		counts := make([]string, len(rollout.States))
		for i, s := range rollout.States {
			counts[i] = fmt.Sprintf("%d %s", plan.Counts[s], s)
		}
		fmt.Fprintf(w, "Monocles: %s\n", strings.Join(counts, ", "))
		next := plan.Waiting
		switch {
		case next != "":
		case len(plan.Next) > 0:
			next = fmt.Sprintf("wave %d of the rollout of %s goes on with %s", plan.NextWave, revision, keyNames(plan.Next))
		default:
			next = fmt.Sprintf("no Monocle waits for a wave of %s", revision)
		}
		fmt.Fprintf(w, "Next: %s\n", next)
	}

	fmt.Fprintf(w, "\nNAMESPACE\tNAME\tREVISION\tSTATE\tPHASE\tWAVE\tCAUSE\tCLASS\tAGE\tMESSAGE\n")
	for i, m := range monocles {
		mem := members[i]
		r := mem.Rollout
		state, wave, age := "-", "-", "-"
		if revision != "" {
			state = string(o.Policy.StateOf(mem, revision, now))
		}
		if r.Wave > 0 {
			wave = strconv.Itoa(int(r.Wave))
		}
		if r.StartTime != nil {
			age = duration.HumanDuration(now.Sub(r.StartTime.Time))
		}
		message := r.Message
		if c := apimeta.FindStatusCondition(m.Status.Conditions, monoclev1alpha1.ConditionRolloutHeld); c != nil && c.Status == metav1.ConditionTrue {
			message = c.Message
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Namespace, m.Name, or(r.Revision, "-"), state,
			or(string(r.Phase), "-"), wave, or(string(r.Cause), "-"), mem.Class, age, oneLine(message))
	}

	fmt.Fprintf(w, "\nWORKLOADS (revisions of the pod templates)\n")
	if v.WorkloadsErr != nil {
		fmt.Fprintf(w, "  not read: %s\n", oneLine(v.WorkloadsErr.Error()))
		return flushTrimmed(out, w, &buf)
	}
	fmt.Fprintf(w, "NAMESPACE\tNAME\tAPI\tCRAWLER\tELASTICSEARCH\n")
	for _, m := range monocles {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", m.Namespace, m.Name, deploymentRevision(&m, v.Deployments, resources.APIName(&m)),
			deploymentRevision(&m, v.Deployments, resources.CrawlerName(&m)), statefulSetRevision(&m, v.StatefulSets))
	}
	return flushTrimmed(out, w, &buf)
}

// deploymentRevision is the template revision of m's Deployment name among deployments: its
// annotation deployment.kubernetes.io/revision, with "(rolling out)" while its pods do not
// all run it; "-" when m controls no such Deployment.
func deploymentRevision(m *monoclev1alpha1.Monocle, deployments []appsv1.Deployment, name string) string {
	i := slices.IndexFunc(deployments, func(d appsv1.Deployment) bool {
		return d.Namespace == m.Namespace && d.Name == name && metav1.IsControlledBy(&d, m)
	})
	if i < 0 {
		return "-"
	}
	d := &deployments[i]
	revision := or(d.Annotations[deploymentutil.RevisionAnnotation], "-")
	if !day2.DeploymentRolledOut(d) {
		revision += " (rolling out)"
	}
	return revision
}

// statefulSetRevision is the template revision of m's Elasticsearch StatefulSet among sets:
// the hash of its current ControllerRevision, "current→update" while its pods roll to
// another; "-" when m controls none (its Elasticsearch is not the bundled one).
func statefulSetRevision(m *monoclev1alpha1.Monocle, sets []appsv1.StatefulSet) string {
	name := resources.ElasticName(m)
	i := slices.IndexFunc(sets, func(s appsv1.StatefulSet) bool {
		return s.Namespace == m.Namespace && s.Name == name && metav1.IsControlledBy(&s, m)
	})
	if i < 0 {
		return "-"
	}
	hash := func(revision string) string { return or(strings.TrimPrefix(revision, name+"-"), "-") }
	st := sets[i].Status
	if st.CurrentRevision == st.UpdateRevision || st.UpdateRevision == "" {
		return hash(st.CurrentRevision)
	}
	return hash(st.CurrentRevision) + "→" + hash(st.UpdateRevision)
}

// keyNames names every key, as namespace/name.
func keyNames(keys []cache.ObjectName) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.String()
	}
	return strings.Join(names, ", ")
}

// notFailed is why m's roll is not Failed, "" when it is: the operator acts on
// RolloutResumeAnnotation, and leaves the workloads alone, only after a failed roll.
func notFailed(m *monoclev1alpha1.Monocle) string {
	r := m.Status.Rollout
	switch {
	case r == nil:
		return "status.rollout is unset: the operator has recorded no roll of it"
	case r.Phase != monoclev1alpha1.RolloutFailed:
		return fmt.Sprintf("status.rollout.phase is %s, not Failed", or(string(r.Phase), `""`))
	}
	return ""
}

// RolloutResume resumes the fleet rollout after the failed roll of Monocle name:
// RolloutResumeAnnotation set to the time now (RFC 3339), so the operator writes its
// templates again. It refuses (a Refusal) a Monocle whose roll is not Failed, on which the
// annotation would do nothing.
func (p *Plugin) RolloutResume(ctx context.Context, name string) error {
	m, err := p.get(ctx, name)
	if err != nil {
		return err
	}
	if why := notFailed(m); why != "" {
		return &Refusal{Monocle: name, Reason: why + ": the operator acts on " + monoclev1alpha1.RolloutResumeAnnotation + " only after a failed roll"}
	}
	return p.annotate(ctx, name, monoclev1alpha1.RolloutResumeAnnotation, p.now().UTC().Format(time.RFC3339))
}

// RolloutResumeAll is RolloutResume on every Monocle of the namespace, or of every namespace
// with allNamespaces, whose roll is Failed; it says so when there is none.
func (p *Plugin) RolloutResumeAll(ctx context.Context, allNamespaces bool) error {
	ns := p.namespaceOf(allNamespaces)
	list, err := p.Monocles.MonocleV1alpha1().Monocles(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	value := p.now().UTC().Format(time.RFC3339)
	resumed := 0
	for _, m := range list.Items {
		if notFailed(&m) != "" {
			continue
		}
		in := *p
		in.Namespace = m.Namespace
		if err := in.annotate(ctx, m.Name, monoclev1alpha1.RolloutResumeAnnotation, value); err != nil {
			return fmt.Errorf("Monocle %s/%s: %w", m.Namespace, m.Name, err)
		}
		resumed++
	}
	if resumed > 0 {
		return nil
	}
	if ns == "" {
		return p.printf("No Monocle's roll is Failed: nothing to resume\n")
	}
	return p.printf("No Monocle's roll is Failed in namespace %s: nothing to resume\n", ns)
}
