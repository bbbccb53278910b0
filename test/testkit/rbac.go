package testkit

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
)

// The operator's identity as deploy/ installs it: its namespace (deploy/00-namespace.yaml),
// where deploy/02-rbac.yaml puts its ServiceAccount and the Role of its leader election
// Lease.
const (
	// OperatorNamespace is the operator's namespace; run the operator with
	// --leader-election-namespace set to it, where the Lease's Role is.
	OperatorNamespace = "monocle-operator"
	// OperatorServiceAccount is the name of the operator's ServiceAccount.
	OperatorServiceAccount = "monocle-operator"
)

// OperatorRBACManifests are the files of deploy/ that InstallOperatorRBAC applies, relative
// to the repository's root: the operator's namespace, its ServiceAccount and roles, and the
// users' roles on Monocles that Kubernetes' view, edit and admin aggregate.
var OperatorRBACManifests = []string{"deploy/00-namespace.yaml", "deploy/02-rbac.yaml", "deploy/02-rbac-aggregated.yaml"}

// InstallOperatorRBAC applies OperatorRBACManifests as a user would (kubectl apply -f, as the
// admin), then waits up to 60 s until the API server's authorizer grants what they say: the
// ServiceAccount may watch Monocles in every namespace and update its Lease, and Kubernetes'
// "edit" ClusterRole has aggregated the right to create Monocles (the aggregation controller
// fills it in asynchronously), so that neither the operator nor a Tenant starts on a refusal.
// Its errors say which step failed and include kubectl's output.
func (e *Env) InstallOperatorRBAC(ctx context.Context) error {
	args := []string{"apply"}
	for _, f := range OperatorRBACManifests {
		args = append(args, "-f", f)
	}
	if out, err := e.Kubectl.Run(ctx, args...); err != nil {
		return fmt.Errorf("applying %v: %v: %s", OperatorRBACManifests, err, out)
	}
	serviceAccount := "system:serviceaccount:" + OperatorNamespace + ":" + OperatorServiceAccount
	checks := []authorizationv1.ResourceAttributes{
		{Verb: "watch", Group: "monocle.monocle.change-metrics.io", Resource: "monocles"},
		{Verb: "update", Group: "coordination.k8s.io", Resource: "leases", Namespace: OperatorNamespace, Name: "monocle-operator"},
	}
	return Poll(ctx, 100*time.Millisecond, 60*time.Second, "the operator's and the users' roles in force", func(ctx context.Context) error {
		for _, attrs := range checks {
			review := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{User: serviceAccount, ResourceAttributes: &attrs}}
			got, err := e.Kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, review, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			if !got.Status.Allowed {
				return fmt.Errorf("%s may not %s %s yet", serviceAccount, attrs.Verb, attrs.Resource)
			}
		}
		edit, err := e.Kube.RbacV1().ClusterRoles().Get(ctx, "edit", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, r := range edit.Rules {
			if slices.Contains(r.Resources, "monocles") && slices.Contains(r.Verbs, "create") {
				return nil
			}
		}
		return fmt.Errorf("the ClusterRole edit has not aggregated monocle-edit yet")
	})
}

// OperatorKubeconfig gets a token of the operator's ServiceAccount (OperatorServiceAccount in
// OperatorNamespace; InstallOperatorRBAC creates it) from the TokenRequest API, valid for
// valid, writes a kubeconfig that authenticates with it to the admin kubeconfig's server,
// with its CA, into a new file "operator-*.kubeconfig" of the work directory, and returns
// that file's path: run the operator with it to run it under the RBAC deploy/ ships. The
// local API server signs such tokens itself. It fails when the API server grants a shorter
// validity than valid.
func (e *Env) OperatorKubeconfig(ctx context.Context, valid time.Duration) (string, error) {
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(valid / time.Second))}}
	token, err := e.Kube.CoreV1().ServiceAccounts(OperatorNamespace).CreateToken(ctx, OperatorServiceAccount, request, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token of %s/%s: %w", OperatorNamespace, OperatorServiceAccount, err)
	}
	if until := token.Status.ExpirationTimestamp.Time; until.Before(time.Now().Add(valid - time.Minute)) {
		return "", fmt.Errorf("the token of %s/%s expires at %s, sooner than the %s asked", OperatorNamespace, OperatorServiceAccount, until, valid)
	}
	admin, err := clientcmd.LoadFromFile(e.Kubeconfig)
	if err != nil {
		return "", err
	}
	current := admin.Contexts[admin.CurrentContext]
	if current == nil || admin.Clusters[current.Cluster] == nil {
		return "", fmt.Errorf("%s: no cluster in its current context %q", e.Kubeconfig, admin.CurrentContext)
	}
	config := clientcmdapi.NewConfig()
	config.Clusters["local"] = admin.Clusters[current.Cluster]
	config.AuthInfos["operator"] = &clientcmdapi.AuthInfo{Token: token.Status.Token}
	config.Contexts["operator"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "operator"}
	config.CurrentContext = "operator"
	f, err := os.CreateTemp(e.WorkDir, "operator-*.kubeconfig")
	if err != nil {
		return "", err
	}
	path := f.Name()
	if err := f.Close(); err != nil {
		return "", err
	}
	return path, clientcmd.WriteToFile(*config, path)
}
