package testkit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/change-metrics/monocle-operator/pkg/resources"
)

// BinaryVersion runs the operator binary bin with --version and returns the release it
// reports ("monocle-operator <release> (commit …)"): the revision its fleet rollout writes
// into each Monocle's status.rollout.
func BinaryVersion(ctx context.Context, bin string) (string, error) {
	out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", bin, err, out)
	}
	fields := strings.Fields(string(out))
	if len(fields) < 2 || fields[0] != "monocle-operator" {
		return "", fmt.Errorf("%s --version printed %q, want \"monocle-operator <release> ...\"", bin, out)
	}
	return fields[1], nil
}

// PodUIDs returns the UIDs of the pods of namespaces as they are now, to tell the pods a
// roll makes afterwards from these (PodRolls).
func PodUIDs(ctx context.Context, kube kubernetes.Interface, namespaces ...string) (map[types.UID]bool, error) {
	uids := map[types.UID]bool{}
	for _, ns := range namespaces {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
		}
		for _, p := range pods.Items {
			uids[p.UID] = true
		}
	}
	return uids, nil
}

// PodRoll is the roll of one Monocle's workloads as its pods record it, to the precision of
// the API server's timestamps (seconds): from the creation of the first of its new pods to
// the moment the last of them turned Ready.
type PodRoll struct {
	// Monocle is the Monocle's "<namespace>/<name>".
	Monocle string
	// Start is the earliest creationTimestamp of its new pods; Ready the latest
	// lastTransitionTime of their Ready condition.
	Start, Ready time.Time
	// Pods are the new pods' names, sorted.
	Pods []string
}

// PodRolls reads the pods of namespaces that replaced those of before (PodUIDs): the pods of
// the Monocles' workloads (owned by a ReplicaSet or a StatefulSet, and labelled with the
// Monocle's name, resources.InstanceLabel) whose UID before does not hold, grouped by
// Monocle. A Monocle none of whose pods is new has no PodRoll. Its error names a new pod
// that is not Ready: the roll is not over.
func PodRolls(ctx context.Context, kube kubernetes.Interface, before map[types.UID]bool, namespaces ...string) (map[string]PodRoll, error) {
	rolls := map[string]PodRoll{}
	for _, ns := range namespaces {
		pods, err := kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: resources.InstanceLabel})
		if err != nil {
			return nil, fmt.Errorf("listing the pods of %s: %w", ns, err)
		}
		for _, p := range pods.Items {
			owner := metav1.GetControllerOf(&p)
			if before[p.UID] || owner == nil || (owner.Kind != "ReplicaSet" && owner.Kind != "StatefulSet") {
				continue
			}
			ready := readySince(&p)
			if ready.IsZero() {
				return nil, fmt.Errorf("pod %s/%s, made at %s, is not Ready", ns, p.Name, p.CreationTimestamp.UTC().Format(time.RFC3339))
			}
			key := ns + "/" + p.Labels[resources.InstanceLabel]
			r, seen := rolls[key]
			if !seen || p.CreationTimestamp.Time.Before(r.Start) {
				r.Start = p.CreationTimestamp.Time
			}
			if ready.After(r.Ready) {
				r.Ready = ready
			}
			r.Monocle = key
			r.Pods = append(r.Pods, p.Name)
			slices.Sort(r.Pods)
			rolls[key] = r
		}
	}
	return rolls, nil
}

// readySince is when pod's Ready condition last turned True; zero unless it is True.
func readySince(pod *corev1.Pod) time.Time {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return time.Time{}
}

// ConcurrentRolls splits rolls into the groups that ran at once: sorted by Start, a roll
// joins the group before it when it started before every roll of that group was Ready (at
// the same second counts as before, the timestamps' precision), and starts a new group
// otherwise. Within a group, rolls are sorted by Start, then Monocle.
func ConcurrentRolls(rolls []PodRoll) [][]PodRoll {
	sorted := slices.Clone(rolls)
	slices.SortFunc(sorted, func(a, b PodRoll) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.Monocle, b.Monocle))
	})
	var groups [][]PodRoll
	var end time.Time // the latest Ready of the last group
	for _, r := range sorted {
		if len(groups) > 0 && !r.Start.After(end) {
			groups[len(groups)-1] = append(groups[len(groups)-1], r)
		} else {
			groups = append(groups, []PodRoll{r})
		}
		if r.Ready.After(end) {
			end = r.Ready
		}
	}
	return groups
}

// RefusePods makes the API server refuse, in namespace, every pod created for which the CEL
// expression (a ValidatingAdmissionPolicy's validation, on `object`, the pod) is false, with
// message: a ValidatingAdmissionPolicy and its binding, both named name, as a cluster's
// policy engine would. It returns once the API server applies the policy (a server-side dry
// run of probe, a pod of namespace the expression refuses, is refused), and the function
// that deletes both objects.
func (e *Env) RefusePods(ctx context.Context, name, namespace, expression, message string, probe *corev1.Pod) (remove func(context.Context) error, err error) {
	admission := e.Kube.AdmissionregistrationV1()
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
						Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
							Resources: []string{"pods"}},
					},
				}},
			},
			Validations: []admissionregistrationv1.Validation{{Expression: expression, Message: message}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName: name,
			MatchResources: &admissionregistrationv1.MatchResources{NamespaceSelector: &metav1.LabelSelector{
				MatchLabels: map[string]string{corev1.LabelMetadataName: namespace},
			}},
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	remove = func(ctx context.Context) error {
		if err := admission.ValidatingAdmissionPolicyBindings().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting the ValidatingAdmissionPolicyBinding %s: %w", name, err)
		}
		if err := admission.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			return fmt.Errorf("deleting the ValidatingAdmissionPolicy %s: %w", name, err)
		}
		return nil
	}
	if _, err := admission.ValidatingAdmissionPolicies().Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the ValidatingAdmissionPolicy %s: %w", name, err)
	}
	if _, err := admission.ValidatingAdmissionPolicyBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		_ = admission.ValidatingAdmissionPolicies().Delete(ctx, name, metav1.DeleteOptions{})
		return nil, fmt.Errorf("creating the ValidatingAdmissionPolicyBinding %s: %w", name, err)
	}
	// The API server loads policies and bindings from its own informers.
	err = Poll(ctx, 250*time.Millisecond, time.Minute, "the policy "+name+" refusing pods in "+namespace, func(ctx context.Context) error {
		_, err := e.Kube.CoreV1().Pods(namespace).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return fmt.Errorf("the API server admitted pod %s", probe.Name)
		}
		if !strings.Contains(err.Error(), message) {
			return fmt.Errorf("refused, but not by the policy: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, remove(context.Background()))
	}
	return remove, nil
}
